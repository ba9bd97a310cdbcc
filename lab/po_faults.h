/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_faults.h — the lab's watch over the postoffice experiments' waits
 * (a message a mailbox loses) and the send that loses or duplicates one
 * message for the lab's own tests (lab/po_faults.c).
 *
 * SYNCQ_LAB_PO_FAULT=lose:K (dup:K): the K-th lab_po_send of a run (K >= 1,
 * counted from lab_po_faults_reset, over every process of the run)
 * answers SYNCQ_OK having freed the message (lose) or sends it twice
 * (dup), as a mailbox that lost (duplicated) it would look to the
 * receiver. The postoffice's mailboxes are a fixed table of the library,
 * not a registry the lab can add to, so the fault sits at the send.
 * Without the variable lab_po_send is syncq_po_send behind one load and
 * one branch that is never taken.
 *
 * SYNCQ_LAB_PO_SLOW=L (L >= 1): in launch L of a run (a run of one launch
 * is launch 1), the postoffice's cycle counter is calibrated as if it had
 * slowed to 1/LAB_PO_SLOW_SCALE of its rate (po_ticks_set_scale, as
 * po_timer_slow_test does), so the rate check of a fiber system trips
 * while the postoffice experiments run (docs/reliability.md, "The rate
 * checked as it runs"): the lab's tests see a gate change mid-run reach
 * the record. Not for measuring.
 */
#ifndef SYNCQ_LAB_PO_FAULTS_H
#define SYNCQ_LAB_PO_FAULTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "syncq/po.h"

/* The faulty send's number (1-based), 0: no fault asked for. Written once,
 * before any experiment runs. */
extern uint64_t lab_po_fault_k;

/* Reads SYNCQ_LAB_PO_FAULT: 1 when it asks for a fault, 0 without the
 * variable, -1 for a bad value. */
int lab_po_faults_register(void);
/* The slowed counter's factor (po_timer_slow_test's). */
#define LAB_PO_SLOW_SCALE 128.0
/* Reads SYNCQ_LAB_PO_SLOW: 1 when it names a launch, 0 without the
 * variable, -1 for a bad value. */
int lab_po_slow_register(void);
/* In the launch SYNCQ_LAB_PO_SLOW names (launch: lab_options.launch, 0
 * for a run of one launch), before anything decides the counter's rate:
 * scale it. 1 when scaled, 0 when not asked for this launch, -1 when the
 * rate was decided already. */
int lab_po_slow_apply(int launch);
/* "lose:K" or "dup:K" as asked, or NULL. */
const char *lab_po_faults_spec(void);
/* At a run's start: the count of sends starts over. */
void lab_po_faults_reset(void);
int lab_po_send_faulty(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *m, syncq_po_send_mode mode);

/* syncq_po_send, or the faulty send when SYNCQ_LAB_PO_FAULT asked for one. */
static inline int lab_po_send(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *m, syncq_po_send_mode mode) {
  if (__builtin_expect(lab_po_fault_k != 0, 0)) return lab_po_send_faulty(self, to, m, mode);
  return syncq_po_send(self, to, m, mode);
}

/* The watch of a wait for a known count of messages. A waiting process
 * reads it at its slow path only (after a receive that found the inbox
 * empty or timed out, LAB_PO_WATCH_NS apart at least on fibers and at
 * every 16th empty poll on threads): `moving` says whether anything moved
 * since the last reading (a sender still holds work, or a count the
 * experiment keeps changed). lab_po_streak_lost answers true once nothing
 * has moved for LAB_QUEUE_LOST_MS; a reading more than half of that after
 * the previous one (the waiter was descheduled, the experiment stopped)
 * starts the streak over, as the queue watch does. */
#define LAB_PO_WATCH_NS 100000000ull /* a fiber's timed receive between two readings */
typedef struct lab_po_streak {
  uint64_t since; /* nothing moved since (ns; 0: no reading yet) */
  uint64_t last;  /* the previous reading */
} lab_po_streak;
bool lab_po_streak_lost(lab_po_streak *s, bool moving);

/* A watcher for an experiment whose waits stay syncq_po_recv_blocking: a
 * kernel thread attached to the system as a process (so its deadlines
 * are its own futex's: a fiber parked with a deadline would put a
 * deadline check, a cycle-counter read, into every switch of its
 * scheduler, on the measured path). It
 * receives with a deadline of LAB_PO_WATCH_NS and between two calls
 * reading(arg, &moving), which answers whether a message is owed; once
 * one is owed and nothing has moved for LAB_QUEUE_LOST_MS (the streak
 * above) it sets `fired`, calls release(self, arg) (which sends the
 * waiting processes what lets them return) and stops. A message to its
 * pid (lab_po_watch_stop, from a process) or lab_po_watch_join stops it.
 * lab_po_watch_start attaches it before returning, so it takes the
 * system's next slot: start it before the processes whose pids an
 * experiment counts on. */
typedef struct lab_po_watch {
  syncq_po_system *sys;
  bool (*reading)(void *arg, bool *moving);
  void (*release)(syncq_po_proc *self, void *arg);
  void *arg;
  _Atomic(syncq_po_pid) pid; /* its pid once attached; -1 before, or when it could not attach */
  _Atomic(int) fired;        /* it found a message lost and released the waiters */
  _Atomic(int) quit;         /* lab_po_watch_join's stop */
  pthread_t thread;
  bool started;
} lab_po_watch;
/* SYNCQ_OK, or the status of the thread's creation or attach. */
int lab_po_watch_start(lab_po_watch *w);
/* From a process of the system: tell the watcher to stop (SYNCQ_OK, or
 * the send's status; a watcher that has stopped already is no error). */
int lab_po_watch_stop(syncq_po_proc *self, lab_po_watch *w);
/* From the thread that started it, once the experiment's processes are
 * done: stops it (within LAB_PO_WATCH_NS when nobody sent the stop) and
 * joins its thread. Returns whether it fired. */
bool lab_po_watch_join(lab_po_watch *w);

#endif
