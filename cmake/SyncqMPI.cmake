# SPDX-License-Identifier: BSD-2-Clause
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
#   SYNCQ_MPI_INSTALLED             "<impl>=<pkg-config module>" per MPI,
#                                   for the installed CMake package
#   target syncq_am_mpi_<impl>      the transport built against it (build
#                                   tree: tests and lab helpers)
#   target syncq_am_mpi_archive_<impl>  the installed libsyncq_am_mpi_<impl>.a,
#                                   exported as syncq::am_mpi_<impl>
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

set(SYNCQ_MPI_INSTALLED "")
foreach(impl ${SYNCQ_MPI_IMPLS})
  # The build tree's transport (tests, lab helpers): links the counting
  # library, whose internals keep their names.
  add_library(syncq_am_mpi_${impl} STATIC ${PROJECT_SOURCE_DIR}/src/am/mpi/transport_mpi.c)
  target_include_directories(syncq_am_mpi_${impl} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(syncq_am_mpi_${impl} PRIVATE _GNU_SOURCE)
  target_link_libraries(syncq_am_mpi_${impl} PUBLIC syncq_static PkgConfig::SYNCQ_MPI_PC_${impl})
  syncq_warnings(syncq_am_mpi_${impl})
  set_target_properties(syncq_am_mpi_${impl} PROPERTIES OUTPUT_NAME syncq_am_mpi_${impl}_internal)

  # The installed transport, libsyncq_am_mpi_<impl>.a: the transport's
  # objects together with the library's (those of libsyncq.a), every
  # internal name renamed syncq__* by the same rule as libsyncq.a
  # (cmake/syncq_archive.sh). Self-contained: a program links it alone (or
  # before -lsyncq, shared or static) and its MPI, nothing else of syncq.
  add_library(syncq_am_mpi_objects_${impl} OBJECT ${PROJECT_SOURCE_DIR}/src/am/mpi/transport_mpi.c)
  target_include_directories(syncq_am_mpi_objects_${impl} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(syncq_am_mpi_objects_${impl} PRIVATE _GNU_SOURCE)
  target_link_libraries(syncq_am_mpi_objects_${impl} PRIVATE PkgConfig::SYNCQ_MPI_PC_${impl})
  syncq_warnings(syncq_am_mpi_objects_${impl})
  set_target_properties(syncq_am_mpi_objects_${impl} PROPERTIES C_VISIBILITY_PRESET hidden)
  add_library(syncq_am_mpi_archive_${impl} STATIC
    $<TARGET_OBJECTS:syncq_objects> $<TARGET_OBJECTS:syncq_am_mpi_objects_${impl}>)
  set_target_properties(syncq_am_mpi_archive_${impl} PROPERTIES
    OUTPUT_NAME syncq_am_mpi_${impl} EXPORT_NAME am_mpi_${impl})
  add_custom_command(TARGET syncq_am_mpi_archive_${impl} POST_BUILD
    COMMAND ${PROJECT_SOURCE_DIR}/cmake/syncq_archive.sh $<TARGET_FILE:syncq_am_mpi_archive_${impl}> ${CMAKE_NM}
            ${CMAKE_OBJCOPY} ${CMAKE_AR} $<TARGET_OBJECTS:syncq_objects> $<TARGET_OBJECTS:syncq_am_mpi_objects_${impl}>
    COMMAND_EXPAND_LISTS
    COMMENT "libsyncq_am_mpi_${impl}.a: the transport and the library, internal symbols renamed syncq__*")
  target_include_directories(syncq_am_mpi_archive_${impl} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # An installed consumer's MPI: syncqConfig.cmake makes
  # PkgConfig::syncq_mpi_<impl> from the same pkg-config module.
  target_link_libraries(syncq_am_mpi_archive_${impl} PUBLIC Threads::Threads ${SYNCQ_ATOMIC_LIB} ${SYNCQ_FIBER_LIBS}
    $<BUILD_INTERFACE:PkgConfig::SYNCQ_MPI_PC_${impl}> $<INSTALL_INTERFACE:PkgConfig::syncq_mpi_${impl}>)
  install(TARGETS syncq_am_mpi_archive_${impl} EXPORT syncqMPI_${impl}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library)
  install(EXPORT syncqMPI_${impl} NAMESPACE syncq:: FILE syncq_am_mpi_${impl}Targets.cmake
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/syncq COMPONENT library)
  # pkg-config: syncq-am-mpi-<impl>.pc (the archive is static: its
  # libraries are all in Libs).
  set(SYNCQ_MPI_IMPL ${impl})
  set(SYNCQ_MPI_PC_MODULE ${_syncq_mpi_pc_${impl}})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/syncq-am-mpi.pc.in ${PROJECT_BINARY_DIR}/syncq-am-mpi-${impl}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/syncq-am-mpi-${impl}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT library)
  list(APPEND SYNCQ_MPI_INSTALLED "${impl}=${_syncq_mpi_pc_${impl}}")
endforeach()
if(SYNCQ_MPI_IMPLS)
  message(STATUS "syncq: active messages over MPI with: ${SYNCQ_MPI_IMPLS}")
else()
  message(STATUS "syncq: MPI transport absent: ${SYNCQ_MPI_ABSENT_REASON}")
endif()
