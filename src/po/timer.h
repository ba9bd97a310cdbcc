/* SPDX-License-Identifier: BSD-2-Clause */
/* timer.h — the postoffice's timers: a binary min-heap of deadlines
 * (timer.c). A fiber system keeps one per scheduler, fired by its
 * scheduler loop and bounding its idle sleep; a thread system keeps one,
 * fired by a timer thread started with the first send_after. */
#ifndef SYNCQ_PO_TIMER_H
#define SYNCQ_PO_TIMER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/po.h"

struct syncq_po_proc;
struct po_timers;

enum { PO_TIMER_WAKE = 0, PO_TIMER_SEND = 1 };

/* One deadline. WAKE: embedded in a process (the deadline of its recv or
 * sleep; a process waits on one at a time), cancelled when the wait ends.
 * SEND: allocated by send_after, freed when it fires (the message is then
 * delivered) or when the system is destroyed. */
typedef struct po_timer {
  uint64_t due;           /* syncq_now_ns() time */
  uint64_t seq;           /* insertion order: equal deadlines fire in order */
  struct po_timers *heap; /* the heap it is in (NULL: none); under that heap's lock */
  uint32_t index;         /* its place there */
  int kind;
  struct syncq_po_proc *proc; /* WAKE: whom to wake */
  syncq_po_msg *msg;          /* SEND: what to deliver ... */
  syncq_po_pid to;            /* ... to whom */
} po_timer;

typedef struct po_timers {
  pthread_mutex_t lock; /* inserters, cancellers and the firing thread */
  po_timer **a;         /* [cap], a[0] the earliest */
  uint32_t n, cap;
  uint64_t seq;
  /* The earliest deadline, UINT64_MAX when empty: read without the lock
   * by the scheduler loop (relaxed: a hint; the lock decides). */
  _Atomic(uint64_t) next_due;
} po_timers;

int po_timers_init(po_timers *h);
/* Frees the SEND timers still pending (and, "mutex-nofree", their messages). */
void po_timers_destroy(po_timers *h, struct syncq_po_system *sys);
/* Insert t (not in a heap). SYNCQ_OK, *earliest set when t is now the
 * earliest; SYNCQ_ENOMEM. */
int po_timers_add(po_timers *h, po_timer *t, bool *earliest);
/* Take t out of h, where its owner added it (nothing if it has fired). */
void po_timers_cancel(po_timers *h, po_timer *t);
/* Fire every timer due by now (WAKE: wake the process; SEND: deliver).
 * Returns how many fired. Called by whoever serves the heap. */
int po_timers_fire(po_timers *h, uint64_t now);
/* The earliest deadline (UINT64_MAX: none). */
static inline uint64_t po_timers_next(po_timers *h) {
  return atomic_load_explicit(&h->next_due, memory_order_relaxed); /* a hint, see next_due */
}

/* ---- when a scheduler must read the clock ----
 *
 * A scheduler with a deadline pending looks between every two fibers
 * whether it has passed. Reading CLOCK_MONOTONIC there (20 ns through the
 * vDSO, several times that in some guests) made every other fiber's switch
 * pay for one parked deadline. A cycle counter that ticks at a constant
 * rate on every core (x86-64: rdtsc where cpuid reports an invariant TSC;
 * AArch64: cntvct_el0, architecturally constant and common to all cores)
 * costs a few ns; after each clock read the scheduler turns the time left
 * to its earliest deadline into a counter value, PO_GATE_NUM/PO_GATE_DEN
 * of the way there by the calibrated rate less one step of the counter
 * (the most a counter that advances in steps lags), and reads the clock again only
 * once the counter passes it, the earliest deadline changes, or the
 * counter runs backwards. The clock alone decides what fires: the counter
 * only decides when to look. The next read lands before the deadline
 * while the counter's true rate is within 1/7 of its calibration
 * (calibration refuses rounds that differ by more than 1/64), so a
 * deadline fires, as it did with a read every switch, at the first switch
 * after it passes (or when the idle wait, bounded by it, ends). Where no
 * such counter is found, the kernel has stopped trusting it (x86-64: the
 * TSC is not among its clocksources, po_tsc_listed), it is no cheaper
 * than the clock, or its calibration fails, the rate is 0, every switch
 * reads the clock, and po_ticks_why() says which. */
#define PO_GATE_NUM 7u
#define PO_GATE_DEN 8u

#if defined(__x86_64__) || defined(__aarch64__)
#define PO_HAVE_TICKS 1
#else
#define PO_HAVE_TICKS 0
#endif

/* The raw counter (0 where there is none). */
static inline uint64_t po_ticks(void) {
#if defined(__x86_64__)
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return 0;
#endif
}

/* Time rounds of reads of ticks() against ns() (each must never run
 * backwards, and ticks must advance over a round) and set *ticks_per_ns to
 * the median round's rate and *step to the smallest advance seen between
 * two reads of ticks(), at least its resolution. SYNCQ_OK; SYNCQ_EINVAL: a
 * NULL argument, a source that ran backwards or stood still, or rounds
 * that disagree by more than 1/64 of the median (*ticks_per_ns is then 0). */
int po_ticks_calibrate(uint64_t (*ticks)(void), uint64_t (*ns)(void), double *ticks_per_ns, uint64_t *step);
/* The process's counter rate, calibrated on first use (pthread_once, about
 * a millisecond), and its step; 0: no usable counter, or one whose rate
 * the running check found drifted (po_drift_check): read the clock every
 * switch. */
double po_ticks_rate(uint64_t *step);
/* Why po_ticks_rate() is 0 (one of po_ticks_reasons, the first found,
 * in this order: no counter on this architecture, the kernel's
 * clocksources leave the TSC out, no invariant TSC, a counter dearer than
 * half a clock read, a refused calibration, a rate found drifted since);
 * NULL while the counter gates the clock. Decides the rate first. */
const char *po_ticks_why(void);
/* Every reason po_ticks_why() gives, in the order above. */
enum { PO_TICKS_REASONS = 6 };
extern const char *const po_ticks_reasons[PO_TICKS_REASONS];
/* syncq_po_clock_gate's answer for a rate and its reason (why: NULL
 * while rate > 0): *counter (unless NULL) and the line in buf (po.h has
 * the statuses). */
int po_clock_gate_format(double rate, const char *why, bool *counter, char *buf, size_t len);
/* The same for a counter whose rate the check found drifted from `from`
 * to `to` ticks/ns: *counter false, "clock at every switch: the counter's
 * rate drifted from 2.596 to 1.298 ticks/ns". */
int po_clock_gate_format_drift(double from, double to, bool *counter, char *buf, size_t len);

/* ---- the kernel's word on the TSC (x86-64) ----
 *
 * The kernel keeps the TSC among its clocksources only while it trusts
 * it. Its watchdog marks the TSC unstable when it drifts against another
 * clocksource (hpet, acpi_pm), as do a TSC out of sync between CPUs at
 * their bring-up, a TSC that stops in a deep C-state without
 * nonstop_tsc, and `tsc=unstable`; marking it clears its fitness for
 * high-resolution timekeeping, and available_clocksource lists only fit
 * clocksources (in the tick's one-shot mode, that of every kernel with
 * NOHZ or high-resolution timers); a TSC found unstable during boot is
 * never registered at all. So "tsc" absent from available_clocksource
 * means the kernel rejected it: the gate does not use it.
 * current_clocksource alone says nothing: a KVM guest may keep
 * kvm-clock with a sound TSC listed beside it ("tsc kvm-clock"), and an
 * administrator may pick hpet over a sound TSC. A file that cannot be
 * read (no sysfs in a container) leaves the decision to cpuid's
 * invariant bit and the calibration, as before. The list is read once,
 * at calibration, and the rate kept: a re-read (a sysfs open, read and
 * close, microseconds) would stall a switch, and would not see a rate
 * changed under a guest whose TSC the kernel does not watch (marked
 * reliable). The rate check below sees that: a counter that then runs
 * more than 1/16 off its calibration trips it within PO_DRIFT_NOTICE_NS
 * while fibers run, and every switch reads the clock from then on; until
 * it trips, one slower than 7/8 makes a busy scheduler's deadline fire
 * late, by up to the time left at its last clock read times (7/8 / the
 * rate's ratio - 1), no later than the trip; an idle scheduler's fires
 * on time (po_due_gate_expire); docs/reliability.md, "A rate that
 * changes under the process". AArch64's cntvct_el0 is
 * architected: one constant rate (CNTFRQ_EL0), common to all cores; its
 * kernel clocksource, arch_sys_counter, has no watchdog to reject it, and
 * where an erratum makes the kernel trap EL0's reads of it (to correct
 * them) a read costs more than half a clock read and the gate refuses it
 * on cost: there the list is not consulted. */
#define PO_CLOCKSOURCE_AVAILABLE "/sys/devices/system/clocksource/clocksource0/available_clocksource"

enum {
  PO_TSC_LISTED = 0,   /* "tsc" is one of the file's words */
  PO_TSC_UNLISTED = 1, /* the file was read and "tsc" is none of them: the kernel rejected it */
  PO_TSC_UNREAD = 2,   /* the file could not be opened or read (or path is NULL): no answer */
};
/* Look for the word "tsc" (whitespace-separated, whole: not "tsc-early",
 * not inside a longer word) in the file at path, an
 * available_clocksource file (PO_CLOCKSOURCE_AVAILABLE, or one a test
 * wrote). Returns PO_TSC_LISTED, PO_TSC_UNLISTED or PO_TSC_UNREAD. */
int po_tsc_listed(const char *path);
/* Where the process's calibration reads the kernel's list
 * (PO_CLOCKSOURCE_AVAILABLE unless set): a test points it at a file of its
 * own before anything calls po_ticks_rate(). SYNCQ_OK; SYNCQ_EINVAL:
 * path is NULL; SYNCQ_EBUSY: the rate has been decided already (the
 * path is unchanged). The string must outlive the process's use of it. */
int po_ticks_set_clocksource_list(const char *path);

/* Scale the rate the process's calibration finds by `scale` before it is
 * used, as if the counter had slowed to 1/scale of its calibrated rate
 * since (a virtual machine moved to a host of a slower TSC without TSC
 * scaling): a test sets it before anything calls po_ticks_rate(), as
 * po_ticks_set_clocksource_list. SYNCQ_OK; SYNCQ_EINVAL: scale is not a
 * finite number above 0; SYNCQ_EBUSY: the rate has been decided already
 * (the scale is unchanged). */
int po_ticks_set_scale(double scale);

/* ---- the counter's rate, checked against the clock as it runs ----
 *
 * The kernel's list is read once, and a counter whose rate changes under
 * the process is not always one the kernel rejects (a guest whose TSC it
 * does not watch, a TSC not yet marked unstable, a frequency change that
 * slips past cpuid's invariant bit). So wherever the runtime reads the
 * clock anyway (a scheduler's look that the gate let through, the
 * monitor's tick, every PO_MONITOR_TICK_NS while fibers run), it reads
 * the counter just before and just after (a bracket), and compares the
 * counter's advance since its last pair against the clock's. A rate that
 * departs from the calibrated one by more than 1/PO_DRIFT_TOL_DEN over at
 * least PO_DRIFT_MIN_NS trips the process's check, once and for good:
 * every scheduler then reads the clock at every switch, and
 * syncq_po_clock_gate says so with both rates. Not a recalibration: a
 * counter whose rate changed once may change again, and the next change
 * would again make deadlines late until a check saw it; the clock at
 * every switch costs tens of ns a switch (docs/reliability.md), late
 * deadlines cost correctness.
 *
 * PO_DRIFT_TOL_DEN 16: the gate aims 7/8 of the way, so a counter up to
 * 1/7 slower than its calibration still opens it before the deadline;
 * tripping at 1/16 leaves half that margin, while what a steady counter
 * shows stays far inside it: calibration rounds agree within 1/64, ntpd
 * and timesyncd slew CLOCK_MONOTONIC by at most 500 ppm, and a pair's bracket (at most
 * PO_DRIFT_BRACKET_NS, 20 us, at each end) over PO_DRIFT_MIN_NS (10 ms)
 * errs by at most 0.4%. A pair whose bracket is wider (the thread was
 * preempted between the reads) or runs backwards is not used.
 * PO_DRIFT_MIN_NS 10 ms: long enough for that error, short enough that
 * the monitor (a tick each PO_MONITOR_TICK_NS, 5 ms) notices a change within two intervals
 * of it, PO_DRIFT_NOTICE_NS (the interval the change falls in may show a
 * mix of the two rates; the one after it shows the new one alone).
 * chrony may slew CLOCK_MONOTONIC by up to 1/12 (its default maxslewrate,
 * 83,333 ppm) while it corrects a large offset (after a VM's pause or
 * migration); over such a slew the check may trip with the counter sound:
 * the clock at every switch for the rest of the process, never a late
 * deadline (docs/reliability.md). */
#define PO_DRIFT_TOL_DEN 16u
#define PO_DRIFT_MIN_NS 10000000ull
#define PO_DRIFT_BRACKET_NS 20000u
/* The blocked-scheduler monitor's tick (fiber_sched.c: it looks at the
 * schedulers this often), which the notice bound counts in. */
#define PO_MONITOR_TICK_NS 5000000ll
#define PO_DRIFT_NOTICE_NS (2u * (PO_DRIFT_MIN_NS + (unsigned long long)PO_MONITOR_TICK_NS))

/* One checker's last pair: its owner's alone (a scheduler's gate, the
 * monitor). */
typedef struct po_drift {
  bool have;  /* a pair is kept */
  uint64_t t; /* the counter (its bracket's midpoint) */
  uint64_t n; /* the clock between the bracket's reads */
} po_drift;

enum {
  PO_DRIFT_NONE = 0,   /* no verdict: no rate, a pair refused, the first, or too soon after the last */
  PO_DRIFT_STEADY = 1, /* the rate since the last pair is within the tolerance */
  PO_DRIFT_OFF = 2,    /* it departs by more: *implied holds it */
};
/* Feed one pair: t0 the counter before the clock read n, t1 after it;
 * rate the calibrated ticks/ns (<= 0: no counter, nothing checked).
 * Returns PO_DRIFT_NONE, PO_DRIFT_STEADY or PO_DRIFT_OFF; *implied (on
 * STEADY and OFF) the counter's rate since the last pair. A verdict
 * makes this pair the next one's reference. Pure: trips nothing. */
int po_drift_feed(po_drift *d, double rate, uint64_t t0, uint64_t n, uint64_t t1, double *implied);
/* po_drift_feed, and on PO_DRIFT_OFF the process's check trips (the
 * first to trip records its rates). Returns whether it has tripped, by
 * this pair or before. */
bool po_drift_check(po_drift *d, double rate, uint64_t t0, uint64_t n, uint64_t t1);
/* Whether the process's check has tripped: one relaxed load, for paths
 * that have just read the clock. */
bool po_drift_tripped(void);
/* The rates the trip recorded (calibrated, found); false: not tripped. */
bool po_drift_rates(double *from, double *to);

/* One scheduler's gate: its owner's, but for `until`, which the monitor
 * zeroes once the process's check has tripped. */
typedef struct po_due_gate {
  uint64_t due; /* the deadline `until` was set for */
  /* counter value before which the clock need not be read; relaxed
   * everywhere: the monitor's zeroing (po_due_gate_disarm) is repeated
   * every tick while tripped, until the owner's next set has seen the
   * trip (po_drift_tripped) and stops setting it. */
  _Atomic(uint64_t) until;
  uint64_t last;  /* the counter at the last look */
  double rate;    /* po_ticks_rate(); 0 once the check has tripped */
  uint64_t step;  /* ... and its step: a coarse counter (qemu's reads the
                   * host's microseconds) stands still up to a step */
  po_drift drift; /* the check at this scheduler's clock reads */
} po_due_gate;

static inline void po_due_gate_init(po_due_gate *g, double rate, uint64_t step) {
  g->due = UINT64_MAX;
  atomic_init(&g->until, 0);
  g->last = 0;
  g->rate = rate;
  g->step = step;
  g->drift.have = false;
}

/* True: the clock need not be read for `due` (the earliest deadline, not
 * UINT64_MAX) yet. */
static inline bool po_due_gate_skip(po_due_gate *g, uint64_t due) {
#if PO_HAVE_TICKS
  /* relaxed: see until. */
  uint64_t until = atomic_load_explicit(&g->until, memory_order_relaxed);
  if (due != g->due || until == 0) return false;
  uint64_t t = po_ticks();
  bool skip = t >= g->last && t < until;
  g->last = t;
  return skip;
#else
  (void)g;
  (void)due;
  return false;
#endif
}

/* Read the clock at the next look whatever the counter says: its owner
 * has waited for the deadline by the clock (an idle scheduler's wait,
 * bounded by it), and a counter slower than its calibration (a rate that
 * changed under the process) would keep the gate shut past it. */
static inline void po_due_gate_expire(po_due_gate *g) {
  atomic_store_explicit(&g->until, 0, memory_order_relaxed); /* see until */
}
/* The monitor's: the same from another thread, once the check has
 * tripped (see until). */
static inline void po_due_gate_disarm(po_due_gate *g) {
  atomic_store_explicit(&g->until, 0, memory_order_relaxed); /* see until */
}

/* After a clock read: t0 the counter read just before it, now what the
 * clock said, t1 the counter read just after it: the rate check
 * (po_drift_check); a trip, here or elsewhere, sets the gate's rate to 0. */
void po_due_gate_check(po_due_gate *g, uint64_t t0, uint64_t now, uint64_t t1);
/* After a clock read: t0 the counter read just before it, now what the
 * clock said, due the earliest deadline still pending. Once the process's
 * check has tripped (po_drift_tripped) the rate is 0: every look reads
 * the clock. */
void po_due_gate_set(po_due_gate *g, uint64_t due, uint64_t t0, uint64_t now);

/* A thread system's timer thread: started on first use. */
typedef struct po_timer_thread {
  po_timers heap;
  pthread_mutex_t start_lock;
  bool started;
  _Atomic(uint32_t) stop;
  _Atomic(uint32_t) word; /* futex: bumped when the earliest deadline moves up or on stop */
  pthread_t tid;
} po_timer_thread;

int po_timer_thread_init(po_timer_thread *tt);
/* Queue a SEND timer, starting the thread if needed. SYNCQ_OK, SYNCQ_ENOMEM,
 * SYNCQ_ELIMIT (the thread could not start). */
int po_timer_thread_add(po_timer_thread *tt, po_timer *t);
void po_timer_thread_destroy(po_timer_thread *tt, struct syncq_po_system *sys);

/* Deliver a message (send_after's, whose time has come; a notice of
 * po_post): linked into `to`'s inbox if that process still lives, else
 * dropped. SYNCQ_OK: linked; else dropped: `to`'s status (SYNCQ_EDEAD,
 * SYNCQ_ENOENT) or the status of its mailbox's lock, which refused. */
int po_deliver(struct syncq_po_system *sys, syncq_po_pid to, syncq_po_msg *msg);

#endif
