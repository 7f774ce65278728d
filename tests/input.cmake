# The neurons input file: model checks, parallel reader, serial writer (docs/input-neurons.md).
se_test_program(test_input ${CMAKE_CURRENT_SOURCE_DIR}/test_input.c)
se_add_test(input_unit LABELS unit COMMAND $<TARGET_FILE:test_input> unit ${CMAKE_CURRENT_BINARY_DIR})
se_add_test(input_mpi_2 RANKS 2 LABELS mpi COMMAND $<TARGET_FILE:test_input> mpi ${CMAKE_CURRENT_BINARY_DIR})
se_add_test(input_mpi_3 RANKS 3 LABELS mpi COMMAND $<TARGET_FILE:test_input> mpi ${CMAKE_CURRENT_BINARY_DIR})

find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  se_add_script_test(input_h5py LABELS unit
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_input.py
            $<TARGET_FILE:test_input> ${CMAKE_CURRENT_BINARY_DIR})
endif()
