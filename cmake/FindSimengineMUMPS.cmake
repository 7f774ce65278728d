# FindSimengineMUMPS: the MPI build of MUMPS (double precision, C interface) with SCOTCH and
# PT-SCOTCH orderings, as Debian ships it in libmumps-ptscotch-dev (docs/tdbem-m0.md).
#
# Hints (CMake variables; the root CMakeLists.txt sets them from the environment when unset):
#   MUMPS_ROOT   prefix holding include/dmumps_c.h and lib[/<multiarch>]/libdmumps_ptscotch.so
#   SCOTCH_ROOT  prefix holding lib[/<multiarch>]/libptscotch.so (and libptscotcherr, libptesmumps)
# and CMAKE_PREFIX_PATH. The libraries searched for:
#   libdmumps_ptscotch (else the plain libdmumps, whose orderings lack SCOTCH: a warning says so),
#   libmumps_common_ptscotch and libpord_ptscotch (or the plain ones, matching libdmumps); for the
#   PT-SCOTCH build libptscotch, libptscotcherr and libptesmumps; ScaLAPACK (libscalapack-openmpi).
# What the Debian shared libraries need (ldd libdmumps_ptscotch.so libmumps_common_ptscotch.so):
# libptscotch-7.0, libptscotcherr-7.0, libptesmumps-7.0, libscalapack-openmpi, liblapack, libblas,
# libgfortran, libmpi_mpifh. They record these themselves, so only libdmumps and libmumps_common are
# required here; the others are linked when found so that their folders reach the run path (the
# GPU machine's kit lives outside the loader's default path). libscotch and libscotcherr are NOT
# linked: SCOTCH 7's libptscotch holds the sequential SCOTCH too, and a second copy of every
# SCOTCH_* symbol would come before it in the process. A link test against dmumps_c catches an
# installation that still misses something.
#
# Defines:
#   SE::MUMPS                      imported target (include folder, libraries)
#   SimengineMUMPS_FOUND
#   SimengineMUMPS_VERSION         from dmumps_c.h
#   SimengineMUMPS_HAS_PTSCOTCH    TRUE when libdmumps_ptscotch was found

string(CONCAT _se_mumps_install_hint
  "On Debian/Ubuntu: apt-get install libmumps-ptscotch-dev libscotch-dev libptscotch-dev "
  "(tools/install-deps.sh does it), elsewhere set MUMPS_ROOT (and SCOTCH_ROOT) to the "
  "installation prefix.")

# Folders under the hinted prefixes, searched before the default ones.
set(_se_mumps_inc_hints "")
set(_se_mumps_lib_hints "")
foreach(_root IN ITEMS "${MUMPS_ROOT}" "${SCOTCH_ROOT}")
  if(_root)
    list(APPEND _se_mumps_inc_hints "${_root}/include" "${_root}/include/mumps")
    list(APPEND _se_mumps_lib_hints "${_root}/lib" "${_root}/lib64")
    if(CMAKE_LIBRARY_ARCHITECTURE)
      list(APPEND _se_mumps_lib_hints "${_root}/lib/${CMAKE_LIBRARY_ARCHITECTURE}")
    endif()
  endif()
endforeach()

find_path(SimengineMUMPS_INCLUDE_DIR dmumps_c.h HINTS ${_se_mumps_inc_hints}
          DOC "Folder of dmumps_c.h")

# libdmumps_ptscotch is preferred wherever it is; the plain libdmumps is the fallback. The common
# and PORD libraries must come from the same build.
find_library(SimengineMUMPS_DMUMPS_PTSCOTCH_LIBRARY NAMES dmumps_ptscotch
             HINTS ${_se_mumps_lib_hints} DOC "MUMPS double precision library (PT-SCOTCH build)")
if(SimengineMUMPS_DMUMPS_PTSCOTCH_LIBRARY)
  set(SimengineMUMPS_HAS_PTSCOTCH TRUE)
  set(SimengineMUMPS_DMUMPS_LIBRARY "${SimengineMUMPS_DMUMPS_PTSCOTCH_LIBRARY}")
  set(_se_mumps_suffix "_ptscotch")
else()
  find_library(SimengineMUMPS_DMUMPS_PLAIN_LIBRARY NAMES dmumps HINTS ${_se_mumps_lib_hints}
               DOC "MUMPS double precision library (without PT-SCOTCH)")
  set(SimengineMUMPS_HAS_PTSCOTCH FALSE)
  set(SimengineMUMPS_DMUMPS_LIBRARY "${SimengineMUMPS_DMUMPS_PLAIN_LIBRARY}")
  set(_se_mumps_suffix "")
endif()
find_library(SimengineMUMPS_COMMON${_se_mumps_suffix}_LIBRARY NAMES mumps_common${_se_mumps_suffix}
             HINTS ${_se_mumps_lib_hints} DOC "MUMPS common library")
set(SimengineMUMPS_COMMON_LIBRARY "${SimengineMUMPS_COMMON${_se_mumps_suffix}_LIBRARY}")

# PORD, PT-SCOTCH and ScaLAPACK: linked when found (see above). The versioned names cover a
# runtime-only installation without the -dev symlinks (the GPU machine's kit has ScaLAPACK so).
set(_se_mumps_optional "")
find_library(SimengineMUMPS_PORD${_se_mumps_suffix}_LIBRARY NAMES pord${_se_mumps_suffix}
             HINTS ${_se_mumps_lib_hints} DOC "MUMPS PORD ordering library")
if(SimengineMUMPS_PORD${_se_mumps_suffix}_LIBRARY)
  list(APPEND _se_mumps_optional "${SimengineMUMPS_PORD${_se_mumps_suffix}_LIBRARY}")
endif()
if(SimengineMUMPS_HAS_PTSCOTCH)
  foreach(_lib IN ITEMS ptscotch ptscotcherr ptesmumps)
    find_library(SimengineMUMPS_${_lib}_LIBRARY NAMES ${_lib} lib${_lib}-7.0.so NAMES_PER_DIR
                 HINTS ${_se_mumps_lib_hints} DOC "PT-SCOTCH library ${_lib}")
    if(SimengineMUMPS_${_lib}_LIBRARY)
      list(APPEND _se_mumps_optional "${SimengineMUMPS_${_lib}_LIBRARY}")
    endif()
  endforeach()
endif()
find_library(SimengineMUMPS_SCALAPACK_LIBRARY
             NAMES scalapack-openmpi scalapack libscalapack-openmpi.so.2.2 NAMES_PER_DIR
             HINTS ${_se_mumps_lib_hints} DOC "ScaLAPACK (MPI) library")
if(SimengineMUMPS_SCALAPACK_LIBRARY)
  list(APPEND _se_mumps_optional "${SimengineMUMPS_SCALAPACK_LIBRARY}")
endif()

if(SimengineMUMPS_INCLUDE_DIR AND EXISTS "${SimengineMUMPS_INCLUDE_DIR}/dmumps_c.h")
  file(STRINGS "${SimengineMUMPS_INCLUDE_DIR}/dmumps_c.h" _se_mumps_version_line
       REGEX "^#define MUMPS_VERSION \"[0-9.]+\"")
  string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" SimengineMUMPS_VERSION "${_se_mumps_version_line}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SimengineMUMPS
  REQUIRED_VARS SimengineMUMPS_DMUMPS_LIBRARY SimengineMUMPS_COMMON_LIBRARY
                SimengineMUMPS_INCLUDE_DIR
  VERSION_VAR SimengineMUMPS_VERSION
  REASON_FAILURE_MESSAGE
    "simengine needs MUMPS (MPI build, double precision) for the TD-BEM matrix M0. ${_se_mumps_install_hint}")

if(SimengineMUMPS_FOUND)
  # A link test: dmumps_c must resolve with these libraries and MPI.
  include(CheckCSourceCompiles)
  include(CMakePushCheckState)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_QUIET TRUE)
  set(CMAKE_REQUIRED_INCLUDES "${SimengineMUMPS_INCLUDE_DIR}")
  set(CMAKE_REQUIRED_LIBRARIES "${SimengineMUMPS_DMUMPS_LIBRARY}" "${SimengineMUMPS_COMMON_LIBRARY}"
      ${_se_mumps_optional} MPI::MPI_C)
  check_c_source_compiles(
    "#include <dmumps_c.h>\nint main(void) { DMUMPS_STRUC_C id; id.job = -2; dmumps_c(&id); return 0; }"
    SimengineMUMPS_LINKS)
  cmake_pop_check_state()
  if(NOT SimengineMUMPS_LINKS)
    unset(SimengineMUMPS_LINKS CACHE)
    message(FATAL_ERROR
      "MUMPS was found (${SimengineMUMPS_DMUMPS_LIBRARY}) but a program calling dmumps_c does not "
      "link against it and MPI (see CMakeFiles/CMakeError.log). A shared MUMPS names its own "
      "dependencies (ldd shows which are missing); a static one also needs SCOTCH, ScaLAPACK, "
      "BLAS/LAPACK, libgfortran and MPI's Fortran library, which this module does not add. "
      "${_se_mumps_install_hint}")
  endif()
  if(NOT SimengineMUMPS_HAS_PTSCOTCH)
    message(WARNING
      "Found ${SimengineMUMPS_DMUMPS_LIBRARY}, a MUMPS without SCOTCH/PT-SCOTCH: M0 will be ordered "
      "by MUMPS's fallback ordering (the solver reports which). ${_se_mumps_install_hint}")
  endif()
  if(NOT TARGET SE::MUMPS)
    add_library(SE::MUMPS INTERFACE IMPORTED)
    set_target_properties(SE::MUMPS PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${SimengineMUMPS_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES
        "${SimengineMUMPS_DMUMPS_LIBRARY};${SimengineMUMPS_COMMON_LIBRARY};${_se_mumps_optional};MPI::MPI_C")
  endif()
endif()

mark_as_advanced(SimengineMUMPS_INCLUDE_DIR SimengineMUMPS_DMUMPS_PTSCOTCH_LIBRARY
                 SimengineMUMPS_DMUMPS_PLAIN_LIBRARY SimengineMUMPS_COMMON_ptscotch_LIBRARY
                 SimengineMUMPS_COMMON_LIBRARY SimengineMUMPS_PORD_ptscotch_LIBRARY
                 SimengineMUMPS_PORD_LIBRARY SimengineMUMPS_SCALAPACK_LIBRARY
                 SimengineMUMPS_ptscotch_LIBRARY SimengineMUMPS_ptscotcherr_LIBRARY
                 SimengineMUMPS_ptesmumps_LIBRARY)
