# The tdbem GPU summation (docs/tdbem.md Sections 12 and 13): the Full-Blocking and
# Contiguous-Blocking kernels against the CPU summation and the front reference for every ng, and
# whole runs with GPU workers against the CPU-only run on 1 and 2 ranks. Label gpu: they skip
# (exit 77, "skipped: no GPU") without a device or without CUDA in the build.
se_test_program(test_tdbem_gpu ${CMAKE_CURRENT_SOURCE_DIR}/test_tdbem_gpu.c)
se_add_test(tdbem_gpu RANKS 1 LABELS gpu COMMAND $<TARGET_FILE:test_tdbem_gpu>)
se_test_program(test_tdbem_gpu_run ${CMAKE_CURRENT_SOURCE_DIR}/test_tdbem_gpu_run.c)
foreach(ranks 1 2)
  se_add_test(tdbem_gpu_run_r${ranks} RANKS ${ranks} LABELS gpu COMMAND $<TARGET_FILE:test_tdbem_gpu_run>)
endforeach()
