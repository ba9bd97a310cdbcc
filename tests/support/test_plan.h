/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_plan.h — the one place a test learns about processing units (PUs),
 * so that every test plans the same work on any machine.
 *
 *  - The plan's PU count: SYNCQ_TEST_PUS=N (1..TEST_PLAN_MAX_PUS) makes
 *    the suite plan as if the machine had N PUs; unset, it is the
 *    machine's count (hwloc). A bad value is a test-setup error: the
 *    program says so and exits with a failure.
 *  - Confinement: an oversubscription test binds the whole process to a
 *    fixed small set of PUs (TEST_PLAN_CONFINED_PUS, fewer where the plan
 *    or the machine has fewer; one PU per core where it can, chosen with
 *    hwloc) and sizes its threads from that set, so "8x oversubscribed"
 *    is 16 threads on 2 PUs on a 2-core VM and on a 128-core server alike,
 *    and a peer that spins without yielding cannot stall a large machine.
 *  - Caps: no stress runs more than TEST_PLAN_MAX_THREADS threads, and a
 *    recorded history (tests/support/lincheck.h) has TEST_PLAN_HISTORY_THREADS.
 *
 * Call test_plan_confine() first thing in main() of a program that
 * oversubscribes (before any thread exists: without hwloc only the calling
 * thread is bound, and threads inherit it); the thread-count helpers call
 * it too, idempotently.
 */
#ifndef SYNCQ_TEST_PLAN_H
#define SYNCQ_TEST_PLAN_H

/* SYNCQ_TEST_PUS accepts 1..TEST_PLAN_MAX_PUS. */
#define TEST_PLAN_MAX_PUS 1024
/* PUs an oversubscription test is confined to: the size of the machine the
 * suite was written on, so its oversubscription factors mean there what
 * they meant here. */
#define TEST_PLAN_CONFINED_PUS 2
/* Threads per confined PU in an oversubscribed stress run. */
#define TEST_PLAN_OVERSUBSCRIPTION 8
/* Most threads in any one stress run; also the Anderson and array locks'
 * slot count (SYNCQ_LOCK_ARRAY_MAX_SLOTS), so a lock stress never plans
 * past a documented thread limit. */
#define TEST_PLAN_MAX_THREADS 64
/* Threads that record one short linearizability history. */
#define TEST_PLAN_HISTORY_THREADS 4

/* The plan's PU count: SYNCQ_TEST_PUS, else the machine's (hwloc). */
int test_plan_pus(void);

/* The machine's PU count, whatever SYNCQ_TEST_PUS says: only to check a
 * library default that counts PUs itself (e.g. a fiber system's default
 * scheduler count), never to size a test. */
int test_plan_machine_pus(void);

/* Confine the whole process to the fixed small PU set (once; later calls
 * return the same) and return how many PUs it holds:
 * min(TEST_PLAN_CONFINED_PUS, test_plan_pus(), the PUs this process may
 * use). */
int test_plan_confine(void);

/* per_pu threads on each confined PU (confining first), capped at
 * TEST_PLAN_MAX_THREADS: e.g. test_plan_oversubscribed(TEST_PLAN_OVERSUBSCRIPTION)
 * is 16 on any machine with 2 or more PUs. */
int test_plan_oversubscribed(int per_pu);

#endif /* SYNCQ_TEST_PLAN_H */
