# Cross-check against NEURON itself (docs/crosscheck.md): needs `pip install neuron` and h5py;
# skips (exit 77) without them. Run with `ctest -L crosscheck`.
# crosscheck_neuron: single compartments and unbranched cables, equal to NEURON up to rounding.
se_add_script_test(crosscheck_neuron LABELS crosscheck
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/crosscheck_neuron.py)
# crosscheck_neuron_branched: a branched passive cell (96ML); simengine and NEURON differ at the
# branch points, and each must equal its own linear model (pairwise coupling / star) to rounding.
se_add_script_test(crosscheck_neuron_branched LABELS crosscheck
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/crosscheck_neuron.py --case none --passive --amp 0.1
          --branched ${PROJECT_SOURCE_DIR}/data/morphologies/96ML.CNG.swc)
