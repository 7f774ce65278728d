# GPU batched tridiagonal solvers and the branch-level multi-morphology Hines solve
# (docs/gpu-tridiag.md). Exits 77 ("skipped") without a GPU or without CUDA in the build.
# Timings are in simengine-bench tridiag, not here.
se_test_program(test_gpu_tridiag ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_tridiag.c)
se_add_test(gpu_tridiag RANKS 1 LABELS gpu
            COMMAND $<TARGET_FILE:test_gpu_tridiag> ${SE_DATA_DIR}/morphologies)
