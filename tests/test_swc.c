/* SWC import and synthetic morphology classes (docs/morphologies.md).
 * Usage: test_swc DATA_DIR (the project's data/ folder). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "se_test.h"
#include "swc.h"

/* A temporary folder for the hand-written cases, emptied at the end. */
typedef struct scratch {
  char dir[256];
  char files[64][320];
  int n;
} scratch;

static const char *scratch_write(scratch *s, const char *name, const char *text) {
  if (s->n == (int)(sizeof s->files / sizeof s->files[0])) {
    fprintf(stderr, "scratch: more than %d files\n", s->n);
    exit(1);
  }
  char buf[sizeof s->files[0]];
  snprintf(buf, sizeof buf, "%s/%s", s->dir, name);
  char *path = s->files[s->n++];
  memcpy(path, buf, sizeof buf);
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
  return path;
}

static void scratch_clean(scratch *s) {
  for (int i = 0; i < s->n; i++)
    remove(s->files[i]);
  rmdir(s->dir);
}

/* Default discretization without the d_lambda rule: one compartment per section unless a
 * test asks for more. */
static se_discretization one_per_section(void) {
  se_discretization d = se_discretization_default();
  d.d_lambda = 0;
  return d;
}

/* Structural checks of a compartment tree built with a soma at 0: parent[i] < i, positive
 * sizes, each section contiguous (a compartment that does not start a section follows its
 * parent directly) and as many sections + 1 as n_branches. Returns the number of sections. */
static int check_tree(se_test_state *st, const se_morphology *m, const char *what, int has_soma) {
  int n = m->n_compartments;
  SE_EXPECT(st, n > 0, "%s: no compartments", what);
  if (n <= 0)
    return 0;
  SE_EXPECT(st, m->parent[0] == -1, "%s: parent[0] = %d", what, m->parent[0]);
  int *nchild = calloc((size_t)n, sizeof *nchild);
  int bad_order = 0, bad_size = 0, bad_contig = 0, sections = has_soma ? 0 : 1;
  for (int i = 1; i < n; i++) {
    if (m->parent[i] < 0 || m->parent[i] >= i) {
      bad_order++;
      continue;
    }
    nchild[m->parent[i]]++;
  }
  for (int i = 0; i < n; i++)
    if (!(m->length[i] > 0) || !(m->diameter[i] > 0) || !isfinite(m->length[i]) ||
        !isfinite(m->diameter[i]))
      bad_size++;
  for (int i = 1; i < n && !bad_order; i++) {
    int p = m->parent[i];
    int starts = (has_soma && p == 0) || nchild[p] >= 2 || m->region[p] != m->region[i];
    if (starts)
      sections++;
    else if (p != i - 1)
      bad_contig++;
  }
  SE_EXPECT(st, bad_order == 0, "%s: %d compartments with parent not < index", what, bad_order);
  SE_EXPECT(st, bad_size == 0, "%s: %d compartments with a bad length or diameter", what, bad_size);
  SE_EXPECT(st, bad_contig == 0, "%s: %d compartments break the contiguity of their section", what,
            bad_contig);
  if (has_soma)
    SE_EXPECT(st, sections + 1 == m->n_branches, "%s: %d sections + soma, n_branches %d", what,
              sections, m->n_branches);
  free(nchild);
  return sections;
}

/* Loads path and expects success. */
static int load_ok(se_test_state *st, const char *path, const se_discretization *d,
                   const se_biophysics *bio, se_morphology *m) {
  se_error err = {0};
  int rc = se_swc_load(path, d, bio, m, &err);
  SE_EXPECT(st, rc == SE_OK, "%s refused: %s", path, err.message);
  return rc == SE_OK;
}

/* Loads path and expects a refusal (input error) whose message holds each of the strings. */
static void load_refused(se_test_state *st, const char *path, const se_discretization *d,
                         const char *s1, const char *s2) {
  se_error err = {0};
  se_morphology m;
  int rc = se_swc_load(path, d, NULL, &m, &err);
  SE_EXPECT(st, rc == SE_ERR_INPUT, "%s accepted (rc %d), expected a refusal naming '%s'", path, rc,
            s1);
  if (rc == SE_OK) {
    se_morphology_free(&m);
    return;
  }
  SE_EXPECT(st, strstr(err.message, path) != NULL, "%s: message does not name the file: %s", path,
            err.message);
  SE_EXPECT(st, strstr(err.message, s1) != NULL, "%s: message lacks '%s': %s", path, s1,
            err.message);
  if (s2)
    SE_EXPECT(st, strstr(err.message, s2) != NULL, "%s: message lacks '%s': %s", path, s2,
              err.message);
  printf("  refused as expected: %s\n", err.message);
}

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

/* 1 when a and b are the same compartment tree, value for value. */
static int same_morphology(const se_morphology *a, const se_morphology *b) {
  int same = a->n_compartments == b->n_compartments && a->n_branches == b->n_branches;
  for (int i = 0; same && i < a->n_compartments; i++)
    same = a->parent[i] == b->parent[i] && a->length[i] == b->length[i] &&
           a->diameter[i] == b->diameter[i] && a->region[i] == b->region[i];
  return same;
}

/* Loads path and expects success and `expect` compartments; what names the case. */
static void expect_compartments(se_test_state *st, const char *what, const char *path,
                                const se_discretization *d, const se_biophysics *bio, int expect) {
  se_morphology m;
  if (!load_ok(st, path, d, bio, &m))
    return;
  SE_EXPECT(st, m.n_compartments == expect, "%s: %d compartments, expected %d", what,
            m.n_compartments, expect);
  se_morphology_free(&m);
}

/* The files of data/morphologies/malformed, each decided as NEURON or Arbor users expect. */
static void test_malformed(se_test_state *st, const char *data) {
  se_discretization d = se_discretization_default();
  char path[512];
  struct {
    const char *file, *s1, *s2;
  } refused[] = {
      {"Neuron_missing_ids.swc", "line 42:", "names parent 7, which does not exist"},
      {"repeated_id.swc", "lines 5 and 6:", "sample id 4"},
      {"multiple_soma.swc", "lines 2 and 11:", "both have parent -1"},
      {"disconnected_neurite.swc", "lines 1 and 10:", "both have parent -1"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    snprintf(path, sizeof path, "%s/morphologies/malformed/%s", data, refused[i].file);
    load_refused(st, path, &d, refused[i].s1, refused[i].s2);
  }
  const char *accepted[] = {"sample_disordered.swc", "custom_type.swc",
                            "no_soma.swc",           "simple-windows-eol.swc",
                            "soma_cylinders.swc",    "Neuron_zero_radius.swc"};
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
    snprintf(path, sizeof path, "%s/morphologies/malformed/%s", data, accepted[i]);
    se_morphology m;
    if (!load_ok(st, path, &d, NULL, &m))
      continue;
    check_tree(st, &m, path, strcmp(accepted[i], "no_soma.swc") != 0);
    if (strcmp(accepted[i], "custom_type.swc") == 0) {
      int has5 = 0;
      for (int c = 0; c < m.n_compartments; c++)
        has5 |= m.region[c] == 5;
      SE_EXPECT(st, has5, "custom_type.swc: region 5 lost");
      SE_EXPECT(st, m.n_branches == 7, "custom_type.swc: %d branches, expected soma + 6 sections",
                m.n_branches);
    }
    if (strcmp(accepted[i], "no_soma.swc") == 0) {
      /* Two sections of 2 um leave the root; the first starts at compartment 0, the second
       * hangs from compartment 0. */
      se_discretization one = one_per_section();
      se_morphology_free(&m);
      if (!load_ok(st, path, &one, NULL, &m))
        continue;
      SE_EXPECT(st, m.n_compartments == 2 && m.n_branches == 2,
                "no_soma.swc: %d compartments, %d branches", m.n_compartments, m.n_branches);
      SE_EXPECT(st,
                m.n_compartments == 2 && m.parent[1] == 0 && m.region[0] == 2 &&
                    near(m.length[0], 2) && near(m.length[1], 2) && near(m.diameter[0], 4),
                "no_soma.swc: unexpected layout");
    }
    if (strcmp(accepted[i], "soma_cylinders.swc") == 0) {
      /* Soma: 3 cylinders of radius 40 along x (length 3, diameter 80). The axon's own samples
       * coincide, so it starts at the soma sample it names (1, 0, 0): 1 um. */
      SE_EXPECT(st, near(m.length[0], 3) && near(m.diameter[0], 80),
                "soma_cylinders.swc: soma %g x %g", m.length[0], m.diameter[0]);
      SE_EXPECT(st, m.n_compartments >= 2 && m.region[1] == 2, "soma_cylinders.swc: no axon");
      double axon = 0;
      for (int c = 1; c < m.n_compartments; c++)
        axon += m.length[c];
      SE_EXPECT(st, near(axon, 1), "soma_cylinders.swc: axon length %g, expected 1", axon);
    }
    if (strcmp(accepted[i], "simple-windows-eol.swc") == 0)
      SE_EXPECT(st, m.n_branches == 7, "simple-windows-eol.swc: %d branches", m.n_branches);
    se_morphology_free(&m);
  }
}

/* Hand-written broken files, each refused with its line and problem. */
static void test_refusals(se_test_state *st, scratch *s) {
  se_discretization d = se_discretization_default();
  const char *soma = "1 1 0 0 0 5 -1\n";
  char text[512];
  struct {
    const char *name, *rest, *s1, *s2;
  } cases[] = {
      {"dup.swc", "2 3 0 0 10 1 1\n2 3 0 0 20 1 1\n", "lines 2 and 3:", "sample id 2"},
      {"noparent.swc", "2 3 0 0 10 1 1\n3 3 0 0 20 1 9\n", "line 3:", "names parent 9"},
      {"self.swc", "2 3 0 0 10 1 1\n3 3 0 0 20 1 3\n", "line 3:", "itself as parent"},
      {"cycle.swc", "2 3 0 0 10 1 1\n3 3 0 0 20 1 4\n4 3 0 0 30 1 3\n", "cycle", "line 3:"},
      {"roots.swc", "2 3 0 0 10 1 1\n3 1 0 0 20 1 -1\n", "lines 1 and 3:", "parent -1"},
      {"nonnumeric.swc", "2 3 0 abc 10 1 1\n", "line 2:", "'abc'"},
      {"badid.swc", "2.5 3 0 0 10 1 1\n", "line 2:", "not an integer"},
      {"missing.swc", "2 3 0 0 10 1\n", "line 2:", "6 fields"},
      {"extra.swc", "2 3 0 0 10 1 1 7\n", "line 2:", "more than 7 fields"},
      {"negative.swc", "2 3 0 0 10 -1 1\n", "line 2:", "negative radius"},
      {"zeros.swc", "2 3 0 0 10 0 1\n3 3 0 0 20 0 2\n", "line 3:", "radius 0"},
      {"zerolength.swc", "2 3 0 0 10 1 1\n3 3 0 0 10 1 2\n4 3 0 0 30 1 2\n",
       "line 3:", "zero length"},
      {"infinite.swc", "2 3 0 0 inf 1 1\n", "line 2:", "not finite"},
      {"negtype.swc", "2 -3 0 0 10 1 1\n", "line 2:", "region code"},
      /* Found by the fuzz campaign (tools/fuzz_inputs.py): a type sizes simengine-prep's
       * biophysics table (2147483647 overflowed it), a far point made a section of 1.5 million
       * compartments (1e12 um: 536 million, gigabytes), overflowing coordinates and radii made
       * infinite lengths and diameters that only the written file's validation refused. */
      {"hugetype.swc", "2 2147483647 0 0 10 1 1\n", "line 2:", "region code in [0, 1000000]"},
      {"bigtype.swc", "2 1000001 0 0 10 1 1\n", "line 2:", "region code in [0, 1000000]"},
      {"far.swc", "2 3 0 0 10 1 1\n3 3 0 0 1e8 1 2\n", "lines 2 .. 3:", "more than 1000000"},
      {"hugeradius.swc", "2 3 0 0 10 1e308 1\n", "line 2:", "too large"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(text, sizeof text, "%s%s", soma, cases[i].rest);
    load_refused(st, scratch_write(s, cases[i].name, text), &d, cases[i].s1, cases[i].s2);
  }
  load_refused(st, scratch_write(s, "empty.swc", ""), &d, "no samples", NULL);
  load_refused(st, scratch_write(s, "comments.swc", "# only\n\n  # comments\r\n"), &d, "no samples",
               NULL);
  const char *soma0 = scratch_write(s, "soma0.swc", "# a soma of radius 0\n1 1 0 0 0 0 -1\n");
  load_refused(st, soma0, &d, "line 2:", "zero diameter");
  load_refused(st, scratch_write(s, "lonely.swc", "1 3 0 0 0 1 -1\n"), &d,
               "line 1:", "zero length");
  /* Overflowing geometry, one compartment per section (the d_lambda rule would ask for
   * infinitely many): refused with the SWC line, not as an infinite compartment. */
  se_discretization one = one_per_section();
  load_refused(st, scratch_write(s, "overflow.swc", "1 1 0 0 0 5 -1\n2 3 0 0 10 1 1\n3 3 0 0 1e300 1 2\n"),
               &one, "line 3:", "not finite");
  load_refused(st, scratch_write(s, "somafar.swc", "1 1 0 0 0 5 -1\n2 1 0 0 1e300 5 1\n3 3 0 0 -10 1 1\n"),
               &one, "line 1:", "out of range");
  load_refused(st, scratch_write(s, "wide.swc", "1 1 0 0 0 5 -1\n2 3 0 0 10 1e300 1\n3 3 0 0 1e10 1e300 2\n"),
               &one, "lines 2 .. 3:", "out of range");

  /* Repair on request: radii below min_radius are raised. */
  se_discretization repair = one_per_section();
  repair.min_radius = 0.25;
  se_morphology m;
  const char *zeros =
      scratch_write(s, "zeros2.swc", "1 1 0 0 0 5 -1\n2 3 0 0 10 0 1\n3 3 0 0 20 0 2\n");
  if (load_ok(st, zeros, &repair, NULL, &m)) {
    check_tree(st, &m, "zeros.swc repaired", 1);
    SE_EXPECT(st, m.n_compartments == 2 && near(m.diameter[1], 0.5),
              "zeros.swc repaired: diameter %g, expected 0.5",
              m.n_compartments > 1 ? m.diameter[1] : 0);
    se_morphology_free(&m);
  }
  if (load_ok(st, soma0, &repair, NULL, &m)) {
    SE_EXPECT(st, near(m.length[0], 0.5) && near(m.diameter[0], 0.5), "soma0.swc repaired: %g x %g",
              m.length[0], m.diameter[0]);
    se_morphology_free(&m);
  }
  /* A zero radius at one end only (a tapering tip) is accepted as is. */
  if (load_ok(st, scratch_write(s, "tip.swc", "1 1 0 0 0 5 -1\n2 3 0 0 10 1 1\n3 3 0 0 20 0 2\n"),
              &d, NULL, &m)) {
    check_tree(st, &m, "tip.swc", 1);
    se_morphology_free(&m);
  }
}

/* Soma rules, section starts, row order and numbering. */
static void test_geometry(se_test_state *st, scratch *s) {
  se_discretization one = one_per_section();
  se_morphology m;
  const double r = 5, sphere = 4 * M_PI * r * r;
  if (load_ok(st, scratch_write(s, "soma1.swc", "1 1 0 0 0 5 -1\n2 3 10 0 0 1 1\n3 3 30 0 0 1 2\n"),
              &one, NULL, &m)) {
    SE_EXPECT(st, near(M_PI * m.diameter[0] * m.length[0], sphere), "1-point soma area %g, want %g",
              M_PI * m.diameter[0] * m.length[0], sphere);
    SE_EXPECT(st, m.n_compartments == 2 && near(m.length[1], 20),
              "a section leaving the soma starts at its first own sample: length %g, want 20",
              m.n_compartments > 1 ? m.length[1] : 0);
    se_morphology_free(&m);
  }
  if (load_ok(st,
              scratch_write(s, "soma3.swc",
                            "# NeuroMorpho 3-point soma\n1 1 0 0 0 5 -1\n"
                            "2 1 0 -5 0 5 1\n3 1 0 5 0 5 1\n4 3 0 5 0 1 3\n"
                            "5 3 0 25 0 1 4\n"),
              &one, NULL, &m)) {
    SE_EXPECT(st, near(M_PI * m.diameter[0] * m.length[0], sphere), "3-point soma area %g, want %g",
              M_PI * m.diameter[0] * m.length[0], sphere);
    SE_EXPECT(st, m.n_compartments == 2 && m.n_branches == 2, "3-point soma: %d compartments",
              m.n_compartments);
    se_morphology_free(&m);
  }
  /* A branch point: child sections start at the branch point's position and radius. Ids start
   * at 0 and skip numbers; rows are shuffled, comments trail, CRLF line ends. */
  const char *ordered = "0 1 0 0 0 5 -1\n10 3 0 10 0 2 0\n20 3 0 20 0 2 10\n"
                        "30 3 0 30 0 1 20\n40 3 10 20 0 1 20\n";
  const char *shuffled = "# shuffled\r\n40 3 10 20 0 1 20 # tip\r\n\r\n30 3 0 30 0 1 20\r\n"
                         "20\t3 0 20 0 2 10\r\n0 1 0 0 0 5 -1\r\n10 3 0 10 0 2 0\r\n";
  se_morphology a, b;
  if (load_ok(st, scratch_write(s, "ordered.swc", ordered), &one, NULL, &a)) {
    if (load_ok(st, scratch_write(s, "shuffled.swc", shuffled), &one, NULL, &b)) {
      SE_EXPECT(st, same_morphology(&a, &b), "shuffled rows give another morphology");
      se_morphology_free(&b);
    }
    check_tree(st, &a, "ordered.swc", 1);
    SE_EXPECT(st, a.n_compartments == 4 && a.n_branches == 4,
              "ordered.swc: %d compartments, %d branches", a.n_compartments, a.n_branches);
    if (a.n_compartments == 4) {
      /* Sections: 10-20 (10 um, d 4), 20-30 (10 um, d 4 -> 2), 20-40 (10 um, d 4 -> 2). */
      SE_EXPECT(st, a.parent[1] == 0 && a.parent[2] == 1 && a.parent[3] == 1,
                "ordered.swc parents");
      for (int i = 1; i < 4; i++)
        SE_EXPECT(st, near(a.length[i], 10), "ordered.swc: length[%d] = %g", i, a.length[i]);
      SE_EXPECT(st, near(a.diameter[1], 4) && near(a.diameter[2], 3) && near(a.diameter[3], 3),
                "ordered.swc diameters %g %g %g", a.diameter[1], a.diameter[2], a.diameter[3]);
    }
    se_morphology_free(&a);
  }
  /* Integral decimals are integers ("1.0"), as NEURON reads them. */
  if (load_ok(st,
              scratch_write(s, "floats.swc",
                            "1.0 1.0 0 0 0 5 -1.0\n2 3 0 0 5 1 1.0\n"
                            "3 3 0 0 1e1 1 2.\n"),
              &one, NULL, &m)) {
    SE_EXPECT(st, m.n_compartments == 2 && near(m.length[1], 5), "floats.swc: %d compartments",
              m.n_compartments);
    se_morphology_free(&m);
  }
  /* A change of type starts a new section (regions are per section). */
  if (load_ok(st,
              scratch_write(s, "types.swc",
                            "1 1 0 0 0 5 -1\n2 3 0 10 0 1 1\n"
                            "3 3 0 20 0 1 2\n4 4 0 30 0 1 3\n"),
              &one, NULL, &m)) {
    SE_EXPECT(st,
              m.n_compartments == 3 && m.region[1] == 3 && m.region[2] == 4 &&
                  near(m.length[2], 10) && m.n_branches == 3,
              "types.swc: type change not a section boundary");
    se_morphology_free(&m);
  }
}

/* Cutting sections into compartments: max_length and the d_lambda rule. */
static void test_discretization(se_test_state *st, scratch *s) {
  se_morphology m;
  se_discretization d = one_per_section();
  d.max_length = 10;
  const char *cyl = scratch_write(s, "cylinder.swc", "1 3 0 0 0 1 -1\n2 3 100 0 0 1 1\n");
  if (load_ok(st, cyl, &d, NULL, &m)) {
    SE_EXPECT(st, m.n_compartments == 10, "100 um, max 10 um: %d compartments", m.n_compartments);
    for (int i = 0; i < m.n_compartments; i++)
      SE_EXPECT(st, near(m.length[i], 10) && near(m.diameter[i], 2) && m.parent[i] == i - 1,
                "compartment %d: %g um x %g um, parent %d", i, m.length[i], m.diameter[i],
                m.parent[i]);
    se_morphology_free(&m);
  }
  /* Tapering 4 -> 2 um over 100 um, two compartments: mean diameters 3.5 and 2.5. */
  d.max_length = 50;
  if (load_ok(st,
              scratch_write(s, "taper.swc",
                            "1 3 0 0 0 2 -1\n2 3 30 0 0 1.7 1\n"
                            "3 3 100 0 0 1 2\n"),
              &d, NULL, &m)) {
    SE_EXPECT(st, m.n_compartments == 2 && near(m.diameter[0], 3.5) && near(m.diameter[1], 2.5),
              "taper: diameters %g %g", m.diameter[0], m.n_compartments > 1 ? m.diameter[1] : 0);
    se_morphology_free(&m);
  }
  /* d_lambda: 1000 um, d = 2 um, Ra 100 ohm cm, cm 1 uF/cm2, 100 Hz, d_lambda 0.1 -> 25. */
  double ra[4] = {100, 100, 100, 100}, cm[4] = {1, 1, 1, 1};
  se_biophysics bio = {.n_regions = 4, .ra = ra, .cm = cm};
  const char *longcyl = scratch_write(s, "long.swc", "1 3 0 0 0 1 -1\n2 3 1000 0 0 1 1\n");
  se_discretization dl = se_discretization_default();
  double lambda = 1e5 * sqrt(2.0 / (4 * M_PI * 100 * 100 * 1));
  int expect = (int)((1000 / (0.1 * lambda) + 0.9) / 2) * 2 + 1;
  SE_EXPECT(st, expect == 25, "the formula gives %d", expect);
  expect_compartments(st, "d_lambda (the formula)", longcyl, &dl, &bio, expect);
  /* The larger of the two rules wins. */
  dl.max_length = 20;
  expect_compartments(st, "max of the rules", longcyl, &dl, &bio, 50);
  /* Without bio, NEURON's defaults (Ra 35.4, cm 1) give a longer lambda: fewer compartments. */
  dl.max_length = 0;
  double lambda0 = 1e5 * sqrt(2.0 / (4 * M_PI * 100 * SE_DEFAULT_RA * SE_DEFAULT_CM));
  int expect0 = (int)((1000 / (0.1 * lambda0) + 0.9) / 2) * 2 + 1;
  expect_compartments(st, "d_lambda default bio (the formula)", longcyl, &dl, NULL, expect0);
}

/* The real reconstructions shipped in data/morphologies. */
static void test_real(se_test_state *st, const char *data) {
  const char *files[] = {"96ML.CNG.swc", "cell1-8b-CA3.CNG.swc", "c91662.swc", "pyramidal.swc",
                         "SM090312A1-5-IDC.CNG.swc"};
  se_discretization d = se_discretization_default();
  double ra[5] = {100, 100, 100, 100, 100}, cm[5] = {1, 1, 1, 1, 1};
  se_biophysics bio = {.n_regions = 5, .ra = ra, .cm = cm};
  char path[512];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/morphologies/%s", data, files[i]);
    se_morphology m;
    if (!load_ok(st, path, &d, &bio, &m))
      continue;
    check_tree(st, &m, files[i], 1);
    double area = 0;
    for (int c = 0; c < m.n_compartments; c++)
      area += M_PI * m.diameter[c] * m.length[c];
    printf("  %-26s %6d compartments %4d branches, membrane %.0f um2\n", files[i], m.n_compartments,
           m.n_branches, area);
    se_morphology_free(&m);
  }
}

/* The six classes of paper 000, Table 1. */
static void test_synthetic(se_test_state *st) {
  struct {
    const char *name;
    int compartments, branches;
  } table[] = {{"small-low", 76, 7},      {"small-high", 76, 29}, {"medium-low", 305, 30},
               {"medium-high", 319, 157}, {"big-low", 695, 66},   {"big-high", 691, 341}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    for (uint64_t seed = 1; seed <= 20; seed++) {
      se_morphology m, again;
      se_error err = {0};
      int rc = se_morphology_synthetic(table[i].name, seed, &m, &err);
      SE_EXPECT(st, rc == SE_OK, "%s: %s", table[i].name, err.message);
      if (rc != SE_OK)
        continue;
      SE_EXPECT(st, m.n_compartments == table[i].compartments && m.n_branches == table[i].branches,
                "%s seed %llu: %d compartments, %d branches", table[i].name,
                (unsigned long long)seed, m.n_compartments, m.n_branches);
      check_tree(st, &m, table[i].name, 1);
      int axon_sections = 0, bad = 0;
      for (int c = 1; c < m.n_compartments; c++) {
        axon_sections += m.region[c] == 2 && m.region[m.parent[c]] != 2;
        bad += m.length[c] < 10 || m.length[c] > 30 || m.diameter[c] < 0.3 || m.diameter[c] > 3 ||
               (m.region[c] != 2 && m.region[c] != 3);
      }
      SE_EXPECT(st, m.region[0] == 1 && near(m.length[0], 20) && near(m.diameter[0], 20),
                "%s: soma", table[i].name);
      SE_EXPECT(st, axon_sections == 1, "%s: %d axon sections", table[i].name, axon_sections);
      SE_EXPECT(st, bad == 0, "%s: %d implausible compartments", table[i].name, bad);
      rc = se_morphology_synthetic(table[i].name, seed, &again, &err);
      SE_EXPECT(st, rc == SE_OK && same_morphology(&m, &again), "%s: seed %llu is not deterministic",
                table[i].name, (unsigned long long)seed);
      if (rc == SE_OK)
        se_morphology_free(&again);
      se_morphology_free(&m);
    }
  }
  se_morphology a, b;
  se_error err = {0};
  if (se_morphology_synthetic("big-high", 1, &a, &err) == SE_OK) {
    if (se_morphology_synthetic("big-high", 2, &b, &err) == SE_OK) {
      int differ = 0;
      for (int c = 0; c < a.n_compartments; c++)
        differ |= a.parent[c] != b.parent[c] || a.length[c] != b.length[c];
      SE_EXPECT(st, differ, "seeds 1 and 2 give the same big-high");
      se_morphology_free(&b);
    }
    se_morphology_free(&a);
  }
  se_morphology m;
  int rc = se_morphology_synthetic("huge-low", 1, &m, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "huge-low"), "unknown class: rc %d, %s", rc,
            err.message);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    return 2;
  }
  se_test_state st = {0};
  scratch s = {.n = 0};
  snprintf(s.dir, sizeof s.dir, "%s/se_test_swc_XXXXXX",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(s.dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_malformed(&st, argv[1]);
  test_refusals(&st, &s);
  test_geometry(&st, &s);
  test_discretization(&st, &s);
  test_real(&st, argv[1]);
  test_synthetic(&st);
  scratch_clean(&s);
  return se_test_finish(&st, "test_swc");
}
