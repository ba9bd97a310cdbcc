/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/clock.h — the monotonic clock and the calibrated busy delay.
 *
 * syncq_delay_ns() is the papers' "work" and "delay" loop (001: 6 us after
 * every operation; 003: a work loop of a given mean): it spins a computation
 * on thread-local data for a number of iterations calibrated against the
 * monotonic clock, so it costs CPU time, not wall time. A thread that is
 * preempted in the middle of it resumes where it was, as the papers' loops
 * would, instead of finding its delay already elapsed.
 *
 * Accuracy: within 10% of the request for 1..100 us on an unloaded core
 * (tests/pr/delay_test.c checks the median), the delay's own clock reads
 * included: calibration measures what a read costs (from 20 ns through the
 * vDSO to several times that in some virtual machines) and the delay
 * leaves room for its reads. Calibration runs once, on first use or on
 * syncq_delay_calibrate(), and takes about 20 ms.
 */
#ifndef SYNCQ_CLOCK_H
#define SYNCQ_CLOCK_H

#include "syncq/export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nanoseconds from CLOCK_MONOTONIC.
 * Thread safety: any thread; from a signal handler too (clock_gettime is
 * async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API uint64_t syncq_now_ns(void);

/* Busy-work for about ns nanoseconds of CPU time (0 returns at once).
 * Thread safety: any thread; not from a signal handler (the first use
 * calibrates under pthread_once).
 * Progress: wait-free once calibrated (it spins for about ns of its own
 * time, waiting for no other thread); the first call of the process may
 * wait for the calibration another thread is running. */
SYNCQ_API void syncq_delay_ns(uint64_t ns);

/* Busy-work for exactly n iterations of the calibrated loop.
 * Thread safety: any thread; from a signal handler too (a loop on the
 * caller's stack).
 * Progress: wait-free: exactly n iterations. */
SYNCQ_API void syncq_delay_iters(uint64_t n);

/* Calibrate now (idempotent and thread-safe; later calls return the first
 * result). Returns the loop's iterations per microsecond.
 * Thread safety: any thread, concurrently with other calls (pthread_once);
 * not from a signal handler.
 * Progress: blocking on first use: a call that finds another thread
 * calibrating waits for it; later calls return at once. */
SYNCQ_API double syncq_delay_calibrate(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_CLOCK_H */
