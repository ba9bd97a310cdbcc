/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * postoffice.c — each process's postoffice (002 §3.1, §4): get, send by
 * linking or copying, recv that yields while the inbox is empty, a
 * blocking recv that sleeps on a futex, try_recv, free.
 *
 * Contract
 *   Source:      002 §3.1 (Figure 4: inbox + free list per process) and §4
 *                ("Sending/Receiving": the link and copy versions of
 *                Send(), Recv() yielding its time slice while empty). The
 *                blocking recv is beyond 002: an eventcount (epoch word +
 *                sleeping flag) so a wake-up cannot be lost: the receiver
 *                announces itself (an exchange of its sleeping flag)
 *                and checks the inbox again before sleeping; a sender
 *                enqueues, then reads the flag with a read-modify-write
 *                and wakes the receiver if it was set. RMWs of one word are
 *                totally ordered, so one of the two sees the other.
 *   Progress:    as the system's mailbox; get/free/copy take from and give
 *                to free lists that are lock-free (counted pointers,
 *                syncq/reclaim.h: several copying senders pop from one
 *                recipient's list at once, so ABA matters).
 *   Atomics:     get: 1 double-width CAS (pop); free: 1 (push); none for
 *                a fiber whose scheduler's header cache (header.c) has a
 *                header, or room for one; send LINK: the mailbox's
 *                enqueue + 1 fetch-and-add(0) of the recipient's sleeping
 *                flag; send COPY: + a get and a free.
 *   Memory:      headers are type-stable (po.h); get and COPY allocate a
 *                header only when the cache and the free list are empty
 *                (a fiber's from its scheduler's slab chunk) and (re)allocate a
 *                payload only when the message's buffer is too small (a
 *                header's inline bytes hold SYNCQ_PO_INLINE_MSG).
 *                "mutex-nofree": malloc/free per message.
 *   Signal-safe: no.  Process-shared: no.
 *   Limits:      payload up to SYNCQ_PO_MAX_MSG bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stats_internal.h"
#include "po_internal.h"
#include "syncq/clock.h"
#include "syncq/platform.h"

static syncq_po_msg *nofree_new(void) {
  syncq_po_msg *m = syncq_alloc_aligned(sizeof *m, _Alignof(syncq_po_msg));
  if (m == NULL) return NULL;
  po_header_clear(m);
  return m;
}

/* A header from the calling fiber's scheduler cache, else from `from`'s
 * free list, else a new one (from the scheduler's own slab chunk when
 * there is a cache); NULL when memory is short. The cache first: it
 * costs no atomics, and a process that has never received (a new leaf)
 * finds its own list empty while headers its scheduler's processes
 * freed are there, still in cache. */
static syncq_po_msg *take_header(syncq_po_system *sys, struct syncq_po_proc *from) {
  if (!sys->mb->free_list) return nofree_new();
  po_header_cache *c = po_header_cache_here(sys);
  if (c != NULL && c->n != 0) return c->free[--c->n];
  syncq_fl_link *l;
  if (syncq_freelist_pop(&from->free, &l) == SYNCQ_OK) return SYNCQ_FL_CONTAINER(l, syncq_po_msg, fl);
  return c != NULL ? po_header_take(sys, c) : po_header_new(sys);
}

/* A free header goes to the calling fiber's scheduler cache while it has
 * room, else to `to`'s free list (a plain thread's always). */
static void give_header(syncq_po_system *sys, struct syncq_po_proc *to, syncq_po_msg *m) {
  if (!sys->mb->free_list) {
    po_payload_free(m);
    free(m);
    return;
  }
  po_header_cache *c = po_header_cache_here(sys);
  if (c != NULL && po_header_keep(c, m)) return;
  (void)syncq_freelist_push(&to->free, &m->fl);
}

/* Make room for len payload bytes (the holder owns the buffer): the
 * header's inline bytes hold a small payload, so a header allocates a
 * buffer only for its first message larger than those. */
static int reserve(syncq_po_msg *m, size_t len) {
  if (m->cap >= len && m->data != NULL) return SYNCQ_OK;
  void *d = malloc(len ? len : 1);
  if (d == NULL) return SYNCQ_ENOMEM;
  po_payload_free(m);
  m->data = d;
  m->cap = len;
  return SYNCQ_OK;
}

int syncq_po_get(syncq_po_proc *self, size_t len, syncq_po_msg **out) {
  if (self == NULL || out == NULL || len > SYNCQ_PO_MAX_MSG) return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED;
  syncq_po_msg *m = take_header(self->sys, self);
  if (m == NULL) return SYNCQ_ENOMEM;
  if (reserve(m, len) != SYNCQ_OK) {
    give_header(self->sys, self, m);
    return SYNCQ_ENOMEM;
  }
  m->len = len;
  m->type = 0;
  m->sender = self->pid;
  *out = m;
  return SYNCQ_OK;
}

int syncq_po_free(syncq_po_proc *self, syncq_po_msg *msg) {
  if (self == NULL || msg == NULL) return SYNCQ_EINVAL;
  give_header(self->sys, self, msg);
  return SYNCQ_OK;
}

/* After an enqueue: wake the recipient if it sleeps in recv_blocking.
 * acq_rel read-modify-write of `sleeping` (writing back what it read): it
 * is ordered with the receiver's acq_rel exchange of the same word, so
 * either this RMW comes later and reads 1 (we wake it), or it comes first
 * and the receiver's exchange reads from it, synchronizes with it, and its
 * second look at the inbox sees our message. (An RMW rather than a seq_cst
 * fence: the same guarantee in C11 terms, and ThreadSanitizer models it.) */
void po_wake(struct syncq_po_proc *from, struct syncq_po_proc *to) {
  /* relaxed: set before the state word's release store that our acquire
   * load in send read; a stale pid's slot may be changing it, and then
   * either wake is a harmless no-op or spurious wake-up. */
  if (atomic_load_explicit(&to->is_fiber, memory_order_relaxed)) {
    po_fiber_wake(from, to);
    return;
  }
  /* acq_rel, a read-modify-write rather than a load: it pairs with the
   * sleeper's acq_rel exchange of sleeping to 1 in recv. Both RMWs are in
   * sleeping's modification order: ours first, and the sleeper's reads ours
   * (release: our enqueue above) and then finds the message; the sleeper's
   * first, and ours reads its 1 and wakes it. A plain load could miss both. */
  if (atomic_fetch_add_explicit(&to->sleeping, 0u, memory_order_acq_rel) != 0u) {
    /* release: the futex word changes after the enqueue; the sleeper's
     * futex_wait compares it with the epoch it read before announcing. */
    atomic_fetch_add_explicit(&to->epoch, 1u, memory_order_release);
    (void)syncq_futex_wake(&to->epoch, 1, false);
  }
}

int syncq_po_send(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *msg, syncq_po_send_mode mode) {
  if (self == NULL || msg == NULL || (mode != SYNCQ_PO_LINK && mode != SYNCQ_PO_COPY) || msg->len > msg->cap)
    return SYNCQ_EINVAL;
  syncq_po_system *sys = self->sys;
  if (to < 0 || po_slot_of(sys, to) >= sys->nslots) return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED;
  struct syncq_po_proc *dst = &sys->procs[po_slot_of(sys, to)];
  /* acquire: pairs with the release stores of the state (spawn, attach,
   * exit), so the mailbox is initialised when we see RUNNING. The process
   * may exit and its slot be reused after this look: the message then
   * carries `to`, which the slot's next process does not answer to. */
  int st = po_pid_status(sys, to, atomic_load_explicit(&dst->state, memory_order_acquire));
  if (st != SYNCQ_OK) return st;
  msg->sender = self->pid;
  msg->to = to;
  if (mode == SYNCQ_PO_LINK) {
    int r = sys->mb->enqueue(dst->mailbox, msg);
    if (r != SYNCQ_OK) return r; /* the mailbox's lock refused: msg is the caller's still */
  } else {
    syncq_po_msg *copy = take_header(sys, dst);
    if (copy == NULL) return SYNCQ_ENOMEM;
    if (reserve(copy, msg->len) != SYNCQ_OK) {
      give_header(sys, dst, copy);
      return SYNCQ_ENOMEM;
    }
    copy->type = msg->type;
    copy->sender = msg->sender;
    copy->to = to;
    copy->len = msg->len;
    if (msg->len) memcpy(copy->data, msg->data, msg->len);
    int r = sys->mb->enqueue(dst->mailbox, copy);
    if (r != SYNCQ_OK) { /* the mailbox's lock refused: the copy goes back, msg is the caller's still */
      give_header(sys, dst, copy);
      return r;
    }
    give_header(sys, self, msg);
  }
  po_wake(self, dst);
  return SYNCQ_OK;
}

void po_drop(syncq_po_system *sys, struct syncq_po_proc *p, syncq_po_msg *m) { give_header(sys, p, m); }

int po_look(struct syncq_po_proc *self, syncq_po_msg **out) {
  const po_mailbox_ops *mb = self->sys->mb;
  if (po_killed(self)) return SYNCQ_EKILLED; /* before any message: the process is dead */
  for (;;) {
    syncq_po_msg *m;
    int r = mb->dequeue(self->mailbox, &m);
    if (r != SYNCQ_OK) return r;
    if (m->to == self->pid) {
      *out = m;
      return SYNCQ_OK;
    }
    po_drop(self->sys, self, m); /* sent to an earlier process of this slot */
  }
}

int po_take(struct syncq_po_proc *self, syncq_po_msg **out) {
  int r = po_look(self, out);
  return r == PO_MBOX_ON_ITS_WAY ? SYNCQ_EMPTY : r;
}

int syncq_po_try_recv(syncq_po_proc *self, syncq_po_msg **out) {
  if (self == NULL || out == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  int r = po_look(self, out);
  return r == PO_MBOX_ON_ITS_WAY ? SYNCQ_EBUSY : r;
}

static int fiber_wait(struct syncq_po_proc *self, syncq_po_msg **out);

/* A fiber may resume on another thread: its statistics go through calls
 * that compute the thread-local address afresh each time (a compiler may
 * keep one across the switch inside a single function). */
__attribute__((noinline)) static void count_yield(void) { SYNCQ_STAT_INC(yields); }
__attribute__((noinline)) static void count_block(void) { SYNCQ_STAT_INC(blocks); }

/* A fiber's first look at its inbox, and, found empty, one more after a
 * yield to the other runnable fibers of its scheduler (often the one its
 * last send woke, which may answer): what every receive does before it
 * parks, since a park and its wake-up cost more than that yield. The
 * yield stays on this scheduler: it steals nothing, and wakes no idle
 * scheduler, which would only take the receiver to another processor
 * for its second look (po_fiber_yield_local). SYNCQ_EMPTY: park. */
static int fiber_look(struct syncq_po_proc *self, syncq_po_msg **out) {
  int r = po_take(self, out);
  if (r != SYNCQ_EMPTY) return r;
  if (!po_fiber_yield_local(self)) return SYNCQ_EMPTY;
  count_yield();
  return po_take(self, out);
}

int syncq_po_recv(syncq_po_proc *self, syncq_po_msg **out) {
  if (self == NULL || out == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  if (self->is_fiber) {
    /* 002's Recv() yields while the inbox is empty. A fiber yields once,
     * so every other runnable fiber of its scheduler runs first, and then
     * parks until a send wakes it: polling would make each message wait
     * for a pass over every fiber of the scheduler (O(N) per hop). */
    int r = fiber_look(self, out);
    return r != SYNCQ_EMPTY ? r : fiber_wait(self, out);
  }
  for (;;) {
    int r = po_take(self, out);
    if (r != SYNCQ_EMPTY) return r;
    SYNCQ_STAT_INC(yields);
    syncq_yield();
  }
}

/* A fiber's wait for a message, its inbox found empty: announce BLOCKING,
 * look once more, park; woken, look again. The announcement is an acq_rel
 * exchange that pairs with the sender's acq_rel RMW of the same word in
 * po_fiber_wake (see fiber_sched.c's contract). */
static int fiber_wait(struct syncq_po_proc *self, syncq_po_msg **out) {
  po_fiber *f = &self->fiber;
  for (;;) {
    (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_BLOCKING, memory_order_acq_rel);
    int r = po_take(self, out); /* a message, or an exit signal (SYNCQ_EKILLED) */
    if (r != SYNCQ_EMPTY) {
      /* Back to RUNNING; a sender that turned BLOCKING into WOKEN
       * meanwhile needs nothing more (we have looked). acquire exchange,
       * not a store: pairs with that sender's acq_rel CAS, whose message
       * (sent after the one we took) the next look must see; a store
       * would end its release sequence (fiber_sched.c's contract). */
      (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire);
      return r;
    }
    count_block();
    po_fiber_park(self); /* returns RUNNING, woken by a send */
    if ((r = po_take(self, out)) != SYNCQ_EMPTY) return r;
  }
}

/* As a fiber's recv: the yield before the park is recv_blocking's too. */
static int fiber_recv_blocking(struct syncq_po_proc *self, syncq_po_msg **out) {
  int r = fiber_look(self, out);
  return r != SYNCQ_EMPTY ? r : fiber_wait(self, out);
}

int syncq_po_recv_blocking(syncq_po_proc *self, syncq_po_msg **out) {
  if (self == NULL || out == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  if (self->is_fiber) return fiber_recv_blocking(self, out);
  for (;;) {
    int r = po_take(self, out);
    if (r != SYNCQ_EMPTY) return r;
    /* acquire: pairs with a sender's release increment (nothing to see
     * through it; the snapshot must precede the announcement). */
    uint32_t seen = atomic_load_explicit(&self->epoch, memory_order_acquire);
    /* acq_rel: pairs with the senders' acq_rel RMW in po_wake(): either a
     * sender reads our 1, or we read from its RMW and see its message. */
    (void)atomic_exchange_explicit(&self->sleeping, 1u, memory_order_acq_rel);
    r = po_take(self, out);
    if (r == SYNCQ_EMPTY) {
      SYNCQ_STAT_INC(blocks);
      (void)syncq_futex_wait(&self->epoch, seen, -1, false);
    }
    /* relaxed: a sender's RMW that reads this 0 is ordered before our next
     * exchange, which then synchronizes with it (see po_wake()). */
    atomic_store_explicit(&self->sleeping, 0u, memory_order_relaxed);
    if (r != SYNCQ_EMPTY) return r;
  }
}

int syncq_po_yield(syncq_po_proc *self) {
  if (self == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED;
  if (self->is_fiber) po_fiber_yield(self);
  else syncq_yield();
  return po_killed(self) ? SYNCQ_EKILLED : SYNCQ_OK; /* killed while the others ran */
}

int syncq_po_stack(const syncq_po_proc *self, void **lo, size_t *size) {
  if (self == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  if (self->is_fiber) {
    if (lo) *lo = self->fiber.stack->lo;
    if (size) *size = self->fiber.stack->size;
    return SYNCQ_OK;
  }
  pthread_attr_t attr;
  void *a = NULL;
  size_t n = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return SYNCQ_ESYS;
  int e = pthread_attr_getstack(&attr, &a, &n);
  pthread_attr_destroy(&attr);
  if (e != 0) return SYNCQ_ESYS;
  if (lo) *lo = a;
  if (size) *size = n;
  return SYNCQ_OK;
}

/* ---- deadlines and timers (timer.c holds the heaps) ---- */

/* now + ns, saturating at UINT64_MAX (forever). */
static uint64_t deadline_after(uint64_t ns) {
  uint64_t now = syncq_now_ns();
  return ns >= UINT64_MAX - now ? UINT64_MAX : now + ns;
}

/* Arm the calling fiber's own deadline on the heap of the scheduler it
 * runs on (that scheduler is busy running it: no one to wake). */
static int arm(struct syncq_po_proc *self, uint64_t due) {
  po_timer *t = &self->tmr;
  t->due = due;
  t->kind = PO_TIMER_WAKE;
  t->proc = self;
  t->msg = NULL;
  po_timers *h = po_fiber_timers(self);
  int r = po_timers_add(h, t, NULL);
  if (r == SYNCQ_OK) self->tmr_heap = h;
  return r;
}

static void disarm(struct syncq_po_proc *self) {
  if (self->tmr_heap == NULL) return;
  po_timers_cancel(self->tmr_heap, &self->tmr);
  self->tmr_heap = NULL;
}

/* A fiber's receive with a deadline: as a fiber's recv (its one yield
 * first: fiber_look, before a timer is armed), then fiber_wait with its
 * timer waking it when the deadline passes (the clock decides, so a wake
 * for any other reason only costs another look). */
static int fiber_recv_until(struct syncq_po_proc *self, uint64_t due, syncq_po_msg **out) {
  po_fiber *f = &self->fiber;
  int r = fiber_look(self, out);
  if (r != SYNCQ_EMPTY) return r;
  for (;;) {
    if ((r = po_take(self, out)) != SYNCQ_EMPTY) break;
    if (syncq_now_ns() >= due) {
      r = SYNCQ_ETIMEDOUT;
      break;
    }
    if (self->tmr_heap == NULL && (r = arm(self, due)) != SYNCQ_OK) break;
    /* acq_rel: as in fiber_wait (the sender's and the timer's
     * wake-ups are the same acq_rel RMW of wstate). */
    (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_BLOCKING, memory_order_acq_rel);
    r = po_take(self, out);
    if (r != SYNCQ_EMPTY || syncq_now_ns() >= due) {
      /* acquire exchange: as in fiber_wait. */
      (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire);
      if (r == SYNCQ_EMPTY) r = SYNCQ_ETIMEDOUT;
      break;
    }
    count_block();
    po_fiber_park(self);
  }
  disarm(self);
  return r;
}

/* A thread's: the eventcount of recv_blocking with a timed futex wait. */
static int thread_recv_until(struct syncq_po_proc *self, uint64_t due, syncq_po_msg **out) {
  for (;;) {
    int r = po_take(self, out);
    if (r != SYNCQ_EMPTY) return r;
    uint64_t now = syncq_now_ns();
    if (now >= due) return SYNCQ_ETIMEDOUT;
    /* acquire / acq_rel: as in syncq_po_recv_blocking. */
    uint32_t seen = atomic_load_explicit(&self->epoch, memory_order_acquire);
    (void)atomic_exchange_explicit(&self->sleeping, 1u, memory_order_acq_rel);
    r = po_take(self, out);
    if (r == SYNCQ_EMPTY) {
      SYNCQ_STAT_INC(blocks);
      uint64_t left = due - now;
      (void)syncq_futex_wait(&self->epoch, seen, left > (uint64_t)INT64_MAX ? -1 : (int64_t)left, false);
    }
    /* relaxed: as in syncq_po_recv_blocking. */
    atomic_store_explicit(&self->sleeping, 0u, memory_order_relaxed);
    if (r != SYNCQ_EMPTY) return r;
  }
}

int syncq_po_recv_timeout(syncq_po_proc *self, uint64_t timeout_ns, syncq_po_msg **out) {
  if (self == NULL || out == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  if (timeout_ns == 0) {
    int r = po_look(self, out);
    return r == SYNCQ_EMPTY ? SYNCQ_ETIMEDOUT : r == PO_MBOX_ON_ITS_WAY ? SYNCQ_EBUSY : r;
  }
  if (timeout_ns == UINT64_MAX) return syncq_po_recv_blocking(self, out);
  uint64_t due = deadline_after(timeout_ns);
  return self->is_fiber ? fiber_recv_until(self, due, out) : thread_recv_until(self, due, out);
}

int syncq_po_sleep(syncq_po_proc *self, uint64_t ns) {
  if (self == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  uint64_t due = deadline_after(ns);
  if (!self->is_fiber) {
    /* A timed futex wait on the eventcount of recv_blocking rather than
     * nanosleep, so that an exit signal's wake-up (po_wake) ends it; a
     * message's wake-up only costs another look at the clock. */
    for (;;) {
      if (po_killed(self)) return SYNCQ_EKILLED;
      uint64_t now = syncq_now_ns();
      if (now >= due) return SYNCQ_OK;
      uint64_t left = due - now;
      /* acquire / acq_rel: as in syncq_po_recv_blocking (the kill's
       * store of doom comes before the signaller's RMW in po_wake). */
      uint32_t seen = atomic_load_explicit(&self->epoch, memory_order_acquire);
      (void)atomic_exchange_explicit(&self->sleeping, 1u, memory_order_acq_rel);
      if (!po_killed(self))
        (void)syncq_futex_wait(&self->epoch, seen, left > (uint64_t)INT64_MAX ? -1 : (int64_t)left, false);
      /* relaxed: as in syncq_po_recv_blocking. */
      atomic_store_explicit(&self->sleeping, 0u, memory_order_relaxed);
    }
  }
  /* A fiber parks until its timer fires; messages that arrive meanwhile
   * wake it for nothing (it parks again) and stay in the inbox. */
  po_fiber *f = &self->fiber;
  int r = SYNCQ_OK;
  while (syncq_now_ns() < due) {
    if (po_killed(self)) {
      r = SYNCQ_EKILLED;
      break;
    }
    if (self->tmr_heap == NULL && (r = arm(self, due)) != SYNCQ_OK) break;
    /* acq_rel: as in fiber_recv_until (an exit signal's wake-up too). */
    (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_BLOCKING, memory_order_acq_rel);
    if (po_killed(self)) {
      (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire); /* as in fiber_recv_until */
      r = SYNCQ_EKILLED;
      break;
    }
    if (syncq_now_ns() >= due) {
      (void)atomic_exchange_explicit(&f->wstate, PO_FIBER_RUNNING, memory_order_acquire); /* as in fiber_recv_until */
      break;
    }
    po_fiber_park(self);
  }
  disarm(self);
  return r;
}

int po_deliver(syncq_po_system *sys, syncq_po_pid to, syncq_po_msg *msg) {
  struct syncq_po_proc *dst = &sys->procs[po_slot_of(sys, to)]; /* checked by send_after */
  /* acquire: as in syncq_po_send. */
  int r = po_pid_status(sys, to, atomic_load_explicit(&dst->state, memory_order_acquire));
  if (r == SYNCQ_OK) r = sys->mb->enqueue(dst->mailbox, msg);
  if (r != SYNCQ_OK) {
    /* Exited meanwhile, or the mailbox's lock refused: the message is
     * not the caller's to keep (a timer's, a notice built for this call),
     * so it is dropped and the status goes to whoever can answer it
     * (po_post's callers; a timer has nobody). */
    po_drop(sys, dst, msg);
    return r;
  }
  po_wake(NULL, dst);
  return SYNCQ_OK;
}

int syncq_po_send_after(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *msg, uint64_t delay_ns) {
  if (self == NULL || msg == NULL || msg->len > msg->cap) return SYNCQ_EINVAL;
  if (delay_ns == 0) return syncq_po_send(self, to, msg, SYNCQ_PO_LINK);
  syncq_po_system *sys = self->sys;
  if (to < 0 || po_slot_of(sys, to) >= sys->nslots) return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED;
  struct syncq_po_proc *dst = &sys->procs[po_slot_of(sys, to)];
  /* acquire: as in syncq_po_send. */
  int st = po_pid_status(sys, to, atomic_load_explicit(&dst->state, memory_order_acquire));
  if (st != SYNCQ_OK) return st;
  po_timer *t = malloc(sizeof *t);
  if (t == NULL) return SYNCQ_ENOMEM;
  memset(t, 0, sizeof *t);
  t->due = deadline_after(delay_ns);
  t->kind = PO_TIMER_SEND;
  t->proc = self;
  t->msg = msg;
  t->to = to;
  msg->sender = self->pid;
  msg->to = to;
  int r;
  if (!sys->fibers) r = po_timer_thread_add(&sys->timers, t);
  else if (self->is_fiber && po_is_caller(self))
    r = po_timers_add(po_fiber_timers(self), t, NULL); /* its scheduler runs us: it looks next switch */
  else r = po_fiber_timer_add_remote(sys->fiber_rt, t);
  if (r != SYNCQ_OK) free(t);
  return r;
}

int po_post(syncq_po_system *sys, struct syncq_po_proc *from, syncq_po_pid to, uint32_t type, const void *data,
            size_t len, syncq_po_pid sender) {
  syncq_po_msg *m = take_header(sys, from);
  if (m == NULL) return SYNCQ_ENOMEM;
  if (reserve(m, len) != SYNCQ_OK) {
    give_header(sys, from, m);
    return SYNCQ_ENOMEM;
  }
  m->type = type;
  m->len = len;
  memcpy(m->data, data, len);
  m->sender = sender;
  m->to = to;
  return po_deliver(sys, to, m);
}

int syncq_po_monitor(syncq_po_proc *self, syncq_po_pid pid, uint64_t *ref) {
  if (self == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  syncq_po_system *sys = self->sys;
  if (pid < 0 || po_slot_of(sys, pid) >= sys->nslots) return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, pid)];
  po_monitor *mon = malloc(sizeof *mon);
  if (mon == NULL) return SYNCQ_ENOMEM;
  /* relaxed: a unique number is all it is. */
  uint64_t r = atomic_fetch_add_explicit(&sys->next_ref, 1, memory_order_relaxed) + 1;
  mon->watcher = self->pid;
  mon->ref = r;
  pthread_mutex_lock(&sys->spawn_lock);
  /* seq_cst, with the exit's RMW of nwatch after its store of PO_EXITED
   * (po_exit_notify): either we see it exited, or it sees our count. */
  atomic_fetch_add(&p->nwatch, 1u);
  bool alive = po_pid_status(sys, pid, atomic_load(&p->state)) == SYNCQ_OK;
  if (alive) {
    mon->next = p->monitors;
    p->monitors = mon;
  } else {
    atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as above */
  }
  pthread_mutex_unlock(&sys->spawn_lock);
  if (!alive) {
    free(mon);
    syncq_po_down d = {r, pid, SYNCQ_PO_NOPROC};
    /* To self, now: the caller is here to be told that its down message
     * could not be posted (memory, or its own mailbox's lock refused). */
    int posted = po_post(sys, self, self->pid, SYNCQ_PO_DOWN, &d, sizeof d, pid);
    if (posted != SYNCQ_OK) return posted;
  }
  if (ref != NULL) *ref = r;
  return SYNCQ_OK;
}

int syncq_po_demonitor(syncq_po_proc *self, syncq_po_pid pid, uint64_t ref) {
  if (self == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  syncq_po_system *sys = self->sys;
  if (pid < 0 || po_slot_of(sys, pid) >= sys->nslots) return SYNCQ_EINVAL;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, pid)];
  po_monitor *found = NULL;
  pthread_mutex_lock(&sys->spawn_lock);
  /* refs are unique in the system: a stale pid's slot holds no such one */
  for (po_monitor **at = &p->monitors; *at != NULL; at = &(*at)->next) {
    if ((*at)->ref == ref && (*at)->watcher == self->pid) {
      found = *at;
      *at = found->next;
      atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as in syncq_po_monitor */
      break;
    }
  }
  pthread_mutex_unlock(&sys->spawn_lock);
  free(found);
  return found != NULL ? SYNCQ_OK : SYNCQ_ENOENT;
}

int syncq_po_set_exit_reason(syncq_po_proc *self, int32_t reason) {
  if (self == NULL || !po_is_caller(self) || reason == SYNCQ_PO_NOPROC || reason == SYNCQ_PO_EXIT_KILL)
    return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED; /* it exits with the signal's reason */
  self->exit_reason = reason;
  return SYNCQ_OK;
}
