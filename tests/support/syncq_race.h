/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq_race.h — named delay points inside the library, for race tests
 * (liburcu's yield injection: its test builds compile the library with
 * calls that can stall a thread at chosen instants).
 *
 * The library marks the instants a test may want to stretch with
 * SYNCQ_RACE_POINT("name"). In the installed library and in syncq_static
 * the macro is nothing (the fallback in syncq/wait.h). The test library
 * syncq_race (tests/CMakeLists.txt) compiles the lock sources with this
 * header forced in first, so each point calls syncq_race_hook when a test
 * has set one. A test that links syncq_race defines the hook variable with
 * SYNCQ_RACE_HOOK_DEFINE (at file scope, once) and sets it before it
 * starts threads; the hook decides by name and by thread whom to stall.
 *
 * Points:
 *   "lock.handover"  every lock's unlock, right after the store or
 *                    exchange that releases the lock (to a waiter, or to
 *                    whoever comes next): from there on the next holder
 *                    may destroy and free the lock.
 */
#ifndef SYNCQ_RACE_H
#define SYNCQ_RACE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*syncq_race_hook_fn)(const char *name);

/* Set before threads start, read only afterwards: no atomics needed. */
extern syncq_race_hook_fn syncq_race_hook;

#define SYNCQ_RACE_POINT(name)                    \
  do {                                            \
    syncq_race_hook_fn syncq_race_h_ = syncq_race_hook; \
    if (syncq_race_h_ != NULL) syncq_race_h_(name); \
  } while (0)

#define SYNCQ_RACE_HOOK_DEFINE syncq_race_hook_fn syncq_race_hook = NULL

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_RACE_H */
