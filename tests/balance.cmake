# The balancer (partition/balance.c, docs/balance.md): unit tests of the heuristic, its caps and
# the exact optimum (paper 002, Table 1 and the worked example of Sec. 6.2), and the evaluator
# simengine-balance run on small files.
se_test_program(test_balance ${CMAKE_CURRENT_SOURCE_DIR}/test_balance.c)
se_add_test(balance_unit RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_balance>)
se_add_script_test(balance_cli LABELS unit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/balance_cli.sh)

# Moving cells between engines: export / import of the state, bitwise on the CPU, 1e-6 mV with
# a CUDA engine (gpu label; skips without a GPU).
se_test_program(test_neurons_state ${CMAKE_CURRENT_SOURCE_DIR}/test_neurons_state.c)
se_add_test(balance_state RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_neurons_state>)
se_add_test(balance_state_gpu RANKS 1 LABELS gpu COMMAND $<TARGET_FILE:test_neurons_state> gpu)

# The history writer (/simengine/balance) on 1, 2 and 3 ranks, read back with plain HDF5.
se_test_program(test_balance_history ${CMAKE_CURRENT_SOURCE_DIR}/test_balance_history.c)
foreach(ranks 1 2 3)
  se_add_test(balance_history_r${ranks} RANKS ${ranks} LABELS mpi
              COMMAND $<TARGET_FILE:test_balance_history>
                      ${CMAKE_CURRENT_BINARY_DIR}/balance_history_r${ranks})
endforeach()

# simengine with balanced CPU workers: bitwise identical output for --balance off/paper/rate on
# 2 and 3 ranks, the history's contents, bad options; the plot script on its output.
se_add_script_test(balance_e2e LABELS mpi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/balance_e2e.sh)
se_add_script_test(balance_plot LABELS unit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/balance_plot.sh)
