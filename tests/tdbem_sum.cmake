# The tdbem summation (multi-vector/vector product, radiation), the front-ordered reference and
# the unknown orderings (docs/tdbem.md): random cases in memory, every ng against the front
# marching, intervals, thread counts, Morton/Hilbert orders and the quality score, ordering
# invariance.
se_test_program(test_tdbem_sum ${CMAKE_CURRENT_SOURCE_DIR}/test_tdbem_sum.c)
se_add_test(tdbem_sum RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_tdbem_sum>)
