/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * own_session.h — run the rest of a program in a session of its own
 * (lc98's MPI helper, lc98_mpi_main.c: every rank of the applications
 * leads its session under either launcher).
 */
#ifndef SYNCQ_LAB_LC98_OWN_SESSION_H
#define SYNCQ_LAB_LC98_OWN_SESSION_H

/* Returns in the process that runs the rest of the program: this one if it
 * leads its session or cannot fork, else a child that leads a new session.
 * The parent never returns: it passes on the signals a launcher or a shell
 * sends (SIGTSTP as SIGSTOP to the child, then stops itself) and exits as
 * the child did. Call it before any thread starts (before MPI_Init). */
void lc98_own_session(void);

#endif
