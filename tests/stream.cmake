# The streaming ("fused2") and coop steps' algorithms: their host models (src/neurons_stream.c,
# src/neurons_coop.c) against the CPU backend (docs/gpu.md); where a GPU is visible, the fused2
# and coop kernels themselves too. Runs without a GPU (label unit); labelled gpu as well, so that
# `ctest -L gpu` (tools/device/check.sh) runs the kernels on the device.
se_test_program(test_stream ${CMAKE_CURRENT_SOURCE_DIR}/test_stream.c)
# the gen kernel's source compiled and run on the host (tests/gen_host_shim.h, gen_host_driver.cpp)
target_compile_definitions(test_stream PRIVATE SE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(test_stream PRIVATE ${CMAKE_DL_LIBS})
se_add_test(engine_stream RANKS 1 LABELS unit gpu COMMAND $<TARGET_FILE:test_stream>)

# tools/plot_step.py on simengine-bench step's CSV (the committed H200 table and a CPU run).
se_add_script_test(step_plot LABELS unit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/step_plot.sh)

# simengine-bench gen-source and tools/gen_phases.py (gen's instructions per warp and phase).
se_add_script_test(gen_phases LABELS unit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gen_phases.sh)
