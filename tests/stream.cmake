# The streaming ("fused2") step's algorithm: its host reference (src/neurons_stream.c) against the
# CPU backend (docs/gpu.md). Runs without a GPU; the kernel itself is checked by e2e_gpu.
se_test_program(test_stream ${CMAKE_CURRENT_SOURCE_DIR}/test_stream.c)
se_add_test(engine_stream RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_stream>)
