/* Reading and writing version-1 neurons input files (DESIGN.md Section 3, docs/input-neurons.md). */
#ifndef SE_INPUT_NEURONS_H
#define SE_INPUT_NEURONS_H

#include <mpi.h>

#include "simengine/neurons.h"

/* Reads the root attributes `format`, `version` and `workload` of path into workload (a buffer of
 * workload_size bytes) after checking format == "simengine-input" and version == 1.
 * Collective over comm (every rank opens the file with MPI-IO). */
int se_input_workload(const char *path, MPI_Comm comm, char *workload, size_t workload_size,
                      se_error *err);

/* Reads a neurons input file into model and validates it (se_neuron_model_validate): every bad
 * dataset, shape, dtype or value is reported with the file, the dataset and the index.
 * Collective over comm; every rank gets the whole model (morphologies, cells, stimuli and record
 * lists are small next to the state the engine builds from them). */
int se_input_read_neurons(const char *path, MPI_Comm comm, se_neuron_model *model, se_error *err);

/* Writes model as a version-1 neurons input file at path (under path.tmp, renamed on success).
 * Not collective: one process writes (simengine-prep, tests). */
int se_input_write_neurons(const char *path, const se_neuron_model *model, se_error *err);

#endif
