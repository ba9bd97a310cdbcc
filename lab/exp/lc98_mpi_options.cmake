# SPDX-License-Identifier: BSD-2-Clause
# lc98_mpi_options.cmake — the options syncq-lab gives each MPI's launcher
# for lc98-logp's MPI points and for lc98-apps, written here only:
# lab/CMakeLists.txt compiles them into syncq-lab (SYNCQ_LAB_MPI, read by
# lab/exp/lc98_mpi_run.c, which launches "<mpirun> <options> -n <np>"),
# and tests/am/CMakeLists.txt hands the same strings to mpi_apps_run.sh
# and mpi_placement_run.sh, which launch the helper with that very line.
#
# Placement: each rank bound to one core, the ranks dealt to the cores in
# turn (the "placement=bind-to-core" every MPI group records,
# LC98_MPI_PLACEMENT; docs/lab.md says why). Open MPI refuses to bind more
# ranks than cores without "overload-allowed"; --oversubscribe lets it
# start 4 ranks on 2 cores; vader's single-copy mechanism (CMA) needs
# ptrace rights containers often lack.
#
# The options are split into words by the shell (popen in the lab, the
# scripts' unquoted expansion): no quotes, no shell metacharacters, and
# neither "," nor "|" (SYNCQ_LAB_MPI's separators; lab/CMakeLists.txt
# refuses them).
set(SYNCQ_LAB_MPI_OPTIONS_openmpi
    "--oversubscribe --map-by core --bind-to core:overload-allowed --mca btl_vader_single_copy_mechanism none")
set(SYNCQ_LAB_MPI_OPTIONS_mpich "-map-by core -bind-to core")
