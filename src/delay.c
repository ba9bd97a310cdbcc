/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * delay.c — monotonic clock and the calibrated busy delay (syncq/clock.h).
 *
 * The loop is a dependent multiply-add chain on a small local vector: its
 * speed depends on the core, not on memory or other threads, and the
 * compiler cannot fold it (the running value passes through an empty asm).
 * Calibration times CALIB_ROUNDS runs of CALIB_ITERS iterations and keeps
 * the median rate, so a round slowed by preemption does not skew it.
 */
#include "syncq/clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

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

static double iters_per_ns;    /* written once under pthread_once */
static uint64_t clock_read_ns; /* what one syncq_now_ns costs; written once under pthread_once */
static pthread_once_t calib_once = PTHREAD_ONCE_INIT;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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
  qsort(rate, CALIB_ROUNDS, sizeof rate[0], cmp_double);
  iters_per_ns = rate[CALIB_ROUNDS / 2];
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
  qsort(cost, CALIB_ROUNDS, sizeof cost[0], cmp_double);
  clock_read_ns = (uint64_t)cost[CALIB_ROUNDS / 2];
}

double syncq_delay_calibrate(void) {
  pthread_once(&calib_once, calibrate);
  return iters_per_ns * NS_PER_US;
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
  pthread_once(&calib_once, calibrate);
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
