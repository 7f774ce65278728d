# io/report.c: the SONATA output file written on 1, 2 and 3 ranks and read back (test_report.c),
# then its layout checked by tests/check_output.py on the files the C test leaves behind.
se_test_program(test_report ${CMAKE_CURRENT_SOURCE_DIR}/test_report.c)
find_package(Python3 COMPONENTS Interpreter)
foreach(ranks 1 2 3)
  set(prefix ${CMAKE_CURRENT_BINARY_DIR}/report_out_r${ranks})
  if(ranks EQUAL 1)
    set(labels mpi unit)
  else()
    set(labels mpi)
  endif()
  se_add_test(report_r${ranks} RANKS ${ranks} LABELS ${labels}
              COMMAND $<TARGET_FILE:test_report> ${prefix})
  set_tests_properties(report_r${ranks} PROPERTIES FIXTURES_SETUP report_output_r${ranks}
                                                TIMEOUT 120)
  if(Python3_Interpreter_FOUND)
    se_add_script_test(report_check_output_r${ranks} LABELS unit
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_output.py
              ${prefix}.h5 ${prefix}_f64.h5 ${prefix}_empty.h5 ${prefix}_noframes.h5
              --population All)
    set_tests_properties(report_check_output_r${ranks} PROPERTIES
                         FIXTURES_REQUIRED report_output_r${ranks})
  endif()
endforeach()
