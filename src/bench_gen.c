/* simengine-bench gen-source: writes the source of gen's step kernels (cuda/neurons_gen.c) for
 * synthetic classes, under the SE_GEN_* environment, for inspection: compile it with nvcc and read
 * its SASS (tools/gen_phases.py counts the instructions of each warp between barriers). No GPU
 * needed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef SIMENGINE_HAVE_CUDA
int se_bench_gen_source(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "simengine-bench gen-source: needs a build with CUDA (NVRTC)\n");
  return 2;
}
#else
#include "neurons_gen.h"
#include "neurons_impl.h"

static const char *usage =
    "Usage: simengine-bench gen-source --out DIR [options]\n"
    "\n"
    "Writes the CUDA source of the gen step kernels (one morphology each, 32 cells, width 32)\n"
    "of each synthetic class to DIR/CLASS.cu, with the generator's choices from the SE_GEN_*\n"
    "environment as the engine would make them (docs/gpu.md \"Knobs\"), and prints each file's\n"
    "size, its kernel's shared memory per block (and the literal table's room) and its partition\n"
    "line. The engine's rule that drops a second level of pieces whose compiled\n"
    "kernel spills more than SE_GEN_LEVEL_LOCAL bytes runs only on a GPU: here the source keeps\n"
    "what the partition offers. To see\n"
    "where the instructions go:\n"
    "  nvcc -cubin -lineinfo -arch=sm_90 --fmad=true --std=c++17 -Isrc DIR/big-low.cu -o b.cubin\n"
    "(--fmad=true as the engine compiles gen's kernels by default; --fmad=false with SE_GEN_FMAD=0)\n"
    "  nvdisasm -g b.cubin > b.sass\n"
    "  python3 tools/gen_phases.py DIR/big-low.cu b.sass\n"
    "\n"
    "Options:\n"
    "  --out DIR        directory for the sources (must exist)\n"
    "  --classes LIST   comma list (default small-low,small-high,medium-low,medium-high,big-low,big-high)\n";

/* Writes class cls's source to dir/cls.cu and prints its partition line. */
static int write_class(const char *cls, const char *dir, se_error *err) {
  se_morphology mo = {0};
  se_neuron_model m;
  se_neuron_model_init(&m);
  se_neurons_t e = NULL;
  char *src = NULL;
  int rc = se_morphology_synthetic(cls, 1, &mo, err);
  if (rc == SE_OK)
    rc = se_bench_model(&mo, 32, &m, err);
  se_neurons_options opt = se_neurons_default_options();
  opt.interleave_width = 32;
  if (rc == SE_OK)
    rc = se_neurons_create(&m, 0, m.n_cells, &opt, &e, err);
  const se_gen_options go = se_gen_options_from_env();
  if (rc == SE_OK)
    rc = se_neurons_gen_source(e, &go, &src, err);
  char path[4096];
  FILE *f = NULL;
  if (rc == SE_OK && snprintf(path, sizeof path, "%s/%s.cu", dir, cls) >= (int)sizeof path)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "the path %s/%s.cu is longer than %zu characters", dir, cls, sizeof path);
  if (rc == SE_OK && !(f = fopen(path, "w")))
    rc = se_error_set(err, SE_ERR_IO, __FILE__, __LINE__, __func__, "cannot write %s: %s", path,
                      strerror(errno));
  if (rc == SE_OK) {
    const size_t len = strlen(src);
    const int ok = fwrite(src, 1, len, f) == len;
    if (fclose(f) != 0 || !ok)
      rc = se_error_set(err, SE_ERR_IO, __FILE__, __LINE__, __func__, "writing %s failed", path);
  }
  if (rc == SE_OK) {
    const char *line = strstr(src, "// morphology ");
    const char *end = line ? strchr(line, '\n') : NULL;
    size_t table = 0;
    const size_t smem = se_neurons_gen_smem(e, 0, &go, &table);
    printf("%s: %zu B, shared memory per block %zu B + table %zu B, %.*s\n", path, strlen(src),
           smem, table, line && end ? (int)(end - line) : 0, line ? line : "");
  }
  free(src);
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
  se_morphology_free(&mo);
  return rc;
}

int se_bench_gen_source(int argc, char **argv) {
  const char *out = NULL,
             *classes = "small-low,small-high,medium-low,medium-high,big-low,big-high";
  const se_bench_opt opts[] = {{"--out", SE_BENCH_STRING, &out},
                               {"--classes", SE_BENCH_STRING, &classes}};
  const int parsed =
      se_bench_parse(argc, argv, "gen-source", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (!out) {
    fprintf(stderr, "simengine-bench gen-source: --out DIR is required\n%s", usage);
    return 2;
  }
  char *list = strdup(classes);
  if (!list) {
    fprintf(stderr, "simengine-bench gen-source: out of memory\n");
    return 1;
  }
  int rc = 0;
  for (char *save = NULL, *cls = strtok_r(list, ",", &save); cls && rc == 0;
       cls = strtok_r(NULL, ",", &save)) {
    se_error err = {0};
    if (write_class(cls, out, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench gen-source: %s: %s\n", cls, err.message);
      rc = 1;
    }
  }
  free(list);
  return rc;
}
#endif
