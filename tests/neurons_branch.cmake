# The CUDA backend's kernel choice (auto) and EDD threshold, on the host (cuda/neurons_branch.h,
# docs/gpu.md). The branch step itself is checked against the CPU path by e2e_gpu.
se_test_program(test_neurons_branch ${CMAKE_CURRENT_SOURCE_DIR}/test_neurons_branch.c)
se_add_test(neurons_branch_route RANKS 1 LABELS unit COMMAND $<TARGET_FILE:test_neurons_branch>)
