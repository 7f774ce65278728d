# Mono-morphology GPU Hines kernels (docs/gpu-hines.md): every kernel and layout against the CPU
# reference. Runs the host emulation of the kernels everywhere; the GPU part skips (exit 77,
# "skipped: no GPU") without a device, and the whole test without CUDA in the build.
se_test_program(test_gpu_hines ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_hines.c)
se_add_test(gpu_hines RANKS 1 LABELS gpu
            COMMAND $<TARGET_FILE:test_gpu_hines> ${SE_DATA_DIR}/morphologies)
