/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_cold.h — po-ring's cold spawn (spawn_cold, lab/exp/po_ring.c): the
 * spawn loop over N processes on a program's first postoffice system,
 * run in syncq-lab-po-cold (lab/exp/po_cold.c built with
 * SYNCQ_PO_COLD_HELPER), a fresh program per sample as the peers start a
 * fresh runtime, or in a forked child of the lab where that program is
 * absent.
 */
#ifndef SYNCQ_LAB_PO_COLD_H
#define SYNCQ_LAB_PO_COLD_H

#include <stddef.h>

/* Create a system of `backend` ("fiber" or "thread") with `mailbox`, room
 * for n processes and the given guard (0: the backend's default), time
 * spawning n processes that each wait for a message, from the first spawn
 * until every one has run once (the caller sleeps meanwhile), and return
 * the us per process; -1 when the system, a spawn or the teardown failed,
 * or some process had not run a minute after the spawns. After the timed
 * window (untimed) each process gets its message and is joined, and the
 * system is destroyed. */
double po_cold_spawn_us(const char *backend, const char *mailbox, int n, size_t guard);

#endif
