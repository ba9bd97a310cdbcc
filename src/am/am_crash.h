/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_crash.h — named points of the send protocol where the crash matrix
 * (tests/am/crash_matrix_test.c) kills a process. Process-local; a NULL
 * hook (the default) costs one load and a branch per point.
 */
#ifndef SYNCQ_AM_CRASH_H
#define SYNCQ_AM_CRASH_H

enum am_crash_step {
  AM_STEP_LOCKED = 1, /* locking claims: lock held, nothing claimed yet (lock-free: position assigned) */
  AM_STEP_BULK_COPY,  /* packet and block claimed, bulk bytes not yet all copied */
  AM_STEP_COUNT
};

/* Set (or clear, NULL) the hook called at every crash point of this process. */
void am_test_set_step_hook(void (*hook)(int step));
extern void (*am_step_hook)(int step);

static inline void am_crash_point(int step) {
  if (am_step_hook) am_step_hook(step);
}

#endif /* SYNCQ_AM_CRASH_H */
