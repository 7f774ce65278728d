# End-to-end runs of the programs: invariance over ranks, layouts and threads; error handling.
se_add_script_test(e2e_invariance LABELS mpi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_invariance.sh)
se_add_script_test(e2e_errors LABELS mpi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e_errors.sh)
