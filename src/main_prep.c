/* simengine-prep: builds simengine input files (docs/prep.md).
 *   simengine-prep neurons -o out.h5 [options]   SWC files and synthetic classes -> neurons input
 *   simengine-prep tdbem -o out.h5 [options]     synthetic TD-BEM case (io/prep_tdbem.c)
 * Bad options exit with status 2, bad input files or failed writes with status 1. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "input_neurons.h"
#include "prep_tdbem.h"
#include "se_error.h"
#include "simengine/neurons.h"
#include "swc.h"

#define PREP_EXIT_USAGE 2
#define PREP_EXIT_FAILURE 1
#define PREP_MIN_REGIONS 5 /* 0 undefined, 1 soma, 2 axon, 3 basal, 4 apical */

static const char usage_text[] =
    "Usage: simengine-prep neurons -o OUT.h5 [options]\n"
    "       simengine-prep tdbem -o OUT.h5 [options]   (simengine-prep tdbem --help)\n"
    "\n"
    "Builds a neurons input file (docs/input-neurons.md) from SWC morphologies and synthetic\n"
    "morphology classes. Cells are laid out morphology by morphology in the order given, the\n"
    "copies of one morphology consecutive; cell i has gid i.\n"
    "\n"
    "Morphologies (at least one; repeatable and mixable):\n"
    "  --swc FILE[:COPIES]      an SWC file (NeuroMorpho columns), COPIES cells (default 1)\n"
    "  --class NAME[:COPIES]    a synthetic class of paper 000, Table 1: small-low, small-high,\n"
    "                           medium-low, medium-high, big-low, big-high\n"
    "  --seed N                 seed of the synthetic classes (default 1); the k-th --class\n"
    "                           (k = 0, 1, ...) uses seed N + k\n"
    "Discretisation of SWC sections (docs/morphologies.md):\n"
    "  --d-lambda X             NEURON's d_lambda rule, fraction of the AC length constant\n"
    "                           (default 0.1; 0 turns the rule off)\n"
    "  --frequency HZ           frequency of the d_lambda rule (default 100)\n"
    "  --max-length UM          longest compartment in um (default 0: no limit); with both\n"
    "                           rules a section gets the larger number of compartments\n"
    "  --min-radius UM          repair: raise SWC radii below UM to UM (default 0: refuse\n"
    "                           segments of zero diameter)\n"
    "Run:\n"
    "  --dt MS                  time step (default 0.025)\n"
    "  --tstop MS               simulated time (default 100)\n"
    "  --v-init MV              initial voltage (default -65)\n"
    "  --celsius C              temperature for the hh rates (default 6.3)\n"
    "  --threshold MV           spike threshold at compartment 0 (default 10)\n"
    "Biophysics per region (SWC type: 1 soma, 2 axon, 3 basal, 4 apical, others by number).\n"
    "Defaults: cm 1 uF/cm2 and Ra 100 ohm cm everywhere; hh in regions 1 and 2 (gnabar_hh\n"
    "0.12, gkbar_hh 0.036, gl_hh 0.0003 S/cm2, el_hh -54.3, ena 50, ek -77 mV); pas in every\n"
    "other region (g_pas 3.3333e-5 S/cm2 = 1/(30000 ohm cm2), e_pas -65 mV).\n"
    "  --set REGION:NAME=VALUE  override one value; REGION is a number, soma, axon, dend\n"
    "                           (= basal, 3), apic (= apical, 4) or all; NAME is one of cm, ra,\n"
    "                           g_pas, e_pas, gnabar_hh, gkbar_hh, gl_hh, el_hh, ena, ek\n"
    "                           (case-insensitive; gnabar, gkbar, gl, el also accepted).\n"
    "                           Applied in the order given: --set all:ra=150 --set 3:ra=200.\n"
    "                           A mechanism is present where its conductances are > 0.\n"
    "Stimuli (current clamps, nA, ms):\n"
    "  --iclamp CELL:COMP:DELAY:DUR:AMP   one clamp on compartment COMP of cell CELL\n"
    "  --iclamp-all DELAY:DUR:AMP         one clamp on compartment 0 of every cell\n"
    "Recording:\n"
    "  --record soma|all        compartment 0 of each recorded cell (default) or every one\n"
    "  --record-every N         one frame every N steps (default 1)\n"
    "  --record-dtype T         float32 (default) or float64\n"
    "  --record-cells LIST      cells to record: comma list of indices and ranges A-B\n"
    "                           (default all)\n"
    "Output:\n"
    "  -o, --output OUT.h5      the file to write (required); written as OUT.h5.tmp, renamed\n"
    "  --population NAME        population name of the cells and reports (default \"default\")\n"
    "  -h, --help               this text\n"
    "\n"
    "Example: 100 copies of a pyramidal cell and 100 synthetic medium-high cells, a 0.5 nA step\n"
    "into every soma from 5 ms to 105 ms, 200 ms simulated, soma voltages every 4 steps:\n"
    "  simengine-prep neurons -o net.h5 \\\n"
    "      --swc data/morphologies/pyramidal.swc:100 --class medium-high:100 \\\n"
    "      --iclamp-all 5:100:0.5 --tstop 200 --record soma --record-every 4 \\\n"
    "      --set 3:g_pas=5e-5 --set all:ra=150\n";

/* One morphology asked for on the command line. */
typedef struct prep_morph_spec {
  int is_swc;
  char *name; /* file or class name (owned) */
  int64_t copies;
  uint64_t seed; /* synthetic classes */
} prep_morph_spec;

/* One --set: region (-1 = all), field index (se_biophysics_field), value. */
typedef struct prep_set {
  int32_t region;
  int field;
  double value;
} prep_set;

/* One --iclamp (cell >= 0) or --iclamp-all (cell = -1). */
typedef struct prep_clamp {
  int64_t cell;
  int32_t comp;
  double delay, duration, amplitude;
} prep_clamp;

typedef struct prep_options {
  const char *output;
  prep_morph_spec *morphs;
  int n_morphs;
  prep_set *sets;
  int n_sets;
  prep_clamp *clamps;
  int n_clamps;
  uint64_t seed;
  se_discretization disc;
  double dt, tstop, v_init, celsius, threshold;
  se_record_what record_what;
  int record_every, record_float64;
  const char *record_cells; /* the LIST text, NULL = all */
  const char *population;
} prep_options;

/* Prints "simengine-prep: message" and a hint, returns the usage exit status. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("simengine-prep: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n(simengine-prep --help lists the options)\n", stderr);
  return PREP_EXIT_USAGE;
}

/* ---- option values -------------------------------------------------------------------------- */

static int parse_double(const char *text, double *out) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v))
    return 0;
  *out = v;
  return 1;
}

static int parse_int64(const char *text, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end != '\0' || errno == ERANGE)
    return 0;
  *out = v;
  return 1;
}

/* Splits text at ':' into at most max fields (text is modified); returns the count. */
static int split_colon(char *text, char **fields, int max) {
  int n = 0;
  fields[n++] = text;
  for (char *p = text; *p; p++)
    if (*p == ':') {
      if (n == max)
        return max + 1;
      *p = '\0';
      fields[n++] = p + 1;
    }
  return n;
}

/* Parses NAME[:COPIES]: the part after the last ':' is the count when it is all digits. */
static int parse_morph_spec(const char *opt, const char *text, int is_swc, prep_morph_spec *spec) {
  const char *colon = strrchr(text, ':');
  size_t len = strlen(text);
  spec->copies = 1;
  if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
    if (!parse_int64(colon + 1, &spec->copies) || spec->copies < 1)
      return usage_error("%s '%s': COPIES must be an integer >= 1", opt, text);
    len = (size_t)(colon - text);
  }
  if (len == 0)
    return usage_error("%s '%s': no %s", opt, text, is_swc ? "file" : "class name");
  spec->name = malloc(len + 1);
  if (!spec->name)
    return usage_error("out of memory");
  memcpy(spec->name, text, len);
  spec->name[len] = '\0';
  spec->is_swc = is_swc;
  return 0;
}

/* Region of a --set: a number >= 0, a name, or all (-1). */
static int parse_region(const char *text, int32_t *region) {
  const struct {
    const char *name;
    int32_t region;
  } names[] = {{"all", -1},  {"soma", 1}, {"axon", 2},  {"dend", 3},
               {"basal", 3}, {"apic", 4}, {"apical", 4}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(text, names[i].name) == 0) {
      *region = names[i].region;
      return 1;
    }
  int64_t v;
  if (!parse_int64(text, &v) || v < 0 || v > SE_MAX_REGION)
    return 0;
  *region = (int32_t)v;
  return 1;
}

static int parse_set(const char *text, prep_set *set) {
  const char *colon = strchr(text, ':'), *eq = strchr(text, '=');
  if (!colon || !eq || eq < colon)
    return usage_error("--set '%s': expected REGION:NAME=VALUE, e.g. 3:g_pas=5e-5 or all:ra=150",
                       text);
  char region[64], name[64];
  size_t rl = (size_t)(colon - text), nl = (size_t)(eq - colon - 1);
  if (rl >= sizeof region || nl >= sizeof name)
    return usage_error("--set '%s': region or name too long", text);
  memcpy(region, text, rl);
  region[rl] = '\0';
  memcpy(name, colon + 1, nl);
  name[nl] = '\0';
  if (!parse_region(region, &set->region))
    return usage_error("--set '%s': region '%s' is not a number >= 0, soma, axon, dend, basal, "
                       "apic, apical or all",
                       text, region);
  set->field = -1;
  for (int f = 0; f < SE_BIOPHYSICS_FIELDS; f++) {
    const char *known = se_biophysics_field_name(f);
    size_t bl = strlen(known);
    int alias = bl > 3 && strcmp(known + bl - 3, "_hh") == 0 && strlen(name) == bl - 3 &&
                strncasecmp(name, known, bl - 3) == 0;
    if (strcasecmp(name, known) == 0 || alias)
      set->field = f;
  }
  if (set->field < 0)
    return usage_error("--set '%s': unknown name '%s' (known: cm, ra, g_pas, e_pas, gnabar_hh, "
                       "gkbar_hh, gl_hh, el_hh, ena, ek)",
                       text, name);
  if (!parse_double(eq + 1, &set->value))
    return usage_error("--set '%s': value '%s' is not a finite number", text, eq + 1);
  int positive = set->field <= 1; /* cm, ra */
  int conductance = set->field == 2 || (set->field >= 4 && set->field <= 6);
  if ((positive && !(set->value > 0)) || (conductance && !(set->value >= 0)))
    return usage_error("--set '%s': %s must be %s", text, se_biophysics_field_name(set->field),
                       positive ? "> 0" : ">= 0 (a conductance)");
  return 0;
}

/* Parses --iclamp (with_target) or --iclamp-all. */
static int parse_clamp(const char *opt, const char *text, int with_target, prep_clamp *c) {
  char buf[256], *f[5];
  if (strlen(text) >= sizeof buf)
    return usage_error("%s '%s': too long", opt, text);
  strcpy(buf, text);
  int want = with_target ? 5 : 3;
  const char *form = with_target ? "CELL:COMP:DELAY:DUR:AMP" : "DELAY:DUR:AMP";
  if (split_colon(buf, f, want) != want)
    return usage_error("%s '%s': expected %s", opt, text, form);
  int k = 0;
  c->cell = -1;
  c->comp = 0;
  if (with_target) {
    int64_t comp;
    if (!parse_int64(f[0], &c->cell) || c->cell < 0)
      return usage_error("%s '%s': CELL '%s' is not an integer >= 0", opt, text, f[0]);
    if (!parse_int64(f[1], &comp) || comp < 0 || comp > INT32_MAX)
      return usage_error("%s '%s': COMP '%s' is not an integer >= 0", opt, text, f[1]);
    c->comp = (int32_t)comp;
    k = 2;
  }
  if (!parse_double(f[k], &c->delay))
    return usage_error("%s '%s': DELAY '%s' is not a finite number (ms)", opt, text, f[k]);
  if (!parse_double(f[k + 1], &c->duration) || c->duration < 0)
    return usage_error("%s '%s': DUR '%s' is not a finite number >= 0 (ms)", opt, text, f[k + 1]);
  if (!parse_double(f[k + 2], &c->amplitude))
    return usage_error("%s '%s': AMP '%s' is not a finite number (nA)", opt, text, f[k + 2]);
  return 0;
}

/* Reallocates array (n elements of size bytes) to n + 1 elements, the new one zeroed; NULL when
 * out of memory (array is then unchanged). */
static void *grow(void *array, int n, size_t size) {
  char *grown = realloc(array, (size_t)(n + 1) * size);
  if (grown)
    memset(grown + (size_t)n * size, 0, size);
  return grown;
}

static void options_free(prep_options *o) {
  for (int i = 0; i < o->n_morphs; i++)
    free(o->morphs[i].name);
  free(o->morphs);
  free(o->sets);
  free(o->clamps);
}

/* Reads a number option's value into *out; usage error when it is not a number in range. */
static int number_option(const char *opt, const char *value, double lo, int lo_strict,
                         double *out) {
  if (!parse_double(value, out) || (lo_strict ? !(*out > lo) : !(*out >= lo)))
    return usage_error("%s '%s': expected a finite number %s %g", opt, value,
                       lo_strict ? ">" : ">=", lo);
  return 0;
}

/* Reads a number option that takes any finite value. */
static int any_number_option(const char *opt, const char *value, double *out) {
  if (!parse_double(value, out))
    return usage_error("%s '%s': expected a finite number", opt, value);
  return 0;
}

/* Parses argv[first..argc) of "simengine-prep neurons". Returns 0, PREP_EXIT_USAGE, or -1 after
 * printing --help. */
static int parse_options(int argc, char **argv, int first, prep_options *o) {
  o->seed = 1;
  o->disc = se_discretization_default();
  o->dt = 0.025;
  o->tstop = 100;
  o->v_init = -65;
  o->celsius = 6.3;
  o->threshold = 10;
  o->record_what = SE_RECORD_SOMA;
  o->record_every = 1;
  o->population = "default";
  int n_classes = 0;
  for (int i = first; i < argc; i++) {
    char *arg = argv[i];
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      fputs(usage_text, stdout);
      return -1;
    }
    /* --opt=value or --opt value */
    char name[64];
    const char *value = NULL;
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    if (eq && (size_t)(eq - arg) < sizeof name) {
      memcpy(name, arg, (size_t)(eq - arg));
      name[eq - arg] = '\0';
      value = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", arg);
    }
    static const char *const valued[] = {"-o",
                                         "--output",
                                         "--swc",
                                         "--class",
                                         "--seed",
                                         "--d-lambda",
                                         "--max-length",
                                         "--frequency",
                                         "--min-radius",
                                         "--dt",
                                         "--tstop",
                                         "--v-init",
                                         "--celsius",
                                         "--threshold",
                                         "--set",
                                         "--iclamp",
                                         "--iclamp-all",
                                         "--record",
                                         "--record-every",
                                         "--record-dtype",
                                         "--record-cells",
                                         "--population"};
    int known = 0;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
      known |= strcmp(name, valued[k]) == 0;
    if (!known)
      return usage_error("unknown option '%s'", arg);
    if (!value) {
      if (i + 1 >= argc)
        return usage_error("%s needs a value", name);
      value = argv[++i];
    }
    int rc = 0;
    if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
      o->output = value;
    } else if (strcmp(name, "--swc") == 0 || strcmp(name, "--class") == 0) {
      int is_swc = name[2] == 's';
      prep_morph_spec *grown = grow(o->morphs, o->n_morphs, sizeof *grown);
      if (!grown)
        return usage_error("out of memory");
      o->morphs = grown;
      prep_morph_spec *spec = &o->morphs[o->n_morphs++];
      rc = parse_morph_spec(name, value, is_swc, spec);
      if (!is_swc)
        spec->seed = (uint64_t)n_classes++; /* offset; the base seed is added at the end */
    } else if (strcmp(name, "--seed") == 0) {
      char *end;
      errno = 0;
      unsigned long long s = strtoull(value, &end, 10);
      if (end == value || *end || errno == ERANGE || value[0] == '-')
        return usage_error("--seed '%s': expected an integer >= 0", value);
      o->seed = s;
    } else if (strcmp(name, "--d-lambda") == 0) {
      rc = number_option(name, value, 0, 0, &o->disc.d_lambda);
    } else if (strcmp(name, "--max-length") == 0) {
      rc = number_option(name, value, 0, 0, &o->disc.max_length);
    } else if (strcmp(name, "--frequency") == 0) {
      rc = number_option(name, value, 0, 1, &o->disc.frequency);
    } else if (strcmp(name, "--min-radius") == 0) {
      rc = number_option(name, value, 0, 0, &o->disc.min_radius);
    } else if (strcmp(name, "--dt") == 0) {
      rc = number_option(name, value, 0, 1, &o->dt);
    } else if (strcmp(name, "--tstop") == 0) {
      rc = number_option(name, value, 0, 0, &o->tstop);
    } else if (strcmp(name, "--v-init") == 0) {
      rc = any_number_option(name, value, &o->v_init);
    } else if (strcmp(name, "--celsius") == 0) {
      rc = any_number_option(name, value, &o->celsius);
    } else if (strcmp(name, "--threshold") == 0) {
      rc = any_number_option(name, value, &o->threshold);
    } else if (strcmp(name, "--set") == 0) {
      prep_set *grown = grow(o->sets, o->n_sets, sizeof *grown);
      if (!grown)
        return usage_error("out of memory");
      o->sets = grown;
      rc = parse_set(value, &o->sets[o->n_sets++]);
    } else if (strcmp(name, "--iclamp") == 0 || strcmp(name, "--iclamp-all") == 0) {
      prep_clamp *grown = grow(o->clamps, o->n_clamps, sizeof *grown);
      if (!grown)
        return usage_error("out of memory");
      o->clamps = grown;
      rc = parse_clamp(name, value, strcmp(name, "--iclamp") == 0, &o->clamps[o->n_clamps++]);
    } else if (strcmp(name, "--record") == 0) {
      if (strcmp(value, "soma") == 0)
        o->record_what = SE_RECORD_SOMA;
      else if (strcmp(value, "all") == 0)
        o->record_what = SE_RECORD_ALL;
      else
        return usage_error("--record '%s': expected soma or all", value);
    } else if (strcmp(name, "--record-every") == 0) {
      int64_t n;
      if (!parse_int64(value, &n) || n < 1 || n > INT32_MAX)
        return usage_error("--record-every '%s': expected an integer >= 1", value);
      o->record_every = (int)n;
    } else if (strcmp(name, "--record-dtype") == 0) {
      if (strcmp(value, "float32") == 0 || strcmp(value, "float64") == 0)
        o->record_float64 = value[5] == '6';
      else
        return usage_error("--record-dtype '%s': expected float32 or float64", value);
    } else if (strcmp(name, "--record-cells") == 0) {
      o->record_cells = value;
    } else { /* --population */
      o->population = value;
    }
    if (rc)
      return rc;
  }
  if (!o->output)
    return usage_error("no output file: give -o OUT.h5");
  if (o->n_morphs == 0)
    return usage_error("no morphology: give at least one --swc FILE[:COPIES] or --class "
                       "NAME[:COPIES]");
  if (strlen(o->population) == 0 ||
      strlen(o->population) >= sizeof((se_neuron_model *)0)->population ||
      strchr(o->population, '/'))
    return usage_error("--population '%s': expected 1 to %zu characters, no '/'", o->population,
                       sizeof((se_neuron_model *)0)->population - 1);
  for (int m = 0; m < o->n_morphs; m++)
    if (!o->morphs[m].is_swc)
      o->morphs[m].seed += o->seed;
  return 0;
}

/* ---- building the model --------------------------------------------------------------------- */

/* (Re)allocates bio for n regions with the defaults of simengine-prep, then applies the --set
 * overrides in order. */
static int build_biophysics(const prep_options *o, int32_t n, se_biophysics *bio, se_error *err) {
  se_biophysics_free(bio);
  SE_TRY(se_biophysics_alloc(bio, n, err));
  se_biophysics_set_prep_defaults(bio);
  for (int s = 0; s < o->n_sets; s++) {
    const prep_set *set = &o->sets[s];
    double *field = *se_biophysics_field(bio, set->field);
    for (int32_t r = 0; r < n; r++)
      if (set->region < 0 || set->region == r)
        field[r] = set->value;
  }
  return SE_OK;
}

/* Loads or generates every morphology. */
static int load_morphologies(const prep_options *o, const se_biophysics *bio, se_morphology *morphs,
                             se_error *err) {
  for (int m = 0; m < o->n_morphs; m++) {
    const prep_morph_spec *spec = &o->morphs[m];
    se_morphology_free(&morphs[m]);
    if (spec->is_swc)
      SE_TRY(se_swc_load(spec->name, &o->disc, bio, &morphs[m], err));
    else
      SE_TRY(se_morphology_synthetic(spec->name, spec->seed, &morphs[m], err));
  }
  return SE_OK;
}

static int32_t max_region(const se_morphology *morphs, int n) {
  int32_t r = 0;
  for (int m = 0; m < n; m++)
    for (int32_t c = 0; c < morphs[m].n_compartments; c++)
      if (morphs[m].region[c] > r)
        r = morphs[m].region[c];
  return r;
}

/* Parses one item of --record-cells: an index or a range A-B within [0, n_cells). */
static int parse_cell_range(const char *list, const char *item, size_t len, int64_t n_cells,
                            int64_t *a, int64_t *b) {
  char buf[64];
  if (len == 0 || len >= sizeof buf)
    return usage_error("--record-cells '%s': empty or too long item", list);
  memcpy(buf, item, len);
  buf[len] = '\0';
  char *dash = strchr(buf + 1, '-');
  if (dash)
    *dash = '\0';
  if (!parse_int64(buf, a) || (dash && !parse_int64(dash + 1, b)))
    return usage_error("--record-cells '%s': '%.*s' is not a cell index or a range A-B", list,
                       (int)len, item);
  if (!dash)
    *b = *a;
  if (*a < 0 || *b < *a || *b >= n_cells)
    return usage_error("--record-cells '%s': '%.*s' is not within the %lld cells (0 .. %lld)", list,
                       (int)len, item, (long long)n_cells, (long long)n_cells - 1);
  return 0;
}

/* Parses the --record-cells LIST into a sorted list without duplicates. Returns 0 or the usage
 * exit status. */
static int parse_record_cells(const char *list, int64_t n_cells, se_neuron_model *model) {
  unsigned char *take = calloc((size_t)n_cells + 1, 1);
  if (!take)
    return usage_error("out of memory");
  for (const char *p = list;; p++) {
    size_t len = strcspn(p, ",");
    int64_t a = 0, b = 0;
    int rc = parse_cell_range(list, p, len, n_cells, &a, &b);
    if (rc) {
      free(take);
      return rc;
    }
    memset(take + a, 1, (size_t)(b - a + 1));
    p += len;
    if (*p == '\0')
      break;
  }
  model->n_record_cells = 0;
  for (int64_t c = 0; c < n_cells; c++)
    model->n_record_cells += take[c];
  model->record_cells = calloc((size_t)model->n_record_cells + 1, sizeof *model->record_cells);
  if (!model->record_cells) {
    free(take);
    return usage_error("out of memory");
  }
  for (int64_t c = 0, k = 0; c < n_cells; c++)
    if (take[c])
      model->record_cells[k++] = c;
  free(take);
  return 0;
}

/* Fills model from the morphologies and options. Returns 0, or an exit status after printing. */
static int assemble(const prep_options *o, se_morphology *morphs, se_neuron_model *model) {
  model->dt = o->dt;
  model->tstop = o->tstop;
  model->v_init = o->v_init;
  model->celsius = o->celsius;
  model->spike_threshold = o->threshold;
  snprintf(model->population, sizeof model->population, "%s", o->population);
  model->record_every = o->record_every;
  model->record_what = o->record_what;
  model->record_float64 = o->record_float64;

  int64_t *copies = calloc((size_t)o->n_morphs + 1, sizeof *copies);
  if (!copies) {
    fprintf(stderr, "simengine-prep: out of memory\n");
    return PREP_EXIT_FAILURE;
  }
  for (int m = 0; m < o->n_morphs; m++)
    copies[m] = o->morphs[m].copies;
  se_error err = {0};
  int rc = se_neuron_model_set_cells(model, o->n_morphs, morphs, copies, &err);
  free(copies);
  if (rc != SE_OK) {
    fprintf(stderr, "simengine-prep: %s\n", err.message);
    return PREP_EXIT_FAILURE;
  }
  int64_t cells = model->n_cells;

  /* Clamps: --iclamp as given, --iclamp-all expanded over every cell. */
  int64_t n_clamps = 0;
  for (int k = 0; k < o->n_clamps; k++)
    n_clamps += o->clamps[k].cell < 0 ? cells : 1;
  model->n_iclamps = n_clamps;
  model->iclamp_cell = calloc((size_t)n_clamps + 1, sizeof *model->iclamp_cell);
  model->iclamp_compartment = calloc((size_t)n_clamps + 1, sizeof *model->iclamp_compartment);
  model->iclamp_delay = calloc((size_t)n_clamps + 1, sizeof *model->iclamp_delay);
  model->iclamp_duration = calloc((size_t)n_clamps + 1, sizeof *model->iclamp_duration);
  model->iclamp_amplitude = calloc((size_t)n_clamps + 1, sizeof *model->iclamp_amplitude);
  if (!model->iclamp_cell || !model->iclamp_compartment || !model->iclamp_delay ||
      !model->iclamp_duration || !model->iclamp_amplitude) {
    fprintf(stderr, "simengine-prep: out of memory for %lld current clamps\n", (long long)n_clamps);
    return PREP_EXIT_FAILURE;
  }
  int64_t s = 0;
  for (int k = 0; k < o->n_clamps; k++) {
    const prep_clamp *c = &o->clamps[k];
    if (c->cell >= cells)
      return usage_error("--iclamp %lld:%d:...: cell %lld does not exist (%lld cells: 0 .. %lld)",
                         (long long)c->cell, c->comp, (long long)c->cell, (long long)cells,
                         (long long)cells - 1);
    if (c->cell >= 0) {
      int32_t size = morphs[model->cell_morphology[c->cell]].n_compartments;
      if (c->comp >= size)
        return usage_error("--iclamp %lld:%d:...: cell %lld has %d compartments (0 .. %d)",
                           (long long)c->cell, c->comp, (long long)c->cell, size, size - 1);
    }
    int64_t from = c->cell < 0 ? 0 : c->cell, to = c->cell < 0 ? cells : c->cell + 1;
    for (int64_t i = from; i < to; i++, s++) {
      model->iclamp_cell[s] = i;
      model->iclamp_compartment[s] = c->comp;
      model->iclamp_delay[s] = c->delay;
      model->iclamp_duration[s] = c->duration;
      model->iclamp_amplitude[s] = c->amplitude;
    }
  }

  if (o->record_cells) {
    rc = parse_record_cells(o->record_cells, cells, model);
    if (rc)
      return rc;
  } else {
    model->n_record_cells = cells;
    model->record_cells = calloc((size_t)cells + 1, sizeof *model->record_cells);
    if (!model->record_cells) {
      fprintf(stderr, "simengine-prep: out of memory for the recorded cells\n");
      return PREP_EXIT_FAILURE;
    }
    for (int64_t c = 0; c < cells; c++)
      model->record_cells[c] = c;
  }
  return 0;
}

/* Prints what was written. */
static void print_summary(const prep_options *o, const se_morphology *morphs,
                          const se_neuron_model *model) {
  int64_t comps = 0, branches = 0;
  int n_swc = 0;
  printf("simengine-prep: wrote %s\n", o->output);
  for (int m = 0; m < o->n_morphs; m++) {
    const prep_morph_spec *spec = &o->morphs[m];
    n_swc += spec->is_swc;
    comps += (int64_t)morphs[m].n_compartments * spec->copies;
    branches += (int64_t)morphs[m].n_branches * spec->copies;
    if (spec->is_swc)
      printf("  morphology %d: %s: %d compartments, %d branches, %lld cell%s\n", m, spec->name,
             morphs[m].n_compartments, morphs[m].n_branches, (long long)spec->copies,
             spec->copies == 1 ? "" : "s");
    else
      printf("  morphology %d: class %s (seed %llu): %d compartments, %d branches, %lld cell%s\n",
             m, spec->name, (unsigned long long)spec->seed, morphs[m].n_compartments,
             morphs[m].n_branches, (long long)spec->copies, spec->copies == 1 ? "" : "s");
  }
  printf("  morphologies: %d (%d SWC, %d synthetic)\n", o->n_morphs, n_swc, o->n_morphs - n_swc);
  printf("  cells: %lld (population \"%s\"), compartments: %lld, branches: %lld\n",
         (long long)model->n_cells, model->population, (long long)comps, (long long)branches);
  printf("  regions: %d, current clamps: %lld, recorded cells: %lld (%s, every %d step%s, %s)\n",
         model->bio.n_regions, (long long)model->n_iclamps, (long long)model->n_record_cells,
         model->record_what == SE_RECORD_ALL ? "all compartments" : "soma", model->record_every,
         model->record_every == 1 ? "" : "s", model->record_float64 ? "float64" : "float32");
  printf("  run: dt %g ms, tstop %g ms (%lld steps), v_init %g mV, celsius %g, threshold %g mV\n",
         model->dt, model->tstop, (long long)se_neuron_model_steps(model), model->v_init,
         model->celsius, model->spike_threshold);
}

/* simengine-prep neurons: parse, build, write. */
static int prep_neurons(int argc, char **argv) {
  prep_options o = {0};
  int rc = parse_options(argc, argv, 2, &o);
  if (rc) {
    options_free(&o);
    return rc < 0 ? 0 : rc;
  }
  se_morphology *morphs = calloc((size_t)o.n_morphs, sizeof *morphs);
  se_neuron_model model;
  se_neuron_model_init(&model);
  se_error err = {0};
  if (!morphs) {
    options_free(&o);
    fprintf(stderr, "simengine-prep: out of memory\n");
    return PREP_EXIT_FAILURE;
  }
  /* The regions: at least 0..4 and every region a --set names; SWC files with larger type
   * codes grow the table, and are then read again so that their d_lambda rule sees the right
   * Ra and cm. */
  int32_t n_regions = PREP_MIN_REGIONS;
  for (int s = 0; s < o.n_sets; s++)
    if (o.sets[s].region >= n_regions)
      n_regions = o.sets[s].region + 1;
  int code = 0;
  rc = build_biophysics(&o, n_regions, &model.bio, &err);
  if (rc == SE_OK)
    rc = load_morphologies(&o, &model.bio, morphs, &err);
  if (rc == SE_OK && max_region(morphs, o.n_morphs) >= n_regions) {
    n_regions = max_region(morphs, o.n_morphs) + 1;
    rc = build_biophysics(&o, n_regions, &model.bio, &err);
    if (rc == SE_OK)
      rc = load_morphologies(&o, &model.bio, morphs, &err);
  }
  if (rc != SE_OK) {
    fprintf(stderr, "simengine-prep: %s\n", err.message);
    code = rc == SE_ERR_ARG ? PREP_EXIT_USAGE : PREP_EXIT_FAILURE; /* ARG: an unknown class */
  }
  if (!code)
    code = assemble(&o, morphs, &model);
  if (!code && se_input_write_neurons(o.output, &model, &err) != SE_OK) {
    fprintf(stderr, "simengine-prep: %s\n", err.message);
    code = PREP_EXIT_FAILURE;
  }
  if (!code)
    print_summary(&o, morphs, &model);
  for (int m = 0; m < o.n_morphs; m++)
    se_morphology_free(&morphs[m]);
  free(morphs);
  se_neuron_model_free(&model);
  options_free(&o);
  return code;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage_error("no command: give neurons (or tdbem)");
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (strcmp(argv[1], "neurons") == 0)
    return prep_neurons(argc, argv);
  if (strcmp(argv[1], "tdbem") == 0)
    return se_prep_tdbem_main(argc, argv, 2);
  return usage_error("unknown command '%s': expected neurons (or tdbem)", argv[1]);
}
