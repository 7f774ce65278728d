/* The six synthetic morphology classes of paper 000, Table 1 (docs/morphologies.md): a soma
 * compartment, one unbranched axon and binary dendritic trees, with exactly the table's numbers
 * of compartments and branches (the soma counts as one branch). Deterministic given the seed:
 * the generator is a local splitmix64, never rand(). */
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "swc.h"
#include "se_random.h"

typedef struct synthetic_class {
  const char *name;
  int32_t compartments, branches;
} synthetic_class;

static const synthetic_class classes[] = {
    {"small-low", 76, 7},      {"small-high", 76, 29}, {"medium-low", 305, 30},
    {"medium-high", 319, 157}, {"big-low", 695, 66},   {"big-high", 691, 341},
};

/* Uniform integer in [0, n). */
static int32_t rng_below(uint64_t *state, int32_t n) {
  return (int32_t)(se_rand_next(state) % (uint64_t)n);
}

/* One section of the synthetic tree. */
typedef struct synthetic_section {
  int32_t parent;        /* section index, -1 for the soma */
  int32_t child[2];      /* -1 where absent */
  int32_t region;        /* 2 axon, 3 dendrite */
  int32_t nseg;          /* compartments */
  double seg_length;     /* um, each compartment */
  double d_start, d_end; /* um, linear taper along the section */
} synthetic_section;

static double clamp(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* Scratch arrays of one build, each with room for every section. */
typedef struct synthetic_work {
  int32_t *roots, *leaves; /* sections hanging from the soma; dendritic tips */
  double *weight;          /* share of the compartments */
  int32_t *stack_section, *stack_hang;
} synthetic_work;

/* Builds the section tree: section 0 is the axon, then k dendrite roots; random tips split in
 * two until there are n_sections sections. Returns the number of roots. */
static int32_t grow_tree(synthetic_section *sec, int32_t n_sections, synthetic_work *w,
                         uint64_t *rng) {
  int32_t dend = n_sections - 1;
  /* Number of dendritic roots: 2..5 of the parity of dend (each split adds two sections). */
  int32_t cand[4], nc = 0;
  for (int32_t k = 2; k <= 5 && k <= dend; k++)
    if ((dend - k) % 2 == 0)
      cand[nc++] = k;
  int32_t k = nc ? cand[rng_below(rng, nc)] : dend;
  for (int32_t i = 0; i < n_sections; i++)
    sec[i] = (synthetic_section){.parent = -1, .child = {-1, -1}, .region = 3};
  sec[0].region = 2;
  for (int32_t i = 0; i <= k; i++)
    w->roots[i] = i;
  for (int32_t i = 0; i < k; i++)
    w->leaves[i] = 1 + i;
  int32_t n = 1 + k, n_leaves = k;
  while (n + 2 <= n_sections) {
    int32_t pick = rng_below(rng, n_leaves), leaf = w->leaves[pick];
    for (int32_t c = 0; c < 2; c++) {
      sec[n].parent = leaf;
      sec[leaf].child[c] = n;
      n++;
    }
    w->leaves[pick] = n - 2;
    w->leaves[n_leaves++] = n - 1;
  }
  return 1 + k;
}

/* Shares n_comp compartments among the sections, at least one each, with random weights (the
 * axon's twice as large). */
static void share_compartments(synthetic_section *sec, int32_t n_sections, int32_t n_comp,
                               double *weight, uint64_t *rng) {
  double total = 0;
  int32_t extra = n_comp - n_sections, given = 0;
  for (int32_t i = 0; i < n_sections; i++) {
    weight[i] = se_rand_uniform(rng, 0.5, 1.5) * (sec[i].region == 2 ? 2.0 : 1.0);
    total += weight[i];
  }
  for (int32_t i = 0; i < n_sections; i++) {
    sec[i].nseg = 1 + (int32_t)((double)extra * weight[i] / total);
    given += sec[i].nseg - 1;
  }
  while (given < extra) {
    sec[rng_below(rng, n_sections)].nseg++;
    given++;
  }
}

/* Lengths and tapering diameters: compartments 10-30 um, diameters 0.3-3 um shrinking away from
 * the soma (axon about 1 um). Parents come before children in index order. */
static void shape_sections(synthetic_section *sec, int32_t n_sections, uint64_t *rng) {
  for (int32_t i = 0; i < n_sections; i++) {
    synthetic_section *s = &sec[i];
    s->seg_length = se_rand_uniform(rng, 10.0, 30.0);
    if (s->region == 2)
      s->d_start = se_rand_uniform(rng, 0.9, 1.2);
    else if (s->parent < 0)
      s->d_start = se_rand_uniform(rng, 2.0, 3.0);
    else
      s->d_start = clamp(sec[s->parent].d_end * se_rand_uniform(rng, 0.7, 0.85), 0.3, 3.0);
    s->d_end = clamp(s->d_start * se_rand_uniform(rng, 0.75, 0.95), 0.3, 3.0);
  }
}

/* Numbers the compartments: the soma (20 um x 20 um cylinder) is 0, then the sections depth
 * first, so parents come before children and each section is contiguous. */
static void number_compartments(const synthetic_section *sec, int32_t n_roots, synthetic_work *w,
                                se_morphology *morph) {
  morph->parent[0] = -1;
  morph->length[0] = 20.0;
  morph->diameter[0] = 20.0;
  morph->region[0] = 1;
  int32_t c = 1, top = 0;
  for (int32_t r = n_roots - 1; r >= 0; r--) {
    w->stack_section[top] = w->roots[r];
    w->stack_hang[top++] = 0;
  }
  while (top > 0) {
    top--;
    const synthetic_section *s = &sec[w->stack_section[top]];
    int32_t from = w->stack_hang[top];
    for (int32_t j = 0; j < s->nseg; j++, c++) {
      double x = (j + 0.5) / s->nseg;
      morph->parent[c] = j == 0 ? from : c - 1;
      morph->length[c] = s->seg_length;
      morph->diameter[c] = s->d_start + (s->d_end - s->d_start) * x;
      morph->region[c] = s->region;
    }
    for (int32_t k = 1; k >= 0; k--)
      if (s->child[k] >= 0) {
        w->stack_section[top] = s->child[k];
        w->stack_hang[top++] = c - 1;
      }
  }
}

int se_morphology_synthetic(const char *name, uint64_t seed, se_morphology *morph, se_error *err) {
  if (!name || !morph)
    SE_FAIL(err, SE_ERR_ARG, "se_morphology_synthetic: name and morph must not be NULL");
  const synthetic_class *cls = NULL;
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
    if (strcmp(name, classes[i].name) == 0)
      cls = &classes[i];
  if (!cls)
    SE_FAIL(err, SE_ERR_ARG,
            "unknown synthetic morphology class '%s' (known: small-low, small-high, medium-low, "
            "medium-high, big-low, big-high)",
            name);
  memset(morph, 0, sizeof *morph);
  int32_t n_sections = cls->branches - 1, n_comp = cls->compartments;
  size_t ns = (size_t)n_sections;
  synthetic_section *sec = calloc(ns, sizeof *sec);
  synthetic_work w = {
      .roots = calloc(ns, sizeof(int32_t)),
      .leaves = calloc(ns, sizeof(int32_t)),
      .weight = calloc(ns, sizeof(double)),
      .stack_section = calloc(ns, sizeof(int32_t)),
      .stack_hang = calloc(ns, sizeof(int32_t)),
  };
  morph->parent = calloc((size_t)n_comp, sizeof *morph->parent);
  morph->region = calloc((size_t)n_comp, sizeof *morph->region);
  morph->length = calloc((size_t)n_comp, sizeof *morph->length);
  morph->diameter = calloc((size_t)n_comp, sizeof *morph->diameter);
  int rc = SE_OK;
  if (!sec || !w.roots || !w.leaves || !w.weight || !w.stack_section || !w.stack_hang ||
      !morph->parent || !morph->region || !morph->length || !morph->diameter) {
    se_morphology_free(morph);
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM,
                 "out of memory building synthetic class %s (%d compartments)", name, n_comp);
  }
  uint64_t rng = seed;
  int32_t n_roots = grow_tree(sec, n_sections, &w, &rng);
  share_compartments(sec, n_sections, n_comp - 1, w.weight, &rng);
  shape_sections(sec, n_sections, &rng);
  number_compartments(sec, n_roots, &w, morph);
  morph->n_compartments = n_comp;
  morph->n_branches = cls->branches;
done:
  free(sec);
  free(w.roots);
  free(w.leaves);
  free(w.weight);
  free(w.stack_section);
  free(w.stack_hang);
  return rc;
}
