/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * delay.c — monotonic clock and the calibrated busy delay (syncq/clock.h).
 *
 * The loop is a dependent multiply-add chain on a small local vector: its
 * speed depends on the core, not on memory or other threads, and the
 * compiler cannot fold it (the running value passes through an empty asm).
 * Calibration times CALIB_ROUNDS runs of CALIB_ITERS iterations and keeps
 * the median rate, so a round slowed by preemption does not skew it.
 *
 * Calibration state: one atomic word, uncalibrated -> calibrating ->
 * calibrated, so that a delay may run in a signal handler (the backoff of
 * the algorithms registered SYNCQ_PROP_SIGNAL_SAFE). A calibrated delay
 * reads the word once. A delay that finds it uncalibrated claims it by CAS
 * and calibrates (clock reads and arithmetic on its own stack: nothing a
 * handler may not do). A delay that finds it calibrating never waits for
 * the calibrating thread, which may be the very thread a handler
 * interrupted: it spins on clock reads until its time has passed (wall
 * time, not CPU time, for this one delay). Only syncq_delay_calibrate(),
 * which must return the rate, waits for a calibration in progress.
 */
#include "syncq/clock.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "race_internal.h"

#define NS_PER_S 1000000000ull
#define NS_PER_US 1000.0
#define CALIB_ROUNDS 11       /* odd, for a true median */
#define CALIB_ITERS 400000ull /* about 1-2 ms a round on current cores */
#define VEC_LEN 8             /* local vector the loop updates */
#define CLOCK_READS 64        /* clock reads per calibration round of the clock's cost */

uint64_t syncq_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void syncq_delay_iters(uint64_t n) {
  uint64_t v[VEC_LEN] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (uint64_t i = 0; i < n; i++) {
    uint64_t *slot = &v[i % VEC_LEN];
    *slot = *slot * 6364136223846793005ull + i;
    /* Keep the vector live so the loop cannot be removed or vectorised. */
    __asm__ __volatile__("" : : "r"(v) : "memory");
  }
}

/* calib_state: UNCALIBRATED, CALIBRATED, or (above 0) calibrating, in the
 * process of that id. A child forked during its parent's calibration
 * inherits the word but not the thread: a caller that finds another
 * process's id there takes the calibration over. */
#define UNCALIBRATED 0
#define CALIBRATED (-1)

static _Atomic(int) calib_state = UNCALIBRATED;
static double iters_per_ns;    /* written by the one calibrating thread, read once calib_state is CALIBRATED */
static uint64_t clock_read_ns; /* what one syncq_now_ns costs; written and read as iters_per_ns */

/* The median of n values (n odd), sorted in place: an insertion sort on
 * the caller's stack (qsort is not async-signal-safe by POSIX). */
static double median(double *v, int n) {
  for (int i = 1; i < n; i++) {
    double x = v[i];
    int j = i;
    for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
    v[j] = x;
  }
  return v[n / 2];
}

static void calibrate(void) {
  double rate[CALIB_ROUNDS];
  syncq_delay_iters(CALIB_ITERS); /* warm up the core's frequency */
  for (int r = 0; r < CALIB_ROUNDS; r++) {
    uint64_t t0 = syncq_now_ns();
    syncq_delay_iters(CALIB_ITERS);
    uint64_t dt = syncq_now_ns() - t0;
    rate[r] = (double)CALIB_ITERS / (double)(dt ? dt : 1);
  }
  iters_per_ns = median(rate, CALIB_ROUNDS);
  /* The clock's own cost, which the delay below pays after every step:
   * about 20-30 ns through the vDSO on a bare core, two to four times that
   * in some guests, and a system call's worth where the clock source has
   * no vDSO path. The median round, as for the rate. */
  double cost[CALIB_ROUNDS];
  for (int r = 0; r < CALIB_ROUNDS; r++) {
    uint64_t t0 = syncq_now_ns();
    for (int k = 0; k < CLOCK_READS; k++) (void)syncq_now_ns();
    cost[r] = (double)(syncq_now_ns() - t0) / CLOCK_READS;
  }
  clock_read_ns = (uint64_t)median(cost, CALIB_ROUNDS);
  SYNCQ_RACE_POINT("delay.calibrating");
  /* release: publishes iters_per_ns and clock_read_ns; pairs with the
   * acquire loads of calib_state in calibrated() and syncq_delay_calibrate */
  atomic_store_explicit(&calib_state, CALIBRATED, memory_order_release);
}

/* True once the values are usable; calibrates first if nobody has begun.
 * False when another caller (maybe the thread this handler interrupted) is
 * calibrating: the caller must not wait for it. */
static bool calibrated(void) {
  /* acquire: pairs with the release store of CALIBRATED in calibrate() */
  int st = atomic_load_explicit(&calib_state, memory_order_acquire);
  if (st == CALIBRATED) return true;
  int self = (int)getpid(); /* async-signal-safe */
  for (;;) {
    if (st == self) return false; /* calibrating in this process: never wait for it */
    /* UNCALIBRATED, or a claim a fork left behind: claim it.
     * acquire (both ways): the claim itself publishes nothing, but a failed
     * CAS may read CALIBRATED, which pairs with calibrate()'s release store */
    if (atomic_compare_exchange_strong_explicit(&calib_state, &st, self, memory_order_acquire, memory_order_acquire))
      break;
    if (st == CALIBRATED) return true;
  }
  calibrate();
  return true;
}

double syncq_delay_calibrate(void) {
  while (!calibrated()) {
    /* another thread calibrates: wait for it (not callable from a handler
     * that may have interrupted that thread: the contract) */
    struct timespec nap = {0, 100 * 1000};
    (void)nanosleep(&nap, NULL);
  }
  return iters_per_ns * NS_PER_US;
}

/* A delay while another caller calibrates: the clock alone decides, read
 * between short fixed runs of the loop, so the delay ends within about one
 * run and one read of its request whatever the loop's speed. */
#define FALLBACK_ITERS 64

static void delay_uncalibrated(uint64_t ns) {
  uint64_t deadline = syncq_now_ns() + ns;
  while (syncq_now_ns() < deadline) syncq_delay_iters(FALLBACK_ITERS);
}

/* syncq_delay_ns runs the loop in steps of at most half the time left (by
 * the calibrated rate), reading the clock between steps, so the loop's own
 * speed drifting from the calibration (frequency changes, a busy sibling)
 * costs accuracy only in the last step. Each read costs clock_read_ns of
 * the time left, so a step is half of what is left after its read, and
 * once too little is left for a step and a read, the rest runs as one last
 * step with no read after it: otherwise every delay overran its request by
 * about one read, a tenth of a microsecond's delay where reads are slow.
 * A gap between two clock reads far longer than the step it covered means
 * the thread was preempted: the excess is added to the deadline, so the delay stays CPU work, as the papers' loops are, rather
 * than wall time that passes while descheduled. */
#define STEP_MAX_NS 1000.0     /* longest step between clock reads */
#define STEP_MIN_NS 40         /* the shortest step worth a read after it */
#define PREEMPT_SLACK_NS 20000 /* a step this much over its length was preempted */

void syncq_delay_ns(uint64_t ns) {
  if (ns == 0) return;
  if (!calibrated()) {
    delay_uncalibrated(ns);
    return;
  }
  /* The first read is part of the delay too, and its time stamp falls
   * about halfway through it: the deadline counts from the call. */
  uint64_t half_read = clock_read_ns / 2;
  uint64_t now = syncq_now_ns(), deadline = now + ns - (ns > half_read ? half_read : ns);
  while (deadline > now) {
    uint64_t left = deadline - now;
    if (left < 2 * clock_read_ns + STEP_MIN_NS) { /* the last step: no read after it */
      syncq_delay_iters((uint64_t)((double)left * iters_per_ns));
      return;
    }
    double step_ns = (double)(left - clock_read_ns) / 2;
    if (step_ns > STEP_MAX_NS) step_ns = STEP_MAX_NS;
    uint64_t iters = (uint64_t)(step_ns * iters_per_ns) + 1;
    syncq_delay_iters(iters);
    uint64_t after = syncq_now_ns(), took = after - now;
    if (took > (uint64_t)step_ns * 4 + PREEMPT_SLACK_NS) deadline += took - (uint64_t)step_ns;
    now = after;
  }
}
