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
 * on the tail: tail -> tail + 1; at any time here, where C assigns only
 * after a relaxed look finds the tail's slot FREE for it: C's
 * interleavings are a subset of the model's, so the safety properties
 * carry over, not a bound on how long C's sender retries), claim the
 * slot (CAS FREE(pos) -> CLAIMED(pos, me)), then, as a separate step,
 * record their start time in the slot's owner_start (the C order: the
 * lock-free claimer can write it only after its claim CAS), fill it,
 * commit (store READY(pos)). A claim
 * that finds the slot moved past its position (the receiver skipped it)
 * takes a new position; one that finds it not yet free waits (C: backs
 * off, polls, retries). Sender MORTAL may die before or after any of its
 * steps (at most one death): it stops forever and its pid is gone.
 *
 * Identities: sender s is the process with pid s and start time s (the
 * process table pstart[pid]: the start time of the process that holds the
 * pid now, 0 when none does). With -DREUSE=1 a new process (start time
 * NS + 1, not a sender) may take the dead sender's pid and later exit.
 *
 * Receiver: at its head position h, delivers a READY(h) packet and frees
 * the slot for h + N; takes back a CLAIMED(h) packet whose owner it judges
 * dead (counted lost); skips a FREE(h) slot when the tail says h was
 * assigned (counted skipped) — in C after the stale timeout, which may also
 * expire on a live but slow sender: the model lets the receiver skip a
 * position assigned to a dead sender at any time, and one assigned to a
 * live sender at most MAXSKIP times (a bound on the state space, not on
 * the algorithm; `assignee` is the model's bookkeeping, C does not know
 * it). The take-back judges as am_owner_dead does, from what it reads, in
 * C's steps: the state (pid), owner_start, the pid's process: dead when
 * no process holds the pid, or when owner_start is not 0 and differs from
 * that process's start time (the pid was reused); else alive. Then it
 * clears owner_start and CASes the state to FREE(h + N). Every free (the
 * delivery, the take-back) clears owner_start, so a claim not yet stamped
 * reads 0 and is judged by its pid alone; -DNO_CLEAR=1 leaves the previous
 * claimer's start time there (the code before that fix), the control run
 * that SPIN must fail.
 *
 * Properties, exhaustively: every delivered packet carries the fields of
 * the sender that claimed it (no two senders in one slot); each sender's
 * messages are delivered in its order, none twice, and a live sender's
 * none lost (its sequence numbers arrive without a gap); at most one
 * message of the dead sender is lost (the one it was sending); no process
 * is left blocked for good (SPIN's invalid-end-state check: the
 * receiver stops only when every live sender's messages have arrived).
 * `dead[]` is the model's record of who died, read only by these
 * properties and by the skip's bound, never by the take-back.
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
#ifndef NO_CLEAR
#define NO_CLEAR 0
#endif
#ifndef REUSE
#define REUSE 0
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
byte sstart[N]; /* owner_start: the claimer's start time, 0 while FREE */
byte mfrom[N]; /* fields written between claim and commit */
byte mseq[N];
byte tail;     /* next position to assign */
byte head;     /* receiver's next position */
bit dead[4];     /* indexes 1..NS (at most 3 senders) */
bit a_death;   /* somebody died */
byte pstart[4];  /* start time of the process holding each pid, 0: none */
byte rcv[4];     /* next sequence number expected from each sender */
byte lost_of[4]; /* claims of each sender taken back */
byte skips;          /* skips of positions assigned to live senders */
#define MAXPOS 16
byte assignee[MAXPOS]; /* model bookkeeping (not in C): who was assigned each position */

/* sender `me` may die here (at most one death) */
inline die_point() {
  if
  :: me == MORTAL && !a_death -> atomic { dead[me] = 1; a_death = 1; pstart[me] = 0 }; goto gone
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
     sstart[SLOT(pos)] = me;  /* owner_start = our start time, after the CAS */
     die_point();
     mfrom[SLOT(pos)] = me;   /* fill */
     die_point();
     mseq[SLOT(pos)] = seq;
     die_point();
     atomic { spos[SLOT(pos)] = pos; spid[SLOT(pos)] = me; stype[SLOT(pos)] = READY }; /* commit: store READY(pos, me) (release) */
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

#if NO_CLEAR /* -DNO_CLEAR=1: a free leaves owner_start as it was */
#define CLEAR_START(i) skip
#else
#define CLEAR_START(i) sstart[i] = 0
#endif

proctype receiver() {
  byte s, from, tpid, ostart, pst;
  bit judged;
  do
  :: LIVE_DONE(1) && LIVE_DONE(2) && LIVE_DONE(3) -> break
  :: atomic { /* deliver READY(h) */
       stype[SLOT(head)] == READY && spos[SLOT(head)] == head ->
       from = mfrom[SLOT(head)];
       assert(from == spid[SLOT(head)]);   /* the claimer's own fields */
       assert(mseq[SLOT(head)] == rcv[from]); /* per-sender order, no duplicate, no gap */
       rcv[from]++;
       CLEAR_START(SLOT(head)); /* in C a relaxed store before the release below */
       stype[SLOT(head)] = FREE; spid[SLOT(head)] = 0; spos[SLOT(head)] = head + N;
       mfrom[SLOT(head)] = 0; mseq[SLOT(head)] = 0;
       head++; from = 0
     }
#if !NO_RECLAIM /* -DNO_RECLAIM=1: the control run, which SPIN must fail */
  :: atomic { /* take back a claim whose owner is judged dead (after the
               * stale timeout): the state, read with acquire */
       stype[SLOT(head)] == CLAIMED && spos[SLOT(head)] == head -> tpid = spid[SLOT(head)]
     };
     ostart = sstart[SLOT(head)]; /* owner_start, relaxed */
     /* am_owner_dead(tpid, ostart): the pid's process, from /proc */
     d_step { pst = pstart[tpid]; judged = (pst == 0 || (ostart != 0 && ostart != pst)) };
     if
     :: judged ->
        CLEAR_START(SLOT(head));
        atomic { /* CAS CLAIMED(h, tpid) -> FREE(h + N) */
          if
          :: stype[SLOT(head)] == CLAIMED && spos[SLOT(head)] == head && spid[SLOT(head)] == tpid ->
             assert(dead[tpid]); /* only a dead owner's claim is taken back */
             lost_of[tpid]++;
             stype[SLOT(head)] = FREE; spid[SLOT(head)] = 0; spos[SLOT(head)] = head + N;
             mfrom[SLOT(head)] = 0; mseq[SLOT(head)] = 0;
             head++
          :: else -> skip /* committed meanwhile: delivered next */
          fi
        }
     :: else -> /* alive: look again after another interval, which can
                 * judge otherwise only once something it reads has
                 * changed (waiting for that keeps a hang a blocked state,
                 * which SPIN reports, not a cycle of identical looks) */
        stype[SLOT(head)] != CLAIMED || sstart[SLOT(head)] != ostart || pstart[tpid] != pst
     fi;
     d_step { tpid = 0; ostart = 0; pst = 0; judged = 0 }
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

#if REUSE
/* A new process that takes the dead sender's pid (a later start time); it
 * sends nothing. REUSE 1: it exits some time later; REUSE 2: it lives on. */
proctype reuser() {
end_wait:
  dead[MORTAL] ->
  pstart[MORTAL] = NS + 1;
#if REUSE == 1
  pstart[MORTAL] = 0
#else
end_live:
  false
#endif
}
#endif

init {
  byte i;
  atomic {
    for (i : 0 .. N - 1) {
      spos[i] = i
    }
    for (i : 1 .. NS) {
      pstart[i] = i; /* sender i: pid i, start time i */
      run sender(i)
    }
    run receiver();
#if REUSE
    run reuser()
#endif
  }
}
