# The unknown ordering in the tdbem run (src/tdbem_run.c, docs/tdbem.md Section 10): original,
# Morton and Hilbert on 1, 2 and 3 ranks give the same /tdbem/state, the quality scores, and the
# errors (no /tdbem/positions, a bad --ordering).
se_add_script_test(tdbem_order LABELS mpi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_tdbem_order.sh)
set_tests_properties(tdbem_order PROPERTIES TIMEOUT 120)
