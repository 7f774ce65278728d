#include <stdio.h>
#include <string.h>

#include "h5_util.h"

typedef struct walk_buffer {
  char *buf;
  size_t size;
} walk_buffer;

static herr_t keep_innermost(unsigned n, const H5E_error2_t *e, void *data) {
  walk_buffer *w = data;
  if (n == 0 && e->desc)
    snprintf(w->buf, w->size, "%s", e->desc);
  return 0;
}

void se_h5_error_string(char *buf, size_t size) {
  if (!buf || size == 0)
    return;
  buf[0] = '\0';
  walk_buffer w = {buf, size};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &w);
}
