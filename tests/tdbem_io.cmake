# The tdbem input and output files and the synthetic cases (io/input_tdbem.c, io/output_tdbem.c,
# io/prep_tdbem.c; docs/input-tdbem.md, docs/prep.md): generator properties and a bounded marching
# over 3000 steps, round trips, every bad-input error, intervals on 1, 2 and 3 ranks, the
# collective output writer; simengine-prep tdbem's command line.
se_test_program(test_tdbem_io ${CMAKE_CURRENT_SOURCE_DIR}/test_tdbem_io.c)
se_add_test(tdbem_io_unit LABELS unit
            COMMAND $<TARGET_FILE:test_tdbem_io> unit ${CMAKE_CURRENT_BINARY_DIR})
se_add_test(tdbem_io_mpi_2 RANKS 2 LABELS mpi
            COMMAND $<TARGET_FILE:test_tdbem_io> mpi ${CMAKE_CURRENT_BINARY_DIR})
se_add_test(tdbem_io_mpi_3 RANKS 3 LABELS mpi
            COMMAND $<TARGET_FILE:test_tdbem_io> mpi ${CMAKE_CURRENT_BINARY_DIR})

# simengine-prep tdbem: a small airplane read back on 2 ranks; bad options exit with status 2.
set(tdbem_cli_file ${CMAKE_CURRENT_BINARY_DIR}/tdbem_cli.h5)
se_add_script_test(tdbem_prep_cli LABELS unit
  COMMAND $<TARGET_FILE:simengine-prep> tdbem --shape airplane --n 120 --kmax 40 --dmax 8
          --mean-length 4.5 --steps 25 --precision double --seed 5 -o ${tdbem_cli_file})
set_tests_properties(tdbem_prep_cli PROPERTIES FIXTURES_SETUP tdbem_cli_file
                     PASS_REGULAR_EXPRESSION "N 120 unknowns.*kmax 40")
se_add_test(tdbem_prep_cli_read RANKS 2 LABELS mpi
            COMMAND $<TARGET_FILE:test_tdbem_io> read ${tdbem_cli_file})
set_tests_properties(tdbem_prep_cli_read PROPERTIES FIXTURES_REQUIRED tdbem_cli_file)
foreach(bad "--n;2" "--shape;cube" "--mean-length;20" "--kmax;10;--dmax;15" "--precision;half" "--bogus;1")
  string(REPLACE ";" "_" bad_name "${bad}")
  se_add_script_test(tdbem_prep_bad${bad_name} LABELS unit
    COMMAND sh -c "\"$0\" tdbem \"$@\" -o ${CMAKE_CURRENT_BINARY_DIR}/tdbem_never.h5\ntest $? -eq 2"
            $<TARGET_FILE:simengine-prep> ${bad})
endforeach()

# se_tdbem_run (src/tdbem_run.c): the marching on 1, 2 and 3 ranks against the reference.
foreach(ranks 1 2 3)
  se_add_test(tdbem_run_r${ranks} RANKS ${ranks} LABELS mpi
              COMMAND $<TARGET_FILE:test_tdbem_io> run ${CMAKE_CURRENT_BINARY_DIR})
endforeach()
