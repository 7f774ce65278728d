# The balancer (partition/balance.c, docs/balance.md): unit tests of the heuristic, its caps and
# the exact optimum (paper 002, Table 1 and the worked example of Sec. 6.2), and the evaluator
# simengine-balance run on small files.
se_test_program(test_balance ${CMAKE_CURRENT_SOURCE_DIR}/test_balance.c)
se_add_test(balance_unit RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_balance>)
se_add_script_test(balance_cli LABELS unit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/balance_cli.sh)
