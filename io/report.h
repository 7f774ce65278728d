/* The SONATA output file of the neurons workload (DESIGN.md Section 3, docs/output.md):
 * /report/<population>/{data, mapping/...}, /spikes/<population>/..., /simengine metadata.
 * Written collectively with parallel HDF5 under "<path>.tmp", renamed to path on success. */
#ifndef SE_REPORT_H
#define SE_REPORT_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "simengine/error.h"

typedef struct se_report *se_report_t;

/* What one rank contributes. Recorded cells are ordered by ascending cell index over the ranks,
 * so each rank's columns of /report/<population>/data are one contiguous range. */
typedef struct se_report_spec {
  const char *population;
  int float64;                /* 0: data as float32, 1: float64 */
  int64_t n_frames;           /* frames of the whole run (rows of data) */
  double t_start, t_stop, t_step; /* mapping/time, ms */
  int64_t n_local_cells;      /* recorded cells on this rank */
  const uint64_t *local_node_ids;        /* [n_local_cells] gids */
  const int64_t *local_elements_per_cell; /* [n_local_cells] columns of each cell */
  const uint32_t *local_element_ids;      /* [sum of the above] compartment index in its cell */
  int64_t buffer_frames;      /* frames buffered before a collective write (>= 1) */
  double flush_seconds;       /* H5Fflush at most this often (<= 0: only at close) */
} se_report_spec;

/* Creates "<path>.tmp" with the report datasets sized for the whole run and writes the mapping.
 * Collective over comm. */
int se_report_open(const char *path, MPI_Comm comm, const se_report_spec *spec,
                   se_report_t *report, se_error *err);

/* Appends one frame: this rank's values for its columns, in mapping order (mV). Buffered; every
 * buffer_frames frames the buffer is written with one collective H5Dwrite. Collective over comm
 * (every rank appends every frame). SE_ERR_NUMERIC for a value a float32 report cannot hold; the
 * frame still takes part in the collective write, so the caller agrees on the failure (the
 * output must not be kept). */
int se_report_append(se_report_t report, const double *local_values, se_error *err);

/* Writes the spikes: this rank's n_local spikes (time ms, gid). They are gathered, sorted by time
 * (ties by gid) and written to /spikes/<population>/{timestamps,node_ids} with `sorting` =
 * by_time. Collective over comm; call once. */
int se_report_write_spikes(se_report_t report, int64_t n_local, const double *time,
                           const uint64_t *gid, se_error *err);

/* Attributes of /simengine: a string, an integer or a double. Collective (same value on every
 * rank). */
int se_report_meta_string(se_report_t report, const char *name, const char *value, se_error *err);
int se_report_meta_int(se_report_t report, const char *name, int64_t value, se_error *err);
int se_report_meta_double(se_report_t report, const char *name, double value, se_error *err);

/* The open HDF5 file (the MPI-IO driver on the report's communicator), for writers of further
 * groups such as /simengine/balance (io/balance_history.h); valid until se_report_close. Not
 * collective. */
hid_t se_report_file(se_report_t report);

/* Writes the buffered frames, closes the file and renames "<path>.tmp" to path when success is
 * non-zero; removes "<path>.tmp" otherwise. Collective over comm. Frees report. */
int se_report_close(se_report_t report, int success, se_error *err);

#endif
