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
