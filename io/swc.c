/* SWC import (docs/morphologies.md): parse the NeuroMorpho columns, check the sample tree, build
 * one soma compartment and the sections, and cut each section into compartments with the
 * d_lambda and max-length rules. Every refusal names the file, the line(s) and the value. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "swc.h"

/* One SWC row. parent is the row index of the parent sample (-1 for a root). */
typedef struct swc_sample {
  long long id, parent_id;
  int32_t type;
  double x, y, z, r;
  long line;
  int32_t parent;
} swc_sample;

/* The parsed file: samples in file order, plus the tree built over them. */
typedef struct swc_file {
  const char *path;
  int32_t n;
  swc_sample *s;
  int32_t *by_id;     /* sample indices sorted by id */
  int32_t *child_ptr; /* children of i: child[child_ptr[i] .. child_ptr[i+1]-1], by ascending id */
  int32_t *child;
  int32_t root;
  unsigned char *soma; /* 1 for the samples of the soma compartment */
} swc_file;

/* A growable compartment list (the morphology under construction). */
typedef struct comp_list {
  int32_t n, cap;
  int32_t *parent, *region;
  double *length, *diameter;
} comp_list;

/* The points of one section: arc position and diameter, with the SWC line of each point. */
typedef struct section_points {
  int32_t n, cap;
  double *pos, *diam;
  long *line;
} section_points;

se_discretization se_discretization_default(void) {
  return (se_discretization){
      .max_length = 0.0, .d_lambda = 0.1, .frequency = 100.0, .min_radius = 0.0};
}

/* ---- parsing -------------------------------------------------------------------------------- */

/* Reads the whole file into a NUL-terminated buffer. */
static int read_file(const char *path, char **text, size_t *size, se_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    SE_FAIL(err, SE_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - 1 - n, f);
    if (n < cap - 1)
      break;
    cap *= 2;
    char *grown = realloc(buf, cap);
    if (!grown) {
      free(buf);
      buf = NULL;
    } else {
      buf = grown;
    }
  }
  int failed = ferror(f);
  fclose(f);
  if (!buf)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory reading the file", path);
  if (failed) {
    free(buf);
    SE_FAIL(err, SE_ERR_IO, "%s: read error", path);
  }
  buf[n] = '\0';
  *text = buf;
  *size = n;
  return SE_OK;
}

static const char *const field_names[7] = {"id", "type", "x", "y", "z", "radius", "parent"};

/* Parses an integer field (id, type, parent): an integer, or a decimal with an integral value
 * ("2.0", as some writers print every column; NEURON reads it as 2). */
static int parse_integer(const char *tok, const swc_file *f, long line, int field, long long *out,
                         se_error *err) {
  char *end;
  errno = 0;
  long long v = strtoll(tok, &end, 10);
  if (end != tok && *end != '\0') {
    double d = strtod(tok, &end);
    if (*end == '\0' && d == floor(d) && fabs(d) < 9.0e15) {
      v = (long long)d;
    } else {
      end = (char *)tok;
    }
  }
  if (end == tok || *end != '\0')
    SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: field %d (%s) is '%s', not an integer", f->path, line,
            field + 1, field_names[field], tok);
  if (errno == ERANGE)
    SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: field %d (%s) = %s is out of range", f->path, line,
            field + 1, field_names[field], tok);
  *out = v;
  return SE_OK;
}

/* Parses a real field (x, y, z, radius); refuses non-finite values. */
static int parse_real(const char *tok, const swc_file *f, long line, int field, double *out,
                      se_error *err) {
  char *end;
  double v = strtod(tok, &end);
  if (end == tok || *end != '\0')
    SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: field %d (%s) is '%s', not a number", f->path, line,
            field + 1, field_names[field], tok);
  if (!isfinite(v))
    SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: field %d (%s) = %s is not finite", f->path, line,
            field + 1, field_names[field], tok);
  *out = v;
  return SE_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Parses one data line (comment already cut off, NUL-terminated) into *s. */
static int parse_line(char *text, const swc_file *f, long line, swc_sample *s, se_error *err) {
  char *tok[8];
  int ntok = 0;
  char *p = text;
  while (*p) {
    while (is_space(*p))
      p++;
    if (!*p)
      break;
    if (ntok == 8)
      break;
    tok[ntok++] = p;
    while (*p && !is_space(*p))
      p++;
    if (*p)
      *p++ = '\0';
  }
  if (ntok < 7)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s line %ld: %d field%s, a sample needs 7 (id type x y z radius parent)", f->path,
            line, ntok, ntok == 1 ? "" : "s");
  if (ntok > 7)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s line %ld: more than 7 fields (extra '%s'); a sample has exactly 7 (id type x y z "
            "radius parent), comments start with #",
            f->path, line, tok[7]);
  long long type;
  SE_TRY(parse_integer(tok[0], f, line, 0, &s->id, err));
  SE_TRY(parse_integer(tok[1], f, line, 1, &type, err));
  SE_TRY(parse_real(tok[2], f, line, 2, &s->x, err));
  SE_TRY(parse_real(tok[3], f, line, 3, &s->y, err));
  SE_TRY(parse_real(tok[4], f, line, 4, &s->z, err));
  SE_TRY(parse_real(tok[5], f, line, 5, &s->r, err));
  SE_TRY(parse_integer(tok[6], f, line, 6, &s->parent_id, err));
  if (type < 0 || type > SE_MAX_REGION)
    SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: type %lld is not a region code in [0, %d]", f->path,
            line, type, SE_MAX_REGION);
  if (s->r < 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: sample %lld has a negative radius %g", f->path, line,
            s->id, s->r);
  if (!isfinite(2 * s->r))
    SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: sample %lld has radius %g, too large (its diameter is "
            "not finite)", f->path, line, s->id, s->r);
  s->type = (int32_t)type;
  s->line = line;
  s->parent = -1;
  return SE_OK;
}

/* Splits the text into lines, cuts comments and parses every data line into f->s. */
static int parse_text(char *text, size_t size, swc_file *f, se_error *err) {
  int32_t cap = 0;
  long line = 0;
  char *p = text, *end = text + size;
  while (p < end) {
    line++;
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *stop = nl ? nl : end;
    *stop = '\0';
    char *hash = strchr(p, '#');
    if (hash)
      *hash = '\0';
    char *q = p;
    while (is_space(*q))
      q++;
    if (*q) {
      if (f->n == cap) {
        if (cap > INT32_MAX / 2)
          SE_FAIL(err, SE_ERR_INPUT, "%s line %ld: too many samples", f->path, line);
        cap = cap ? 2 * cap : 1024;
        SE_REALLOC(err, f->s, cap, "the SWC samples");
      }
      SE_TRY(parse_line(q, f, line, &f->s[f->n], err));
      f->n++;
    }
    p = stop + 1;
  }
  if (f->n == 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: no samples (%ld line%s, all blank or comments)", f->path, line,
            line == 1 ? "" : "s");
  return SE_OK;
}

/* ---- the sample tree ------------------------------------------------------------------------ */

/* qsort over sample indices by id; a file-scope comparator needs the samples, so they travel in
 * a small array of (id, index) pairs instead. */
typedef struct id_index {
  long long id;
  int32_t index;
} id_index;

static int compare_id_index(const void *a, const void *b) {
  const id_index *x = a, *y = b;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Sorts the samples by id, refuses duplicates and resolves every parent id to a sample index. */
static int link_parents(swc_file *f, se_error *err) {
  id_index *order;
  SE_CALLOC(err, order, f->n, "the SWC id index");
  for (int32_t i = 0; i < f->n; i++)
    order[i] = (id_index){f->s[i].id, i};
  qsort(order, (size_t)f->n, sizeof *order, compare_id_index);
  int rc = SE_OK;
  for (int32_t k = 1; k < f->n; k++)
    if (order[k].id == order[k - 1].id) {
      const swc_sample *a = &f->s[order[k - 1].index], *b = &f->s[order[k].index];
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                   "%s lines %ld and %ld: both define sample id %lld (ids must be unique)", f->path,
                   a->line, b->line, a->id);
    }
  SE_CALLOC(err, f->by_id, f->n, "the SWC id index");
  for (int32_t k = 0; k < f->n; k++)
    f->by_id[k] = order[k].index;
  f->root = -1;
  int32_t first_root = -1;
  for (int32_t i = 0; i < f->n; i++) {
    swc_sample *s = &f->s[i];
    if (s->parent_id == -1) {
      if (first_root >= 0)
        SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                     "%s lines %ld and %ld: samples %lld and %lld both have parent -1 (several "
                     "roots: a soma or neurite connected to nothing else; a morphology must be "
                     "one tree)",
                     f->path, f->s[first_root].line, s->line, f->s[first_root].id, s->id);
      first_root = i;
      continue;
    }
    if (s->parent_id == s->id)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s line %ld: sample %lld names itself as parent",
                   f->path, s->line, s->id);
    id_index key = {s->parent_id, -1};
    size_t lo = 0, hi = (size_t)f->n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (order[mid].id < key.id)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == (size_t)f->n || order[lo].id != key.id)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                   "%s line %ld: sample %lld names parent %lld, which does not exist", f->path,
                   s->line, s->id, s->parent_id);
    s->parent = order[lo].index;
  }
  f->root = first_root;
done:
  free(order);
  return rc;
}

/* Builds the child lists (ascending id) and refuses samples the root does not reach (cycles). */
static int build_children(swc_file *f, se_error *err) {
  SE_CALLOC(err, f->child_ptr, (size_t)f->n + 1, "the SWC child lists");
  SE_CALLOC(err, f->child, f->n, "the SWC child lists");
  for (int32_t i = 0; i < f->n; i++)
    if (f->s[i].parent >= 0)
      f->child_ptr[f->s[i].parent + 1]++;
  for (int32_t i = 0; i < f->n; i++)
    f->child_ptr[i + 1] += f->child_ptr[i];
  int32_t *fill;
  SE_CALLOC(err, fill, f->n, "the SWC child lists");
  for (int32_t k = 0; k < f->n; k++) { /* by ascending id, so each list comes out sorted */
    int32_t i = f->by_id[k], p = f->s[i].parent;
    if (p >= 0)
      f->child[f->child_ptr[p] + fill[p]++] = i;
  }
  /* Reachability from the root, breadth first (fill is reused as the queue). */
  int32_t *queue = fill;
  unsigned char *seen = calloc((size_t)f->n, 1);
  if (!seen) {
    free(fill);
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory for the reachability check", f->path);
  }
  int32_t head = 0, tail = 0;
  if (f->root >= 0) {
    queue[tail++] = f->root;
    seen[f->root] = 1;
  }
  while (head < tail) {
    int32_t i = queue[head++];
    for (int32_t c = f->child_ptr[i]; c < f->child_ptr[i + 1]; c++) {
      seen[f->child[c]] = 1;
      queue[tail++] = f->child[c];
    }
  }
  int rc = SE_OK;
  if (tail < f->n) {
    /* The first unreached sample in file order leads, parent by parent, into a cycle. */
    int32_t start = 0;
    while (seen[start])
      start++;
    int32_t slow = start, fast = start;
    do {
      slow = f->s[slow].parent;
      fast = f->s[f->s[fast].parent].parent;
    } while (slow != fast);
    /* Report the cycle from its first sample in file order. */
    int32_t first = slow;
    for (int32_t i = f->s[slow].parent; i != slow; i = f->s[i].parent)
      if (i < first)
        first = i;
    char ids[512];
    size_t used = 0;
    int32_t i = first;
    do {
      int w = snprintf(ids + used, sizeof ids - used, "%s%lld", used ? " -> " : "", f->s[i].id);
      if (w < 0 || (size_t)w >= sizeof ids - used) {
        snprintf(ids + (sizeof ids - 5), 5, " ...");
        break;
      }
      used += (size_t)w;
      i = f->s[i].parent;
    } while (i != first);
    const swc_sample *s = &f->s[first];
    if (f->root < 0)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                   "%s line %ld: sample %lld lies on a cycle of parents (%s -> %lld) and no "
                   "sample has parent -1 (no root)",
                   f->path, s->line, s->id, ids, s->id);
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                 "%s line %ld: sample %lld lies on a cycle of parents (%s -> %lld), unreachable "
                 "from the root (sample %lld, line %ld)",
                 f->path, s->line, s->id, ids, s->id, f->s[f->root].id, f->s[f->root].line);
  }
done:
  free(seen);
  free(fill);
  return rc;
}

/* ---- geometry ------------------------------------------------------------------------------- */

static double distance(const swc_sample *a, const swc_sample *b) {
  double dx = a->x - b->x, dy = a->y - b->y, dz = a->z - b->z;
  return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Marks the soma (type-1 samples reached from a type-1 root through type-1 samples) and computes
 * its cylinder: length = sum of the soma segment lengths, diameter = lateral area / (pi length);
 * a one-point soma (or one of length 0) is a cylinder of length = diameter = 2 r. */
static int build_soma(swc_file *f, double *length, double *diameter, se_error *err) {
  SE_CALLOC(err, f->soma, f->n, "the soma mark");
  const swc_sample *root = &f->s[f->root];
  if (root->type != 1)
    return SE_OK;
  double len = 0, area = 0;
  int32_t *stack;
  SE_CALLOC(err, stack, f->n, "the soma walk");
  int32_t top = 0;
  stack[top++] = f->root;
  f->soma[f->root] = 1;
  while (top > 0) {
    int32_t i = stack[--top];
    for (int32_t c = f->child_ptr[i]; c < f->child_ptr[i + 1]; c++) {
      int32_t k = f->child[c];
      if (f->s[k].type != 1)
        continue;
      f->soma[k] = 1;
      stack[top++] = k;
      double h = distance(&f->s[i], &f->s[k]), r1 = f->s[i].r, r2 = f->s[k].r;
      len += h;
      area += M_PI * (r1 + r2) * sqrt((r1 - r2) * (r1 - r2) + h * h);
    }
  }
  free(stack);
  if (len > 0) {
    *length = len;
    *diameter = area / (M_PI * len);
  } else {
    *length = *diameter = 2 * root->r;
  }
  if (!isfinite(area) || !isfinite(*length) || !isfinite(*diameter))
    SE_FAIL(err, SE_ERR_INPUT,
            "%s line %ld: the soma (root sample %lld) would have length %g um and diameter %g um: "
            "its coordinates or radii are out of range",
            f->path, root->line, root->id, *length, *diameter);
  if (!(*diameter > 0) || !(*length > 0))
    SE_FAIL(err, SE_ERR_INPUT,
            "%s line %ld: the soma (root sample %lld, radius %g) has zero diameter; raise the "
            "radius or ask for repair (min_radius)",
            f->path, root->line, root->id, root->r);
  return SE_OK;
}

static int points_push(section_points *pts, double pos, double diam, long line, se_error *err) {
  if (pts->n == pts->cap) {
    int32_t cap = pts->cap ? 2 * pts->cap : 64;
    SE_REALLOC(err, pts->pos, cap, "section points");
    SE_REALLOC(err, pts->diam, cap, "section points");
    SE_REALLOC(err, pts->line, cap, "section points");
    pts->cap = cap;
  }
  pts->pos[pts->n] = pos;
  pts->diam[pts->n] = diam;
  pts->line[pts->n] = line;
  pts->n++;
  return SE_OK;
}

/* Integral of the piecewise-linear diameter from the section start to arc position x. */
static double diameter_integral(const section_points *pts, double x) {
  double sum = 0;
  for (int32_t k = 1; k < pts->n; k++) {
    double a = pts->pos[k - 1], b = pts->pos[k];
    if (b <= a)
      continue;
    double da = pts->diam[k - 1], db = pts->diam[k];
    if (x >= b) {
      sum += 0.5 * (da + db) * (b - a);
    } else {
      if (x > a) {
        double dx = da + (db - da) * (x - a) / (b - a);
        sum += 0.5 * (da + dx) * (x - a);
      }
      break;
    }
  }
  return sum;
}

/* The most compartments one section may be cut into: more means a wrong coordinate (or a
 * discretisation far finer than any simulation needs), and would only exhaust the memory. */
#define SWC_MAX_SECTION_COMPARTMENTS 1000000

/* Number of compartments of a section of length L and mean diameter diam (um), region region
 * (the rules' count, not limited: see SWC_MAX_SECTION_COMPARTMENTS). */
static double section_nseg(double L, double diam, int32_t region, const se_discretization *disc,
                           const se_biophysics *bio) {
  double n = 1;
  if (disc->d_lambda > 0 && disc->frequency > 0) {
    int known = bio && region < bio->n_regions;
    double ra = known ? bio->ra[region] : SE_DEFAULT_RA;
    double cm = known ? bio->cm[region] : SE_DEFAULT_CM;
    double lambda = 1e5 * sqrt(diam / (4 * M_PI * disc->frequency * ra * cm));
    double rule = floor((L / (disc->d_lambda * lambda) + 0.9) / 2) * 2 + 1;
    if (rule > n)
      n = rule;
  }
  if (disc->max_length > 0) {
    double rule = ceil(L / disc->max_length - 1e-9);
    if (rule > n)
      n = rule;
  }
  return n;
}

static int comps_push(comp_list *c, int32_t parent, double length, double diameter, int32_t region,
                      se_error *err) {
  if (c->n == c->cap) {
    if (c->cap > INT32_MAX / 4)
      SE_FAIL(err, SE_ERR_INPUT, "more than %d compartments", c->cap);
    int32_t cap = c->cap ? 2 * c->cap : 256;
    SE_REALLOC(err, c->parent, cap, "compartments");
    SE_REALLOC(err, c->region, cap, "compartments");
    SE_REALLOC(err, c->length, cap, "compartments");
    SE_REALLOC(err, c->diameter, cap, "compartments");
    c->cap = cap;
  }
  c->parent[c->n] = parent;
  c->length[c->n] = length;
  c->diameter[c->n] = diameter;
  c->region[c->n] = region;
  c->n++;
  return SE_OK;
}

/* Last sample of the section that starts at sample first: follow single children of the same
 * type until a tip, a branch point or a change of type. */
static int32_t section_end(const swc_file *f, int32_t first) {
  int32_t i = first;
  while (f->child_ptr[i + 1] - f->child_ptr[i] == 1 &&
         f->s[f->child[f->child_ptr[i]]].type == f->s[first].type)
    i = f->child[f->child_ptr[i]];
  return i;
}

/* Collects the points of the section first..last (arc positions from its proximal end). */
static int section_collect(const swc_file *f, int32_t first, int32_t last, section_points *pts,
                           se_error *err) {
  pts->n = 0;
  int32_t *chain;
  int32_t count = 0;
  for (int32_t i = last;; i = f->s[i].parent) {
    count++;
    if (i == first)
      break;
  }
  SE_CALLOC(err, chain, count, "a section");
  int32_t k = count;
  for (int32_t i = last;; i = f->s[i].parent) {
    chain[--k] = i;
    if (i == first)
      break;
  }
  const swc_sample *s1 = &f->s[first];
  int32_t p = s1->parent;
  int rc = SE_OK;
  /* A section leaving a branch point, a change of type or a non-soma root starts at that
   * sample's position and radius; one leaving the soma starts at its own first sample, unless
   * its own samples span no length (then, as NEURON and Arbor do for a one-sample sub-tree, it
   * starts at the soma sample with the radius of its first sample). */
  double own = 0;
  for (int32_t j = 1; j < count; j++)
    own += distance(&f->s[chain[j - 1]], &f->s[chain[j]]);
  double pos = 0;
  const swc_sample *prev = NULL;
  if (!f->soma[p]) {
    prev = &f->s[p];
    SE_TRY_GOTO(rc, done, points_push(pts, 0, 2 * prev->r, prev->line, err));
  } else if (own == 0) {
    prev = &f->s[p];
    SE_TRY_GOTO(rc, done, points_push(pts, 0, 2 * s1->r, s1->line, err));
  }
  for (int32_t j = 0; j < count; j++) {
    const swc_sample *s = &f->s[chain[j]];
    if (prev)
      pos += distance(prev, s);
    if (!isfinite(pos))
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                   "%s line %ld: sample %lld lies %g um from the previous point of its section "
                   "(line %ld): the coordinates are too large (the section's length is not finite)",
                   f->path, s->line, s->id, distance(prev, s), prev->line);
    SE_TRY_GOTO(rc, done, points_push(pts, pos, 2 * s->r, s->line, err));
    prev = s;
  }
  if (pts->n == count + 1 && f->soma[p] && s1->r == 0)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                 "%s line %ld: sample %lld leaves the soma with radius 0 and no length of its "
                 "own: a segment of zero diameter; fix the radius or ask for repair (min_radius)",
                 f->path, s1->line, s1->id);
  for (int32_t j = 1; j < pts->n; j++)
    if (pts->diam[j - 1] == 0 && pts->diam[j] == 0)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                   "%s line %ld: sample %lld has radius 0 and so has its parent (line %ld): a "
                   "segment of zero diameter; fix the radii or ask for repair (min_radius)",
                   f->path, pts->line[j], f->s[chain[j - (pts->n - count)]].id, pts->line[j - 1]);
  if (!(pos > 0) && first == last)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                 "%s line %ld: sample %lld lies at the position of its parent %lld (line %ld) and "
                 "makes a section on its own: a section of zero length",
                 f->path, s1->line, s1->id, f->s[p].id, f->s[p].line);
  if (!(pos > 0))
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                 "%s line %ld: the section of samples %lld .. %lld (lines %ld .. %ld) has zero "
                 "length: all its samples lie at one position",
                 f->path, s1->line, s1->id, f->s[last].id, s1->line, f->s[last].line);
done:
  free(chain);
  return rc;
}

/* Cuts one section into compartments appended to comps; the first one's parent is parent. path
 * names the SWC file in messages. */
static int section_discretize(const char *path, const section_points *pts, int32_t region,
                              int32_t parent, const se_discretization *disc,
                              const se_biophysics *bio, comp_list *comps, se_error *err) {
  double L = pts->pos[pts->n - 1];
  double total = diameter_integral(pts, L);
  long first_line = pts->line[0], last_line = pts->line[pts->n - 1];
  double rule = section_nseg(L, total / L, region, disc, bio);
  if (!(rule <= SWC_MAX_SECTION_COMPARTMENTS))
    SE_FAIL(err, SE_ERR_INPUT,
            "%s lines %ld .. %ld: the section is %g um long and would be cut into %g compartments, "
            "more than %d: a coordinate is wrong, or the discretisation (d_lambda, max_length) "
            "is far too fine",
            path, first_line, last_line, L, rule, SWC_MAX_SECTION_COMPARTMENTS);
  int32_t nseg = (int32_t)rule;
  double h = L / nseg, lo = 0, ilo = 0;
  for (int32_t j = 0; j < nseg; j++) {
    double hi = j + 1 == nseg ? L : (j + 1) * h;
    double ihi = j + 1 == nseg ? total : diameter_integral(pts, hi);
    double diam = (ihi - ilo) / (hi - lo);
    if (!isfinite(diam) || !(diam > 0) || !(h > 0))
      SE_FAIL(err, SE_ERR_INPUT,
              "%s lines %ld .. %ld: compartment %d of the section would have length %g um and "
              "diameter %g um: its radii or coordinates are out of range",
              path, first_line, last_line, j, h, diam);
    SE_TRY(comps_push(comps, j == 0 ? parent : comps->n - 1, h, diam, region, err));
    lo = hi;
    ilo = ihi;
  }
  return SE_OK;
}

/* A section waiting to be numbered: its first sample and the compartment it hangs from. */
typedef struct pending_section {
  int32_t first, parent;
} pending_section;

/* Numbers the sections depth first (children by ascending id of their first sample), so that
 * parents precede children and each section's compartments are contiguous. */
static int build_compartments(const swc_file *f, double soma_length, double soma_diameter,
                              const se_discretization *disc, const se_biophysics *bio,
                              comp_list *comps, int32_t *n_sections, se_error *err) {
  int rc = SE_OK;
  pending_section *stack;
  SE_CALLOC(err, stack, f->n, "the section walk");
  int32_t *starts;
  SE_CALLOC(err, starts, f->n, "the section walk");
  section_points pts = {0};
  int32_t top = 0, n_starts = 0;
  int has_soma = f->soma[f->root];
  if (has_soma) {
    SE_TRY_GOTO(rc, done, comps_push(comps, -1, soma_length, soma_diameter, 1, err));
    for (int32_t k = 0; k < f->n; k++) {
      int32_t i = f->by_id[k], p = f->s[i].parent;
      if (p >= 0 && f->soma[p] && !f->soma[i])
        starts[n_starts++] = i;
    }
  } else {
    for (int32_t c = f->child_ptr[f->root]; c < f->child_ptr[f->root + 1]; c++)
      starts[n_starts++] = f->child[c];
    if (n_starts == 0)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT,
                   "%s line %ld: the only sample (%lld, type %d) is not a soma (type 1): a "
                   "morphology of zero length",
                   f->path, f->s[f->root].line, f->s[f->root].id, f->s[f->root].type);
  }
  /* Without a soma the first section leaving the root starts at compartment 0 (parent -1), the
   * others hang from compartment 0. */
  for (int32_t k = n_starts - 1; k >= 0; k--)
    stack[top++] = (pending_section){starts[k], (has_soma || k > 0) ? 0 : -1};
  *n_sections = 0;
  while (top > 0) {
    pending_section ps = stack[--top];
    int32_t last = section_end(f, ps.first);
    SE_TRY_GOTO(rc, done, section_collect(f, ps.first, last, &pts, err));
    SE_TRY_GOTO(rc, done,
                section_discretize(f->path, &pts, f->s[ps.first].type, ps.parent, disc, bio,
                                   comps, err));
    (*n_sections)++;
    int32_t end_comp = comps->n - 1;
    for (int32_t c = f->child_ptr[last + 1] - 1; c >= f->child_ptr[last]; c--)
      stack[top++] = (pending_section){f->child[c], end_comp};
  }
done:
  free(pts.pos);
  free(pts.diam);
  free(pts.line);
  free(starts);
  free(stack);
  return rc;
}

/* Raises radii below min_radius (repair on request). */
static void repair_radii(swc_file *f, double min_radius) {
  for (int32_t i = 0; i < f->n; i++)
    if (f->s[i].r < min_radius)
      f->s[i].r = min_radius;
}

int se_swc_load(const char *path, const se_discretization *disc, const se_biophysics *bio,
                se_morphology *morph, se_error *err) {
  if (!path || !disc || !morph)
    SE_FAIL(err, SE_ERR_ARG, "se_swc_load: path, disc and morph must not be NULL");
  if (!(disc->max_length >= 0) || !(disc->d_lambda >= 0) || !(disc->min_radius >= 0) ||
      (disc->d_lambda > 0 && !(disc->frequency > 0)))
    SE_FAIL(err, SE_ERR_ARG,
            "%s: bad discretization (max_length %g, d_lambda %g, frequency %g, min_radius %g): "
            "each must be >= 0, and frequency > 0 when d_lambda > 0",
            path, disc->max_length, disc->d_lambda, disc->frequency, disc->min_radius);
  memset(morph, 0, sizeof *morph);
  swc_file f = {.path = path, .root = -1};
  comp_list comps = {0};
  char *text = NULL;
  size_t size = 0;
  int rc = SE_OK;
  SE_TRY_GOTO(rc, done, read_file(path, &text, &size, err));
  SE_TRY_GOTO(rc, done, parse_text(text, size, &f, err));
  if (disc->min_radius > 0)
    repair_radii(&f, disc->min_radius);
  SE_TRY_GOTO(rc, done, link_parents(&f, err));
  SE_TRY_GOTO(rc, done, build_children(&f, err));
  double soma_length = 0, soma_diameter = 0;
  SE_TRY_GOTO(rc, done, build_soma(&f, &soma_length, &soma_diameter, err));
  int32_t n_sections = 0;
  SE_TRY_GOTO(
      rc, done,
      build_compartments(&f, soma_length, soma_diameter, disc, bio, &comps, &n_sections, err));
  morph->n_compartments = comps.n;
  morph->parent = comps.parent;
  morph->length = comps.length;
  morph->diameter = comps.diameter;
  morph->region = comps.region;
  morph->n_branches = n_sections + (f.soma[f.root] ? 1 : 0);
  comps = (comp_list){0};
done:
  free(comps.parent);
  free(comps.length);
  free(comps.diameter);
  free(comps.region);
  free(text);
  free(f.s);
  free(f.by_id);
  free(f.child_ptr);
  free(f.child);
  free(f.soma);
  return rc;
}
