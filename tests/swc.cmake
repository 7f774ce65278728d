# SWC import, synthetic morphology classes and simengine-prep (docs/morphologies.md, docs/prep.md).
se_test_program(test_swc ${PROJECT_SOURCE_DIR}/tests/test_swc.c)
se_add_test(swc_import LABELS unit COMMAND $<TARGET_FILE:test_swc> ${SE_DATA_DIR})
se_add_script_test(swc_prep LABELS unit COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/prep_e2e.sh)
