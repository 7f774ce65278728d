# End-to-end runs of the programs: invariance over ranks, layouts and threads; error handling.
se_add_script_test(e2e_invariance LABELS mpi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_invariance.sh)
se_add_script_test(e2e_errors LABELS mpi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_errors.sh)

# GPU agreement with the CPU path (skips without a GPU).
se_test_program(compare_outputs ${CMAKE_CURRENT_SOURCE_DIR}/compare_outputs.c)
se_add_script_test(e2e_gpu LABELS gpu COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_gpu.sh)
