/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_claim.pml — 000's lock-free packet claim (Figure 3) as syncq's active
 * messages implement it (src/am/claim_lockfree.c, src/am/am.c: am_send,
 * am_poll_queue, deliver, unstick), with senders that may die at any
 * step, for SPIN.
 *
 * One packet queue of N slots. A slot's state is (position, owner, type)
 * in one 64-bit word in C (am_state); here three arrays updated together
 * in one atomic step, as the C code's single-word loads, stores and CAS.
 * The fields a sender fills (handler, args; here: sender and sequence
 * number) are plain stores between claim and commit.
 *
 * Senders (NS of them, K messages each, in order): assign a position (CAS
 * on the tail: tail -> tail + 1), claim the slot (CAS FREE(pos) ->
 * CLAIMED(pos, me)), fill it, commit (store READY(pos)). A claim that
 * finds the slot moved past its position (the receiver skipped it) takes a
 * new position; one that finds it not yet free waits (C: backs off, polls,
 * retries). Sender MORTAL may die before or after any of its steps (at
 * most one death): it stops forever and am_owner_dead reports it (pid
 * gone).
 *
 * Receiver: at its head position h, delivers a READY(h) packet and frees
 * the slot for h + N; takes back a CLAIMED(h) packet whose owner is dead
 * (counted lost); skips a FREE(h) slot when the tail says h was assigned
 * (counted skipped) — in C after the stale timeout, which may also expire
 * on a live but slow sender: the model lets the receiver skip a position
 * assigned to a dead sender at any time, and one assigned to a live sender
 * at most MAXSKIP times (a bound on the state space, not on the
 * algorithm; `assignee` is the model's bookkeeping, C does not know it).
 *
 * Properties, exhaustively: every delivered packet carries the fields of
 * the sender that claimed it (no two senders in one slot); each sender's
 * messages are delivered in its order, none twice, and a live sender's
 * none lost (its sequence numbers arrive without a gap); at most one
 * message of the dead sender is lost (the one it was sending); no process
 * is left blocked for good (SPIN's invalid-end-state check: the
 * receiver stops only when every live sender's messages have arrived).
 *
 * Memory model: sequential consistency; the C code's orders (acquire on
 * the claim CAS and the receiver's state load, release on commit and on
 * free) are what make SC's reasoning hold there (see README.md).
 */
#ifndef N
#define N 2
#endif
#ifndef NS
#define NS 2
#endif
#ifndef K
#define K 2
#endif
#ifndef MORTAL
#define MORTAL 2 /* sender id that may die (1..NS; 0: none) */
#endif
#ifndef NO_RECLAIM
#define NO_RECLAIM 0
#endif
#ifndef MAXSKIP
#define MAXSKIP 2
#endif

#define FREE 0
#define CLAIMED 1
#define READY 2
#define SLOT(p) ((p) % N)

byte spos[N];  /* slot state: position */
byte spid[N];  /*             owner (0: none) */
byte stype[N]; /*             type */
byte mfrom[N]; /* fields written between claim and commit */
byte mseq[N];
byte tail;     /* next position to assign */
byte head;     /* receiver's next position */
bit dead[4];     /* indexes 1..NS (at most 3 senders) */
bit a_death;   /* somebody died */
byte rcv[4];     /* next sequence number expected from each sender */
byte lost_of[4]; /* claims of each sender taken back */
byte skips;          /* skips of positions assigned to live senders */
#define MAXPOS 16
byte assignee[MAXPOS]; /* model bookkeeping (not in C): who was assigned each position */

/* sender `me` may die here (at most one death) */
inline die_point() {
  if
  :: me == MORTAL && !a_death -> atomic { dead[me] = 1; a_death = 1 }; goto gone
  :: true -> skip
  fi
}

proctype sender(byte me) {
  byte seq, pos, got;
  bit assigned;
  do
  :: seq < K ->
     assigned = 0;
     do
     :: !assigned ->
        die_point();
        atomic { pos = tail; assert(pos < MAXPOS); assignee[pos] = me; tail++ }; /* assign: CAS tail -> tail + 1 */
        assigned = 1;
        die_point()
     :: assigned ->
        /* claim: CAS FREE(pos) -> CLAIMED(pos, me); wait while the slot
         * holds an earlier position's packet */
        atomic {
          (stype[SLOT(pos)] == FREE && spos[SLOT(pos)] == pos) || spos[SLOT(pos)] > pos ->
          if
          :: stype[SLOT(pos)] == FREE && spos[SLOT(pos)] == pos ->
             stype[SLOT(pos)] = CLAIMED; spid[SLOT(pos)] = me; got = 1
          :: else -> got = 0 /* skipped by the receiver: passed */
          fi
        };
        if
        :: got -> break
        :: else -> assigned = 0 /* take a new position */
        fi
     od;
     die_point();
     mfrom[SLOT(pos)] = me;   /* fill */
     die_point();
     mseq[SLOT(pos)] = seq;
     die_point();
     stype[SLOT(pos)] = READY; /* commit (release store) */
     die_point();
     got = 0; pos = 0;
     seq++
  :: else -> break
  od;
gone:
  skip
}

/* every sender still alive has had all its messages delivered */
#define LIVE_DONE(s) (s > NS || dead[s] || rcv[s] == K)

proctype receiver() {
  byte s, from;
  do
  :: LIVE_DONE(1) && LIVE_DONE(2) && LIVE_DONE(3) -> break
  :: atomic { /* deliver READY(h) */
       stype[SLOT(head)] == READY && spos[SLOT(head)] == head ->
       from = mfrom[SLOT(head)];
       assert(from == spid[SLOT(head)]);   /* the claimer's own fields */
       assert(mseq[SLOT(head)] == rcv[from]); /* per-sender order, no duplicate, no gap */
       rcv[from]++;
       stype[SLOT(head)] = FREE; spid[SLOT(head)] = 0; spos[SLOT(head)] = head + N;
       mfrom[SLOT(head)] = 0; mseq[SLOT(head)] = 0;
       head++; from = 0
     }
#if !NO_RECLAIM /* -DNO_RECLAIM=1: the control run, which SPIN must fail */
  :: atomic { /* take back a dead owner's claim (after the stale timeout) */
       stype[SLOT(head)] == CLAIMED && spos[SLOT(head)] == head && dead[spid[SLOT(head)]] ->
       lost_of[spid[SLOT(head)]]++;
       stype[SLOT(head)] = FREE; spid[SLOT(head)] = 0; spos[SLOT(head)] = head + N;
       mfrom[SLOT(head)] = 0; mseq[SLOT(head)] = 0;
       head++
     }
#endif
  :: atomic { /* skip an assigned, never claimed position (after the timeout) */
       stype[SLOT(head)] == FREE && spos[SLOT(head)] == head && tail > head &&
       (dead[assignee[head]] || skips < MAXSKIP) ->
       if
       :: !dead[assignee[head]] -> skips++
       :: else -> skip
       fi;
       spos[SLOT(head)] = head + N;
       head++
     }
  od;
  /* only the dead sender may have lost anything, and one message at most */
  for (s : 1 .. NS) {
    assert(lost_of[s] == 0 || dead[s] && lost_of[s] == 1)
  }
}

init {
  byte i;
  atomic {
    for (i : 0 .. N - 1) {
      spos[i] = i
    }
    for (i : 1 .. NS) {
      run sender(i)
    }
    run receiver()
  }
}
