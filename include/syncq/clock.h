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
 * syncq_delay_calibrate(), and takes a few milliseconds; a program that
 * times its delays calls syncq_delay_calibrate() before it starts timing.
 *
 * Signal handlers: the calibration is a state word, not pthread_once. A
 * delay that finds the loop calibrated reads that word and nothing else;
 * one that finds it uncalibrated calibrates (clock reads and arithmetic,
 * all async-signal-safe); one that finds a calibration in progress (in
 * another thread, or in the thread its handler interrupted) does not wait
 * for it: it spins on clock reads for its time (wall time for that one
 * delay, not CPU time).
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
 * Thread safety: any thread; from a signal handler too: the calibration
 * is a state word, not pthread_once, and a call that finds a calibration
 * in progress (maybe in the thread its handler interrupted) does not wait
 * for it.
 * Progress: wait-free: it spins for about ns of its own time (the first
 * call of the process also calibrates, a few ms), waiting for no other
 * thread; during another thread's calibration, for about ns of wall time. */
SYNCQ_API void syncq_delay_ns(uint64_t ns);

/* Busy-work for exactly n iterations of the calibrated loop.
 * Thread safety: any thread; from a signal handler too (a loop on the
 * caller's stack).
 * Progress: wait-free: exactly n iterations. */
SYNCQ_API void syncq_delay_iters(uint64_t n);

/* Calibrate now (idempotent and thread-safe; later calls return the first
 * result). Returns the loop's iterations per microsecond.
 * Thread safety: any thread, concurrently with other calls; not from a
 * signal handler that may have interrupted a calibration (it would wait
 * for its own thread).
 * Progress: blocking on first use: a call that finds another thread
 * calibrating waits for it (sleeping 0.1 ms between looks); later calls
 * return at once. */
SYNCQ_API double syncq_delay_calibrate(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_CLOCK_H */
