# The M0 solver with MUMPS (src/tdbem_m0_mumps.c): solves against a dense Cholesky, the ordering
# reported, and the failures agreed on every rank, on 1, 2 and 3 ranks.
se_test_program(test_tdbem_m0 ${CMAKE_CURRENT_SOURCE_DIR}/test_tdbem_m0.c)
foreach(ranks 1 2 3)
  if(ranks EQUAL 1)
    set(labels mpi unit)
  else()
    set(labels mpi)
  endif()
  se_add_test(tdbem_m0_r${ranks} RANKS ${ranks} LABELS ${labels}
              COMMAND $<TARGET_FILE:test_tdbem_m0>)
  set_tests_properties(tdbem_m0_r${ranks} PROPERTIES TIMEOUT 60)
endforeach()
