/* Test helper: every SWC morphology of a folder, discretised as simengine-prep does. */
#ifndef SE_TEST_SWC_H
#define SE_TEST_SWC_H

#include <dirent.h>
#include <string.h>

#include "se_test.h"
#include "swc.h"

/* Calls fn(ctx, file name, morphology) for every *.swc file of dir, loaded with the default
 * discretization and simengine-prep's biophysics (the morphology is freed after fn returns); a
 * folder that does not open or a file that does not load is a failed check. Returns how many
 * morphologies fn received. */
static inline int se_test_for_each_swc(se_test_state *st, const char *dir,
                                       void (*fn)(void *ctx, const char *name,
                                                  const se_morphology *m),
                                       void *ctx) {
  DIR *d = dir ? opendir(dir) : NULL;
  SE_EXPECT(st, d != NULL, "cannot open the morphology folder '%s'", dir ? dir : "(none)");
  if (!d)
    return 0;
  se_error err = {0};
  se_biophysics bio = {0};
  if (se_biophysics_alloc(&bio, 8, &err) != SE_OK) {
    SE_EXPECT(st, 0, "%s", err.message);
    closedir(d);
    return 0;
  }
  se_biophysics_set_prep_defaults(&bio);
  const se_discretization disc = se_discretization_default();
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    const size_t len = strlen(e->d_name);
    if (len <= 4 || strcmp(e->d_name + len - 4, ".swc") != 0)
      continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    se_morphology m;
    if (se_swc_load(path, &disc, &bio, &m, &err) != SE_OK) {
      SE_EXPECT(st, 0, "%s: %s", path, err.message);
      continue;
    }
    fn(ctx, e->d_name, &m);
    se_morphology_free(&m);
    n++;
  }
  closedir(d);
  se_biophysics_free(&bio);
  return n;
}

#endif
