/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_wait.pml — the doorbell of syncq_am_wait's sleep (src/am/am.c,
 * "Sleeping": am_sleep, am_waiters_add, am_ring) with several threads of
 * the receiving process asleep on one endpoint, for SPIN.
 *
 * W waiting threads, each a syncq_am_wait that only a wake-up ends (no
 * slice: a lost wake-up is a hang, as in the C tests that set the slice
 * to NEVER_NS), polling in a loop (with -DONCE=1 each returns after one
 * message, as test_wait_threads_sleep's threads do). One more thread, the
 * leaver, makes one sleep that its timeout may end at any step, polls
 * once more and returns: the thread that wakes and leaves while others
 * sleep. One sender commits K messages and after each one reads `asleep`
 * and, if it is nonzero, bumps `bell` and wakes every thread queued on it.
 *
 * The queue is two counters: `tail` (messages committed) and `head`
 * (messages taken: one poll at a time, as am_queue_take makes it). The
 * kernel's futex: a wait queues the thread only if `bell` still holds
 * what it read (one atomic step), and a wake dequeues every thread.
 *
 * The count (the default): the waiter's count and its copy in `asleep`
 * change in one step (C: under the lock bit of ep->waiters; senders only
 * read the copy, so the lock's steps are one step to them). -DFLAG=1 is
 * the code before: each thread sets `asleep` to 1 before its look and
 * clears it after its wait, the control run that SPIN must fail.
 *
 * Properties, exhaustively: no thread sleeps for good while a message is
 * there (SPIN's invalid-end-state check: a lost wake-up leaves a waiter
 * blocked with head < tail once the sender is done); every message is
 * taken once (head == tail == K at the end); the copy in `asleep` is the
 * count of threads between their add and their subtract.
 *
 * Memory model: sequential consistency; the C code's seq_cst fences
 * (waiter: after its write of asleep, before its look; sender: after its
 * commit, before its read of asleep) are what make SC's reasoning hold
 * for these two pairs of accesses (Dekker's), see am.c.
 */
#ifndef W
#define W 2 /* waiters that only a wake-up ends */
#endif
#ifndef K
#define K 2 /* messages */
#endif
#ifndef FLAG
#define FLAG 0
#endif
#ifndef ONCE
#define ONCE 0
#endif
#ifndef LEAVER
#define LEAVER 1 /* 0: no leaver, the waiters alone */
#endif
#define NT (W + 1) /* threads on the bell: the waiters 0..W-1, the leaver W */

byte tail;        /* messages committed */
byte head;        /* messages taken by polls */
byte asleep;      /* the segment's word */
byte bell;        /* the futex word */
byte count;       /* the count variant: ep->waiters (its count part) */
bit queued[NT];   /* in the kernel's queue on bell */
bit counted[NT];  /* the model's record: between its add and its subtract */

/* The copy is the count of threads between their add and their
 * subtract (checked at each change, the only steps that write them). */
inline check_count() {
  k = 0; n = 0;
  do :: k < NT -> n = n + counted[k]; k++ :: else -> break od;
  assert(asleep == n && count == n)
}

/* am_waiters_add(ep, 1) / the flag's set */
inline enter(me) {
#if FLAG
  atomic { asleep = 1; counted[me] = 1 }
#else
  atomic { count++; asleep = count; counted[me] = 1; check_count() }
#endif
}

/* am_waiters_add(ep, -1) / the flag's clear */
inline leave(me) {
#if FLAG
  atomic { asleep = 0; counted[me] = 0 }
#else
  atomic {
    assert(count > 0 && asleep == count);
    count--; asleep = count; counted[me] = 0; check_count()
  }
#endif
}

/* syncq_futex_wait(&bell, seen): the kernel queues the thread only while
 * bell holds seen (one step) */
inline futex_wait(me, seen) {
  atomic { if :: bell == seen -> queued[me] = 1 :: else -> skip fi }
}

proctype waiter(byte me) {
  byte seen, k, n;
  do
  :: atomic { head < tail -> head++ }; /* a poll that handles one */
#if ONCE
     break
#else
     skip
#endif
  :: head == K -> break /* every message taken: the program ends */
  :: else ->            /* the poll found nothing: am_sleep */
     if
     :: head < tail -> skip /* the first look: not idle, poll again */
     :: else ->
        seen = bell;        /* acquire */
        enter(me);          /* then the fence */
        if
        :: head < tail -> skip /* the look after the fence: poll now */
        :: else ->
           futex_wait(me, seen);
           /* only a wake-up ends it (or the end of the program: every
            * message taken, where the C wait would time out) */
           (!queued[me] || head == K);
           queued[me] = 0
        fi;
        leave(me)
     fi
  od
}

proctype leaver() {
  byte seen, k, n;
  if
  :: head < tail -> skip
  :: else ->
     seen = bell;
     enter(W);
     if
     :: head < tail -> skip
     :: else ->
        futex_wait(W, seen);
        queued[W] = 0 /* woken, or its timeout: at any step */
     fi;
     leave(W)
  fi;
  atomic { if :: head < tail -> head++ :: else -> skip fi } /* its last poll */
}

proctype sender() {
  byte i, j;
  do
  :: i < K ->
     tail++; /* commit (after advancing the tail) */
     /* the fence, then the read of asleep */
     if
     :: asleep != 0 ->
        bell++; /* release */
        atomic { j = 0; do :: j < NT -> queued[j] = 0; j++ :: else -> break od } /* wake all */
     :: else -> skip
     fi;
     i++
  :: else -> break
  od
}

init {
  byte i;
  atomic {
    i = 0;
    do :: i < W -> run waiter(i); i++ :: else -> break od;
#if LEAVER
    run leaver();
#endif
    run sender()
  }
  (_nr_pr == 1); /* every thread returned */
  assert(head == K && tail == K)
}
