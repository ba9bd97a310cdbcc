/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_timer_test.c — when a fiber scheduler reads the clock for its
 * deadlines (src/po/timer.h's po_due_gate): the counter's calibration
 * refuses a source that runs backwards, stands still or changes rate; the
 * gate never tells a scheduler to skip the clock once a deadline has
 * passed, nor for a deadline it was not set for; and a recv_timeout fires
 * on time on a scheduler whose other fibers switch constantly, and on an
 * idle one. The kernel's list of clocksources is parsed from files the
 * test writes (po_tsc_listed).
 *
 * Built twice: po_timer_test reads the system's list; with
 * PO_TIMER_TEST_UNLISTED (po_timer_unlisted_test) the process's
 * calibration reads a list the test wrote without "tsc", as a kernel that
 * marked its TSC unstable shows it: on x86-64 the counter is then refused
 * (po_ticks_why says so), the gate never skips the clock, and the
 * deadlines on the busy and the idle scheduler fire within the same
 * bound, every switch reading the clock.
 *
 * With PO_TIMER_TEST_SLOW=k (po_timer_slow_test) the calibrated rate is
 * scaled by k before use, as if the counter had slowed to 1/k of its
 * calibration since (a virtual machine moved to a host of a slower TSC
 * without TSC scaling): a gate alone then skips looks past a deadline;
 * in a fiber system the rate check (po_drift_check) trips while the busy
 * fibers run, so the busy and the idle scheduler's deadlines fire on
 * time, and syncq_po_clock_gate names both rates. With
 * PO_TIMER_TEST_FAST=k (po_timer_fast_test) the rate is scaled by 1/k, a
 * counter sped up k times: the check trips the same way. In the plain
 * build the machine's own steady counter never trips it.
 *
 * The check itself is fed made-up pairs (a counter's bracket round a
 * clock read, the clock's jitter injected): 20,000 of a counter 3% off
 * with 100 us of jitter never trip it, the tolerance's edges fall where
 * PO_DRIFT_TOL_DEN puts them, a rate that changes mid-run (halved, 1/128,
 * 7/8, stopped, doubled, 9/8) trips it within PO_DRIFT_NOTICE_NS, and
 * pairs a preemption widened or that run backwards are not used.
 *
 * syncq_po_clock_gate says what the process decided, as a flag and a line
 * that fits SYNCQ_PO_CLOCK_GATE_LEN whatever the reason; a short buffer
 * gets the line's first bytes and SYNCQ_ELIMIT, bad inputs SYNCQ_EINVAL
 * with nothing written.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "po/timer.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/po.h"

#define MS 1000000ull

/* ---- calibration against made-up sources ---- */

static uint64_t fake_ns, fake_ticks, calls;
static uint64_t fake_rate_num = 3, bad_at = UINT64_MAX;

static void fake_reset(void) {
  fake_ns = fake_ticks = calls = 0;
  fake_rate_num = 3;
  bad_at = UINT64_MAX;
}

static uint64_t ns_steady(void) { return fake_ns += 50; }
static uint64_t ticks_steady(void) { return fake_ns * fake_rate_num; }

static uint64_t ticks_backwards(void) { /* jumps back once, after bad_at reads */
  if (++calls == bad_at) fake_ticks -= 1000;
  return fake_ticks += 10;
}
static uint64_t ticks_still(void) { return 12345; }
static uint64_t ns_backwards(void) {
  if (++calls == bad_at) fake_ns -= 1000;
  return fake_ns += 50;
}
static uint64_t ns_still(void) { return 777; }
static uint64_t ticks_rate_change(void) { /* twice as fast after bad_at reads */
  if (++calls == bad_at) fake_rate_num = 6;
  return fake_ticks += 50 * fake_rate_num;
}

static void test_calibrate_steady(void **state) {
  (void)state;
  fake_reset();
  double r = -1;
  uint64_t step = 0;
  assert_int_equal(po_ticks_calibrate(ticks_steady, ns_steady, &r, &step), SYNCQ_OK);
  assert_true(r > 2.99 && r < 3.01);
  assert_int_equal(step, 150); /* 3 ticks/ns, 50 ns a read of the clock */
}

static void test_calibrate_refuses(void **state) {
  (void)state;
  double r;
  uint64_t step;
  fake_reset();
  bad_at = 1000;
  r = -1;
  assert_int_equal(po_ticks_calibrate(ticks_backwards, ns_steady, &r, &step), SYNCQ_EINVAL);
  assert_true(r == 0);
  fake_reset();
  r = -1;
  assert_int_equal(po_ticks_calibrate(ticks_still, ns_steady, &r, &step), SYNCQ_EINVAL);
  assert_true(r == 0);
  fake_reset();
  bad_at = 1000;
  r = -1;
  assert_int_equal(po_ticks_calibrate(ticks_steady, ns_backwards, &r, &step), SYNCQ_EINVAL);
  assert_true(r == 0);
  fake_reset();
  r = -1;
  assert_int_equal(po_ticks_calibrate(ticks_steady, ns_still, &r, &step), SYNCQ_EINVAL);
  assert_true(r == 0);
  /* Monotonic, but the rate doubles in the third round (4,000 reads a round). */
  fake_reset();
  bad_at = 10000;
  r = -1;
  assert_int_equal(po_ticks_calibrate(ticks_rate_change, ns_steady, &r, &step), SYNCQ_EINVAL);
  assert_true(r == 0);
  fake_reset();
  assert_int_equal(po_ticks_calibrate(NULL, ns_steady, &r, &step), SYNCQ_EINVAL);
  assert_int_equal(po_ticks_calibrate(ticks_steady, NULL, &r, &step), SYNCQ_EINVAL);
  assert_int_equal(po_ticks_calibrate(ticks_steady, ns_steady, NULL, &step), SYNCQ_EINVAL);
  assert_int_equal(po_ticks_calibrate(ticks_steady, ns_steady, &r, NULL), SYNCQ_EINVAL);
}

/* ---- the rate checked as it runs, on made-up pairs ----
 *
 * A pair as a scheduler or the monitor takes it: the counter's bracket
 * (t0, t1) round a clock read n. The counter's true reading is `ticks`,
 * taken at the true time; the clock may say a little more or less
 * (jitter, injected: the test does not time anything). */

#define CAL 2.5 /* the calibrated ticks/ns */

static int pair(po_drift *d, double ticks, uint64_t n, double *implied) {
  uint64_t t = (uint64_t)ticks;
  return po_drift_feed(d, CAL, t - 20, n, t + 20, implied);
}

static uint64_t lcg = 12345;
static int64_t jitter(int64_t max) { /* uniform in [-max, max] */
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (int64_t)((lcg >> 33) % (uint64_t)(2 * max + 1)) - max;
}

static void test_drift_steady(void **state) {
  (void)state;
  /* 20,000 pairs a monitor tick apart (100 s), the counter 3% fast of its
   * calibration and each clock read off by up to 100 us either way: at
   * worst 3% x 2% off over the 10 ms a verdict spans, inside 1/16. */
  po_drift d = {0};
  double implied = 0, lo = 1e9, hi = 0;
  int steady = 0;
  for (uint64_t k = 1; k <= 20000; k++) {
    uint64_t at = k * (uint64_t)PO_MONITOR_TICK_NS; /* the monitor's ticks */
    int v = pair(&d, 1e12 + CAL * 1.03 * (double)at, (uint64_t)((int64_t)at + jitter(100000)), &implied);
    assert_int_not_equal(v, PO_DRIFT_OFF);
    if (v == PO_DRIFT_STEADY) {
      steady++;
      if (implied < lo) lo = implied;
      if (implied > hi) hi = implied;
    }
  }
  print_message("steady: %d verdicts, the rate seen %.4f to %.4f of %.4f\n", steady, lo / CAL, hi / CAL, 1.0);
  assert_true(steady >= 20000 / 3); /* a verdict every 2 or 3 pairs */
  /* The tolerance's edges: 1/16 less a little passes, more trips. */
  for (int dir = -1; dir <= 1; dir += 2) {
    memset(&d, 0, sizeof d);
    assert_int_equal(pair(&d, 1e9, 1000 * MS, &implied), PO_DRIFT_NONE);
    double in = 1.0 + dir * (1.0 / PO_DRIFT_TOL_DEN - 1e-3), out = 1.0 + dir * (1.0 / PO_DRIFT_TOL_DEN + 1e-3);
    assert_int_equal(pair(&d, 1e9 + CAL * in * 20 * MS, 1020 * MS, &implied), PO_DRIFT_STEADY);
    assert_int_equal(pair(&d, 1e9 + CAL * (in * 20 + out * 20) * MS, 1040 * MS, &implied), PO_DRIFT_OFF);
    assert_true(fabs(implied / CAL - out) < 1e-4);
  }
}

/* The counter at CAL until `change`, then at CAL x factor: the first
 * verdict off, within PO_DRIFT_NOTICE_NS of it, and none before. */
static void drift_change(double factor) {
  po_drift d = {0};
  uint64_t change = 1000 * MS + 2 * MS; /* mid-interval: the first one after shows a mix */
  double implied = 0;
  for (uint64_t k = 1;; k++) {
    uint64_t at = k * (uint64_t)PO_MONITOR_TICK_NS; /* the monitor's ticks */
    double ticks =
      1e12 + CAL * (double)(at < change ? at : change) + (at > change ? CAL * factor * (double)(at - change) : 0);
    int v = pair(&d, ticks, (uint64_t)((int64_t)at + jitter(100000)), &implied);
    if (v == PO_DRIFT_OFF) {
      print_message("counter x %g at %.0f ms: noticed %.1f ms after, seen at %.4f of its rate\n", factor,
                    (double)change / 1e6, (double)(at - change) / 1e6, implied / CAL);
      assert_true(at > change);
      assert_true(at - change <= PO_DRIFT_NOTICE_NS);
      assert_true(factor < 1 ? implied < CAL * (1 - 1.0 / PO_DRIFT_TOL_DEN)
                             : implied > CAL * (1 + 1.0 / PO_DRIFT_TOL_DEN));
      return;
    }
    assert_true(at < change + PO_DRIFT_NOTICE_NS);
  }
}

static void test_drift_change(void **state) {
  (void)state;
  drift_change(0.5);       /* slowed to half (a guest moved to a host at half the rate) */
  drift_change(1.0 / 128); /* po_timer_slow_test's */
  drift_change(0.875);     /* 1/8 slower: past the gate's margin */
  drift_change(0);         /* stopped */
  drift_change(2.0);       /* sped up */
  drift_change(1.125);     /* 1/8 faster */
}

static void test_drift_refuses(void **state) {
  (void)state;
  po_drift d = {0};
  double implied = -1;
  /* No counter: nothing checked, nothing kept. */
  assert_int_equal(po_drift_feed(&d, 0, 100, 10 * MS, 120, &implied), PO_DRIFT_NONE);
  assert_int_equal(po_drift_feed(&d, -1, 100, 10 * MS, 120, &implied), PO_DRIFT_NONE);
  assert_int_equal(po_drift_feed(&d, NAN, 100, 10 * MS, 120, &implied), PO_DRIFT_NONE);
  assert_false(d.have);
  /* A bracket that ran backwards, or wider than PO_DRIFT_BRACKET_NS (a
   * preemption between the reads): not a pair, not kept. */
  uint64_t wide = (uint64_t)(CAL * PO_DRIFT_BRACKET_NS) + 2;
  assert_int_equal(po_drift_feed(&d, CAL, 120, 10 * MS, 100, &implied), PO_DRIFT_NONE);
  assert_int_equal(po_drift_feed(&d, CAL, 1000, 10 * MS, 1000 + wide, &implied), PO_DRIFT_NONE);
  assert_false(d.have);
  /* The first pair is kept; one too soon after it gives no verdict and
   * keeps the reference, so the interval grows to a verdict. */
  assert_int_equal(pair(&d, 1e9, 100 * MS, &implied), PO_DRIFT_NONE);
  assert_true(d.have);
  assert_int_equal(pair(&d, 1e9 + CAL * 0.2 * 9 * MS, 109 * MS, &implied), PO_DRIFT_NONE); /* slow, but 9 ms */
  assert_int_equal(pair(&d, 1e9 + CAL * 10 * MS, 110 * MS, &implied), PO_DRIFT_STEADY);
  assert_true(fabs(implied - CAL) < 1e-6);
  /* A preempted pair between two good ones changes nothing: the verdict
   * spans the good ones. */
  assert_int_equal(
    po_drift_feed(&d, CAL, (uint64_t)(1e9 + CAL * 15 * MS), 130 * MS, (uint64_t)(1e9 + CAL * 15 * MS) + wide, &implied),
    PO_DRIFT_NONE);
  assert_int_equal(pair(&d, 1e9 + CAL * 20 * MS, 120 * MS, &implied), PO_DRIFT_STEADY);
  /* A counter or clock behind the last pair: start over, no verdict. */
  assert_int_equal(pair(&d, 1e9, 200 * MS, &implied), PO_DRIFT_NONE);
  assert_int_equal(pair(&d, 1e9 + CAL * 100 * MS, 190 * MS, &implied), PO_DRIFT_NONE);
  assert_int_equal(pair(&d, 1e9 + CAL * 110 * MS, 200 * MS, &implied), PO_DRIFT_STEADY);
}

/* ---- the kernel's list of clocksources, from files the test writes ---- */

static char tmpdir[] = "/tmp/po_timer_test.XXXXXX";
static char listpath[sizeof tmpdir + 16];

static void make_tmpdir(void) {
  if (mkdtemp(tmpdir) == NULL) fail_msg("mkdtemp %s", tmpdir);
  snprintf(listpath, sizeof listpath, "%s/list", tmpdir);
}

/* Write `len` bytes of text as the list and parse it. */
static int listed(const char *text, size_t len) {
  FILE *f = fopen(listpath, "w");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  return po_tsc_listed(listpath);
}
#define LISTED(text) listed(text, sizeof text - 1)

static void test_tsc_listed(void **state) {
  (void)state;
  /* Listed: a TSC the kernel keeps, current or not (this KVM guest lists
   * "tsc kvm-clock"; another keeps kvm-clock current beside it). */
  assert_int_equal(LISTED("tsc kvm-clock \n"), PO_TSC_LISTED);
  assert_int_equal(LISTED("kvm-clock tsc \n"), PO_TSC_LISTED);
  assert_int_equal(LISTED("hpet\ttsc\tacpi_pm\n"), PO_TSC_LISTED);
  assert_int_equal(LISTED("tsc"), PO_TSC_LISTED); /* no newline */
  /* Rejected: the kernel's list without the TSC. */
  assert_int_equal(LISTED("hpet acpi_pm \n"), PO_TSC_UNLISTED);
  assert_int_equal(LISTED("kvm-clock \n"), PO_TSC_UNLISTED);
  assert_int_equal(LISTED("arch_sys_counter \n"), PO_TSC_UNLISTED);
  assert_int_equal(LISTED("tsc-early hpet\n"), PO_TSC_UNLISTED); /* the boot-time one, not "tsc" */
  assert_int_equal(LISTED("xtsc tscx ts c\n"), PO_TSC_UNLISTED);
  assert_int_equal(LISTED("\n"), PO_TSC_UNLISTED);
  assert_int_equal(LISTED(""), PO_TSC_UNLISTED);
  /* A word longer than any buffer that ends in "tsc" is not "tsc"; a
   * "tsc" after a long list is. */
  static char big[10000];
  memset(big, 'a', sizeof big);
  memcpy(big + sizeof big - 4, "tsc\n", 4);
  assert_int_equal(listed(big, sizeof big), PO_TSC_UNLISTED);
  big[sizeof big - 5] = ' ';
  assert_int_equal(listed(big, sizeof big), PO_TSC_LISTED);
  for (size_t i = 0; i < sizeof big; i += 8) big[i] = ' ';
  memcpy(big + sizeof big - 4, "hpt\n", 4);
  assert_int_equal(listed(big, sizeof big), PO_TSC_UNLISTED);
  /* No answer: nothing there, a directory, no path. */
  char missing[sizeof tmpdir + 16];
  snprintf(missing, sizeof missing, "%s/none", tmpdir);
  assert_int_equal(po_tsc_listed(missing), PO_TSC_UNREAD);
  assert_int_equal(po_tsc_listed(tmpdir), PO_TSC_UNREAD);
  assert_int_equal(po_tsc_listed(NULL), PO_TSC_UNREAD);
  int sys = po_tsc_listed(PO_CLOCKSOURCE_AVAILABLE);
  print_message("this kernel's %s: %s\n", PO_CLOCKSOURCE_AVAILABLE,
                sys == PO_TSC_LISTED     ? "tsc listed"
                : sys == PO_TSC_UNLISTED ? "no tsc"
                                         : "unreadable");
  assert_int_equal(po_ticks_set_clocksource_list(NULL), SYNCQ_EINVAL);
}

/* ---- the gate with the real counter ---- */

static void test_gate(void **state) {
  (void)state;
  uint64_t step;
  double rate = po_ticks_rate(&step);
  const char *why = po_ticks_why();
  print_message("counter: %.4f ticks/ns, step %llu%s%s\n", rate, (unsigned long long)step,
                rate > 0 ? "" : ", none usable, the clock every switch: ", why != NULL ? why : "");
  assert_true((rate > 0) == (why == NULL));
  /* Decided: the list it read and the scale can no longer change. */
  assert_int_equal(po_ticks_set_clocksource_list(listpath), SYNCQ_EBUSY);
  assert_int_equal(po_ticks_set_scale(2.0), SYNCQ_EBUSY);
  assert_int_equal(po_ticks_set_scale(0), SYNCQ_EINVAL);
  assert_int_equal(po_ticks_set_scale(-1.0), SYNCQ_EINVAL);
  assert_int_equal(po_ticks_set_scale(NAN), SYNCQ_EINVAL);
  assert_int_equal(po_ticks_set_scale(INFINITY), SYNCQ_EINVAL);
#if defined(PO_TIMER_TEST_UNLISTED) && defined(__x86_64__)
  /* The kernel left the TSC out of the list the calibration read. */
  assert_true(rate == 0);
  assert_non_null(why);
  assert_non_null(strstr(why, "clocksources"));
#endif
  po_due_gate g;
  /* No counter: never skip. */
  po_due_gate_init(&g, 0, 0);
  uint64_t t0 = po_ticks(), now = syncq_now_ns();
  po_due_gate_set(&g, now + 1000 * MS, t0, now);
  assert_false(po_due_gate_skip(&g, now + 1000 * MS));
  if (rate <= 0) {
    /* The fallback, with the process's own rate: every look reads the
     * clock, as take_local's would, for as long as a deadline 2 ms ahead
     * waits. */
    po_due_gate_init(&g, rate, step);
    uint64_t due = syncq_now_ns() + 2 * MS, looks = 0;
    do {
      t0 = po_ticks();
      now = syncq_now_ns();
      po_due_gate_set(&g, due, t0, now);
      looks++;
      assert_false(po_due_gate_skip(&g, due));
    } while (now < due);
    print_message("2 ms to a deadline: every one of %llu looks read the clock\n", (unsigned long long)looks);
    return;
  }
  po_due_gate_init(&g, rate, step);
  assert_false(po_due_gate_skip(&g, 5)); /* never set */
  /* A deadline already passed, or none: look at once. */
  t0 = po_ticks();
  now = syncq_now_ns();
  po_due_gate_set(&g, now, t0, now);
  assert_false(po_due_gate_skip(&g, now));
  /* 2 ms ahead: skip it now, not a different deadline, and never once it
   * has passed by the clock. */
  t0 = po_ticks();
  now = syncq_now_ns();
  uint64_t due = now + 2 * MS;
  po_due_gate_set(&g, due, t0, now);
  assert_false(po_due_gate_skip(&g, due - 1));
  po_due_gate_set(&g, due, t0, now);
  assert_true(po_due_gate_skip(&g, due));
  /* Expired (an idle wait ended by the clock): the next look reads it. */
  po_due_gate_expire(&g);
  assert_false(po_due_gate_skip(&g, due));
  po_due_gate_set(&g, due, t0, now);
  /* As take_local does: a look the gate does not skip reads the clock and
   * sets the gate again. The clock is read before each look, so a look it
   * skips after that read said the deadline had passed is the gate's
   * fault, not a race. */
  uint64_t looks = 0, reads = 0, late = 0;
  for (;;) {
    uint64_t before = syncq_now_ns();
    if (before >= due + 100 * MS) break; /* a gate that never lets the clock be read */
    looks++;
    if (po_due_gate_skip(&g, due)) {
      if (before >= due) late++;
      continue;
    }
    reads++;
    t0 = po_ticks();
    now = syncq_now_ns();
    if (now >= due) break;
    po_due_gate_set(&g, due, t0, now);
  }
  print_message("2 ms to a deadline: %llu of %llu looks read the clock, %llu skipped past it\n",
                (unsigned long long)reads, (unsigned long long)looks, (unsigned long long)late);
#ifdef PO_TIMER_TEST_SLOW
  /* A counter slower than its calibration keeps the gate shut past the
   * deadline (the limit docs/reliability.md states): the scale is used. */
  assert_true(late > 0);
  return;
#endif
  assert_int_equal(late, 0);
  assert_true(reads < looks);
  /* Passed: every look reads the clock until a later deadline is set. */
  po_due_gate_set(&g, due, t0, now);
  for (int i = 0; i < 1000; i++) assert_false(po_due_gate_skip(&g, due));
}

/* ---- what the gate decided, as syncq_po_clock_gate says it ---- */

static void test_clock_gate_lines(void **state) {
  (void)state;
  char buf[SYNCQ_PO_CLOCK_GATE_LEN];
  bool counter = true;
  /* Every reason fits the documented size, after the same words. */
  for (int i = 0; i < PO_TICKS_REASONS; i++) {
    counter = true;
    assert_int_equal(po_clock_gate_format(0, po_ticks_reasons[i], &counter, buf, sizeof buf), SYNCQ_OK);
    assert_false(counter);
    assert_int_equal(strncmp(buf, "clock at every switch: ", 23), 0);
    assert_string_equal(buf + 23, po_ticks_reasons[i]);
  }
  counter = false;
  assert_int_equal(po_clock_gate_format(2.596, NULL, &counter, buf, sizeof buf), SYNCQ_OK);
  assert_true(counter);
  assert_string_equal(buf, "counter: 2.596 ticks/ns");
  assert_int_equal(po_clock_gate_format(0.0625, NULL, &counter, buf, sizeof buf), SYNCQ_OK);
  assert_string_equal(buf, "counter: 0.0625 ticks/ns"); /* a 62.5 MHz cntvct_el0 */
  /* Truncated: as much as fits, NUL-terminated, the flag set. */
  memset(buf, 'x', sizeof buf);
  counter = false;
  assert_int_equal(po_clock_gate_format(2.596, NULL, &counter, buf, 8), SYNCQ_ELIMIT);
  assert_true(counter);
  assert_string_equal(buf, "counter");
  assert_int_equal(buf[8], 'x');
  assert_int_equal(po_clock_gate_format(2.596, NULL, &counter, buf, 1), SYNCQ_ELIMIT);
  assert_string_equal(buf, "");
  /* Exactly enough, and one byte short. */
  size_t need = strlen("counter: 2.596 ticks/ns") + 1;
  assert_int_equal(po_clock_gate_format(2.596, NULL, &counter, buf, need), SYNCQ_OK);
  assert_int_equal(po_clock_gate_format(2.596, NULL, &counter, buf, need - 1), SYNCQ_ELIMIT);
  assert_string_equal(buf, "counter: 2.596 ticks/n");
  /* A rate found drifted: both rates, the flag false, and the line fits
   * whatever the rates. */
  counter = true;
  assert_int_equal(po_clock_gate_format_drift(2.596, 1.298, &counter, buf, sizeof buf), SYNCQ_OK);
  assert_false(counter);
  assert_string_equal(buf, "clock at every switch: the counter's rate drifted from 2.596 to 1.298 ticks/ns");
  assert_int_equal(po_clock_gate_format_drift(-1.234e-300, -1.234e+300, &counter, buf, sizeof buf), SYNCQ_OK);
  assert_int_equal(po_clock_gate_format_drift(332.3, 0, &counter, buf, sizeof buf), SYNCQ_OK);
  assert_string_equal(buf, "clock at every switch: the counter's rate drifted from 332.3 to 0 ticks/ns");
  memset(buf, 'x', sizeof buf);
  counter = true;
  assert_int_equal(po_clock_gate_format_drift(2.596, 1.298, &counter, buf, 6), SYNCQ_ELIMIT);
  assert_false(counter);
  assert_string_equal(buf, "clock");
  assert_int_equal(buf[6], 'x');
  counter = true;
  assert_int_equal(po_clock_gate_format_drift(2.596, 1.298, &counter, NULL, 0), SYNCQ_OK);
  assert_false(counter);
  assert_int_equal(po_clock_gate_format_drift(2.596, 1.298, NULL, NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(po_clock_gate_format_drift(2.596, 1.298, &counter, buf, 0), SYNCQ_EINVAL);
  assert_int_equal(po_clock_gate_format_drift(2.596, 1.298, &counter, NULL, 4), SYNCQ_EINVAL);
  assert_int_equal(buf[6], 'x');
}

/* ---- the process's check, after the schedulers ran with deadlines ---- */

static void test_drift_process(void **state) {
  (void)state;
  uint64_t step;
  double rate = po_ticks_rate(&step), from = 0, to = 0;
  bool tripped = po_drift_rates(&from, &to);
  print_message("rate check: %s (%.4g -> %.4g ticks/ns)\n", tripped ? "tripped" : "steady", from, to);
  assert_true(tripped == po_drift_tripped());
#if defined(PO_TIMER_TEST_SLOW) || defined(PO_TIMER_TEST_FAST)
#ifdef PO_TIMER_TEST_SLOW
  double k = PO_TIMER_TEST_SLOW;
#else
  double k = 1.0 / PO_TIMER_TEST_FAST;
#endif
  if (po_ticks_why() != NULL && po_ticks_why() != po_ticks_reasons[5]) {
    print_message("no counter here (%s): nothing to check\n", po_ticks_why());
    assert_false(tripped);
    return;
  }
  /* The busy scheduler's run tripped it: the counter seen at 1/k of the
   * rate it was (made to be) calibrated at. */
  assert_true(tripped);
  assert_true(rate == 0);
  assert_ptr_equal(po_ticks_why(), po_ticks_reasons[5]);
  assert_true(to > from / k * (1 - 1.0 / PO_DRIFT_TOL_DEN) && to < from / k * (1 + 1.0 / PO_DRIFT_TOL_DEN));
  /* Every gate now reads the clock at every look, one set up before the
   * trip (its rate still the calibrated one) included. */
  po_due_gate g;
  po_due_gate_init(&g, from, step);
  uint64_t t0 = po_ticks(), now = syncq_now_ns();
  po_due_gate_set(&g, now + 1000 * MS, t0, now);
  for (int i = 0; i < 1000; i++) assert_false(po_due_gate_skip(&g, now + 1000 * MS));
  po_due_gate_init(&g, from, step);
  po_due_gate_check(&g, t0, now, po_ticks());
  assert_true(g.rate == 0);
  /* And syncq_po_clock_gate says so. */
  char buf[SYNCQ_PO_CLOCK_GATE_LEN];
  bool counter = true;
  assert_int_equal(syncq_po_clock_gate(&counter, buf, sizeof buf), SYNCQ_OK);
  assert_false(counter);
  assert_non_null(strstr(buf, "rate drifted from"));
#else
  /* A steady counter (the machine's own) never trips it, however many
   * checks the runs above made. */
  assert_false(tripped);
  if (rate > 0) {
    char buf[SYNCQ_PO_CLOCK_GATE_LEN];
    assert_int_equal(syncq_po_clock_gate(NULL, buf, sizeof buf), SYNCQ_OK);
    assert_int_equal(strncmp(buf, "counter: ", 9), 0);
  }
#endif
}

static void test_clock_gate_public(void **state) {
  (void)state;
  uint64_t step;
  double rate = po_ticks_rate(&step), from, to;
  const char *reason = po_ticks_why();
  char buf[SYNCQ_PO_CLOCK_GATE_LEN], want[SYNCQ_PO_CLOCK_GATE_LEN];
  bool counter = rate <= 0;
  assert_int_equal(syncq_po_clock_gate(&counter, buf, sizeof buf), SYNCQ_OK);
  print_message("syncq_po_clock_gate: %s, \"%s\"\n", counter ? "counter" : "clock", buf);
  assert_true(counter == (rate > 0));
  if (rate > 0) snprintf(want, sizeof want, "counter: %.4g ticks/ns", rate);
  else if (po_drift_rates(&from, &to))
    snprintf(want, sizeof want, "clock at every switch: the counter's rate drifted from %.4g to %.4g ticks/ns", from,
             to);
  else snprintf(want, sizeof want, "clock at every switch: %s", reason);
  assert_string_equal(buf, want);
#if defined(PO_TIMER_TEST_UNLISTED) && defined(__x86_64__)
  assert_false(counter);
  assert_non_null(strstr(buf, "clocksources leave out the TSC"));
#endif
  /* Only one of the two asked for. */
  counter = rate <= 0;
  assert_int_equal(syncq_po_clock_gate(&counter, NULL, 0), SYNCQ_OK);
  assert_true(counter == (rate > 0));
  memset(buf, 'x', sizeof buf);
  assert_int_equal(syncq_po_clock_gate(NULL, buf, sizeof buf), SYNCQ_OK);
  assert_string_equal(buf, want);
  /* Truncated: the line's first bytes, the flag all the same. */
  memset(buf, 'x', sizeof buf);
  counter = rate <= 0;
  assert_int_equal(syncq_po_clock_gate(&counter, buf, 6), SYNCQ_ELIMIT);
  assert_true(counter == (rate > 0));
  assert_int_equal(strlen(buf), 5);
  assert_int_equal(strncmp(buf, want, 5), 0);
  assert_int_equal(buf[6], 'x');
  /* Bad inputs: nothing written. */
  memset(buf, 'x', sizeof buf);
  counter = rate <= 0;
  assert_int_equal(syncq_po_clock_gate(NULL, NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_clock_gate(NULL, NULL, 16), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_clock_gate(&counter, NULL, 16), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_clock_gate(&counter, buf, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_po_clock_gate(NULL, buf, 0), SYNCQ_EINVAL);
  assert_true(counter == (rate <= 0));
  assert_int_equal(buf[0], 'x');
  /* The internal formatter refuses the same. */
  assert_int_equal(po_clock_gate_format(1.0, NULL, NULL, NULL, 0), SYNCQ_EINVAL);
  assert_int_equal(po_clock_gate_format(1.0, NULL, &counter, buf, 0), SYNCQ_EINVAL);
  assert_int_equal(po_clock_gate_format(1.0, NULL, &counter, NULL, 4), SYNCQ_EINVAL);
  assert_true(counter == (rate <= 0));
  assert_int_equal(buf[0], 'x');
}

/* ---- a deadline on a busy scheduler, and on an idle one ---- */

enum { BUSY = 4 };
#define WAIT_NS (20 * MS)
#define BUSY_FOR_NS (5000 * MS) /* the busy fibers give up after this */
#define LATE_MAX_NS (1000 * MS) /* a loaded machine may keep the thread off a core */

static _Atomic(int) stop;
static _Atomic(uint64_t) yields;
static uint64_t busy_until;

typedef struct timed {
  int status;
  uint64_t took;
  uint64_t yields_during; /* other fibers' switches while it waited */
} timed;

static void busy(syncq_po_proc *self, void *arg) {
  (void)arg;
  while (!atomic_load(&stop) && syncq_now_ns() < busy_until) {
    atomic_fetch_add_explicit(&yields, 1, memory_order_relaxed); /* a tally, read by the timed fiber */
    (void)syncq_po_yield(self);
  }
}

static void waiter(syncq_po_proc *self, void *arg) {
  timed *t = arg;
  syncq_po_msg *m = NULL;
  uint64_t y0 = atomic_load_explicit(&yields, memory_order_relaxed); /* a tally */
  uint64_t t0 = syncq_now_ns();
  t->status = syncq_po_recv_timeout(self, WAIT_NS, &m);
  t->took = syncq_now_ns() - t0;
  t->yields_during = atomic_load_explicit(&yields, memory_order_relaxed) - y0; /* a tally */
  if (m != NULL) syncq_po_free(self, m);
  atomic_store(&stop, 1);
}

static void run_deadline(int nbusy) {
  syncq_po_config cfg = {"mpsc", 64, 0, 0, "fiber", 1, false};
  syncq_po_system *sys;
  assert_int_equal(syncq_po_create(&cfg, &sys), SYNCQ_OK);
  atomic_store(&stop, 0);
  atomic_store(&yields, 0);
  busy_until = syncq_now_ns() + BUSY_FOR_NS;
  syncq_po_pid b[BUSY], w;
  for (int i = 0; i < nbusy; i++) assert_int_equal(syncq_po_spawn(sys, busy, NULL, &b[i]), SYNCQ_OK);
  /* The busy fibers are switching before the wait starts. */
  while (nbusy > 0 && atomic_load(&yields) < 1000) syncq_yield();
  timed t = {-1, 0, 0};
  assert_int_equal(syncq_po_spawn(sys, waiter, &t, &w), SYNCQ_OK);
  assert_int_equal(syncq_po_join(sys, w), SYNCQ_OK);
  for (int i = 0; i < nbusy; i++) assert_int_equal(syncq_po_join(sys, b[i]), SYNCQ_OK);
  assert_int_equal(syncq_po_destroy(sys), SYNCQ_OK);
  print_message("%d busy fibers: waited %.3f ms for %.3f, %llu switches meanwhile\n", nbusy, (double)t.took / 1e6,
                (double)WAIT_NS / 1e6, (unsigned long long)t.yields_during);
  assert_int_equal(t.status, SYNCQ_ETIMEDOUT);
  assert_true(t.took >= WAIT_NS);
  /* On time, also with a counter slowed to 1/k (po_timer_slow_test): the
   * rate check trips within PO_DRIFT_NOTICE_NS of the system's start (the
   * monitor's ticks while the busy fibers run), before the deadline
   * comes, and every switch then reads the clock. Without the check a
   * busy scheduler looked only when the slowed counter reached the point
   * the calibrated rate put 7/8 of the way: WAIT_NS x (7 k / 8 - 1) late,
   * 2,220 ms at k = 128. */
  assert_true(t.took - WAIT_NS < LATE_MAX_NS);
  if (nbusy > 0) assert_true(t.yields_during > 0); /* fired while the others switched */
}

static void test_deadline_busy(void **state) {
  (void)state;
  run_deadline(BUSY);
}

static void test_deadline_idle(void **state) {
  (void)state;
  run_deadline(0);
}

int main(void) {
  make_tmpdir();
#ifdef PO_TIMER_TEST_UNLISTED
  /* Before anything decides the rate: a kernel that rejected its TSC. */
  static char unlisted[sizeof listpath + 16];
  snprintf(unlisted, sizeof unlisted, "%s.kernel", listpath);
  FILE *f = fopen(unlisted, "w");
  if (f == NULL || fputs("hpet acpi_pm \n", f) < 0 || fclose(f) != 0) return 1;
  if (po_ticks_set_clocksource_list(unlisted) != SYNCQ_OK) return 1;
#endif
#ifdef PO_TIMER_TEST_SLOW
  /* Before anything decides the rate: a counter slowed since calibration. */
  if (po_ticks_set_scale(PO_TIMER_TEST_SLOW) != SYNCQ_OK) return 1;
#endif
#ifdef PO_TIMER_TEST_FAST
  /* The same for a counter sped up to k times its calibration since. */
  if (po_ticks_set_scale(1.0 / PO_TIMER_TEST_FAST) != SYNCQ_OK) return 1;
#endif
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_calibrate_steady),
    cmocka_unit_test(test_calibrate_refuses),
    cmocka_unit_test(test_drift_steady),
    cmocka_unit_test(test_drift_change),
    cmocka_unit_test(test_drift_refuses),
    cmocka_unit_test(test_tsc_listed),
    cmocka_unit_test(test_gate),
    cmocka_unit_test(test_deadline_busy),
    cmocka_unit_test(test_deadline_idle),
    cmocka_unit_test(test_clock_gate_lines),
    cmocka_unit_test(test_clock_gate_public),
    cmocka_unit_test(test_drift_process),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  (void)unlink(listpath);
#ifdef PO_TIMER_TEST_UNLISTED
  (void)unlink(unlisted);
#endif
  (void)rmdir(tmpdir);
  return failed;
}
