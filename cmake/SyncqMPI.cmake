# SyncqMPI.cmake — find the MPI libraries for the active-message MPI
# transport (src/am/mpi/) and build it once per MPI found.
#
# SYNCQ_MPI selects them: "auto" (default: every one found), "openmpi",
# "mpich", or "none". The core library never links MPI: each MPI gets its
# own syncq_am_mpi_<impl> static library (transport + syncq), and tests and
# lab helpers are built once per MPI too.
#
# Sets:
#   SYNCQ_MPI_IMPLS                 the MPIs found (e.g. "openmpi;mpich")
#   SYNCQ_MPI_ABSENT_REASON         why there is none, when empty
#   SYNCQ_MPI_RUN_<impl>            its mpirun
#   target syncq_am_mpi_<impl>      the transport built against it
set(SYNCQ_MPI "auto" CACHE STRING "MPI for the active-message transport: auto, openmpi, mpich or none")
set_property(CACHE SYNCQ_MPI PROPERTY STRINGS auto openmpi mpich none)

set(SYNCQ_MPI_IMPLS "")
set(SYNCQ_MPI_ABSENT_REASON "")
# impl -> pkg-config module and launcher of the Debian packages
set(_syncq_mpi_pc_openmpi ompi-c)
set(_syncq_mpi_run_openmpi mpirun.openmpi)
set(_syncq_mpi_pc_mpich mpich)
set(_syncq_mpi_run_mpich mpirun.mpich)

if(SYNCQ_MPI STREQUAL "none")
  set(SYNCQ_MPI_ABSENT_REASON "SYNCQ_MPI=none")
else()
  if(SYNCQ_MPI STREQUAL "auto")
    set(_want openmpi mpich)
  else()
    set(_want ${SYNCQ_MPI})
  endif()
  set(_missing "")
  foreach(impl ${_want})
    if(NOT DEFINED _syncq_mpi_pc_${impl})
      message(FATAL_ERROR "SYNCQ_MPI=${impl}: not one of auto, openmpi, mpich, none")
    endif()
    pkg_check_modules(SYNCQ_MPI_PC_${impl} QUIET IMPORTED_TARGET ${_syncq_mpi_pc_${impl}})
    find_program(SYNCQ_MPI_RUN_${impl} ${_syncq_mpi_run_${impl}})
    if(SYNCQ_MPI_PC_${impl}_FOUND AND SYNCQ_MPI_RUN_${impl})
      list(APPEND SYNCQ_MPI_IMPLS ${impl})
    else()
      list(APPEND _missing "${impl} (pkg-config ${_syncq_mpi_pc_${impl}} or ${_syncq_mpi_run_${impl}} not found)")
    endif()
  endforeach()
  if(NOT SYNCQ_MPI_IMPLS)
    string(REPLACE ";" ", " SYNCQ_MPI_ABSENT_REASON "no MPI found: ${_missing}")
  endif()
endif()

foreach(impl ${SYNCQ_MPI_IMPLS})
  add_library(syncq_am_mpi_${impl} STATIC ${PROJECT_SOURCE_DIR}/src/am/mpi/transport_mpi.c)
  target_include_directories(syncq_am_mpi_${impl} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(syncq_am_mpi_${impl} PRIVATE _GNU_SOURCE)
  target_link_libraries(syncq_am_mpi_${impl} PUBLIC syncq_static PkgConfig::SYNCQ_MPI_PC_${impl})
  syncq_warnings(syncq_am_mpi_${impl})
  set_target_properties(syncq_am_mpi_${impl} PROPERTIES OUTPUT_NAME syncq_am_mpi_${impl})
  install(TARGETS syncq_am_mpi_${impl} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endforeach()
if(SYNCQ_MPI_IMPLS)
  message(STATUS "syncq: active messages over MPI with: ${SYNCQ_MPI_IMPLS}")
else()
  message(STATUS "syncq: MPI transport absent: ${SYNCQ_MPI_ABSENT_REASON}")
endif()
