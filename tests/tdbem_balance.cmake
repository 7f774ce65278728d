# The dynamic worker split of the tdbem run (docs/tdbem.md Section 14) without a GPU: three CPU
# workers per rank balanced with the paper's and the rate-based update equal the unbalanced run
# within rounding, and the /simengine/balance history is consistent; on 1 and 2 ranks.
se_test_program(test_tdbem_balance ${CMAKE_CURRENT_SOURCE_DIR}/test_tdbem_balance.c)
foreach(ranks 1 2)
  se_add_test(tdbem_balance_r${ranks} RANKS ${ranks} LABELS mpi
              COMMAND $<TARGET_FILE:test_tdbem_balance>)
endforeach()
