/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_mpi_run.h — how syncq-lab starts its MPI helper (lab/apps/lc98/)
 * under mpirun for lc98-logp's MPI points and for lc98-apps, and reads its
 * lines back.
 */
#ifndef SYNCQ_LAB_LC98_MPI_RUN_H
#define SYNCQ_LAB_LC98_MPI_RUN_H

#include <stddef.h>

#include "../lab.h"

#define LC98_MPI_MAX 2 /* Open MPI, MPICH */
/* Where every launch puts its ranks, under either MPI: each rank bound to
 * one core, ranks dealt to the cores in turn (rank r on core r mod the
 * cores, two or more to a core beyond), as each launcher's options
 * (lc98_mpi_options.cmake) tell it explicitly. Recorded with the results
 * (the MPI groups' "placement" param); docs/lab.md says why. */
#define LC98_MPI_PLACEMENT "bind-to-core"
#define LC98_MPI_MAX_LINES 16
#define LC98_MPI_MAX_VALUES 3

typedef struct lc98_mpi {
  char impl[16];    /* "openmpi", "mpich" */
  char helper[512]; /* syncq-lab-mpi-<impl> */
  char mpirun[256];
  char options[256]; /* the launcher's options (lc98_mpi_options.cmake) */
} lc98_mpi;

typedef struct lc98_mpi_line {
  char variant[32];
  double v[LC98_MPI_MAX_VALUES];
  int nv;
  int ok;        /* the helper said "ok" (results verified) */
  char why[256]; /* after FAIL */
} lc98_mpi_line;

/* The MPIs this build has helpers for; 0 with *absent set to why. */
int lc98_mpi_list(lc98_mpi *out, int cap, const char **absent);
/* The command line prefix the lab launches `m` with (also for the report):
 * "<mpirun> <options> -n <np>", the line tests/am/mpi_apps_run.sh and
 * mpi_placement_run.sh launch the helper with. */
void lc98_mpi_command(const lc98_mpi *m, int np, char *out, size_t len);
/* Run the helper with np ranks and the words of `args`; parse its lines.
 * Returns the number of lines, or -1 after lab_fail(). */
int lc98_mpi_launch(lab_ctx *ctx, const lc98_mpi *m, int np, const char *args, lc98_mpi_line *lines, int cap);

#endif
