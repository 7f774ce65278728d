# Engine numerics: Hines vs dense LU, passive cable vs analytic, HH spike shape and convergence,
# src/hh.h's rates vs hh.mod's literal form.
foreach(t hines cable hh hh_forms)
  se_test_program(test_${t} ${CMAKE_CURRENT_SOURCE_DIR}/test_${t}.c)
  se_add_test(engine_${t} RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_${t}>)
endforeach()

se_test_program(test_partition ${CMAKE_CURRENT_SOURCE_DIR}/test_partition.c)
se_add_test(partition_contiguous RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_partition>)
