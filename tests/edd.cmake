# Exact Domain Decomposition of one large Hines matrix (docs/edd.md): the plan and its CPU
# executor (unit, no GPU needed), and the GPU executor (gpu: exit 77 "skipped: no GPU" without a
# device, "skipped: no CUDA" in a build without CUDA).
se_test_program(test_edd ${CMAKE_CURRENT_SOURCE_DIR}/test_edd.c)
se_add_test(edd_cpu RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_edd> cpu ${SE_DATA_DIR}/morphologies)
se_add_test(edd_gpu RANKS 1 LABELS gpu COMMAND $<TARGET_FILE:test_edd> gpu ${SE_DATA_DIR}/morphologies)
