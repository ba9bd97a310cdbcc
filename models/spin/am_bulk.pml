/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_bulk.pml — the lock-free claim's bulk blocks (000 §3.2, Figure 3's
 * bulk variant) as syncq's active messages implement them
 * (src/am/claim_lockfree.c: assign, claim_slot, take, lockfree_claim,
 * bulk_skip_abandoned, lockfree_bulk_stalled; src/am/claim_common.c:
 * am_bulk_reclaim_dead; src/am/am.c: am_send, deliver, am_free_delivered,
 * unstick's take-back of a dead claim), with senders that may die at any
 * step, for SPIN.
 *
 * One bulk ring of B blocks. A block's state is (position, owner, type) in
 * one 64-bit word in C (am_state); here three arrays updated together in
 * one atomic step, as the C code's single-word loads, stores and CAS. A
 * FREE state names the position it is free for. The block's bytes (here:
 * sender and sequence number) are plain stores between claim and commit.
 *
 * The packet ring is a bounded ring of N packets, each with a state of
 * the same (position, type) form (FREE names the position it is free
 * for). A sender that holds its block takes the packet at the packet tail
 * only when it is FREE for the tail's position (take in C: assign only
 * when free, then the claim CAS; one step here, CLAIMED with the block's
 * position in it: the split and a death between its two CASes, the
 * receiver's skip, are am_claim.pml's), fills the block, marks it READY,
 * and commits the packet. On a full packet ring a plain send backs off
 * holding no packet position (C: take's SYNCQ_FULL to am_send) but
 * keeping its claimed block (lockfree_claim takes the block first and a
 * plain send keeps it across its retries: cs->has_bulk; only a NOWAIT or
 * failing send gives it back, am_claim_release); it tries again once the
 * packet at the tail changed. The receiver takes the packets in order: it
 * delivers a committed one (reading the block it names, then freeing the
 * block and the packet for a lap later, am_free_delivered), and takes
 * back a claimed one whose owner is dead, freeing its block if the dead
 * sender still holds it (CLAIMED or READY at that position).
 *
 * Senders (NS of them, K bulk messages each, in order, all plain sends).
 * Assignment (assign): load the bulk tail t; load the state of the block
 * at t; if it is FREE(t), CAS the tail t -> t + 1 (three steps); if it
 * holds an earlier position (not yet freed, or FREE for a position whose
 * sender has not claimed it), the ring is full: back off holding nothing
 * (C: SYNCQ_FULL to am_send); any other state means another sender took
 * t, and the CAS fails and reloads the tail. Claim (claim_slot): CAS
 * FREE(pos) -> CLAIMED(pos, me); a block moved past pos (skipped) sends
 * the sender back to assignment. Sender MORTAL may die before or after
 * any step that writes shared state (at most one death): it stops
 * forever and its pid is gone (the pid alone judges it here: the start
 * times and pid reuse are am_claim.pml's).
 *
 * A backing-off sender waits for the block it looked at to change, or the
 * tail to move; meanwhile, once a stale interval in C, it looks at the
 * block it waits for (lockfree_bulk_stalled: the block at the tail, or at
 * its own position where it holds one): a block CLAIMED by a dead owner
 * is taken back (am_bulk_reclaim_dead: FREE a lap later), and a block
 * still FREE for an earlier position, with the same state as at its
 * previous look (bulk_skip_abandoned's `seen`), is skipped (CAS to FREE a
 * lap later). Untimed here: a look happens whenever it would act (a first
 * look records, a second skips or takes back); a look that would change
 * nothing is not a step, so a sender that could wait for ever is a
 * blocked state, which SPIN reports. A live but slow sender's position
 * may be skipped too (C cannot tell it from a dead one); the model allows
 * that at most MAXSKIP times in all (a bound on the state space, not on
 * the algorithm; `assignee` is the model's bookkeeping).
 *
 * -DOLD_ASSIGN=1 is the code before a plain send's block assignment
 * waited for a free block: the bulk tail is taken unconditionally (a
 * fetch-and-increment), and a claim that finds its block not yet free for
 * it backs off holding the position. The control run that SPIN must fail
 * (property 4 below). -DNO_SKIP=1 and -DNO_TAKEBACK=1 remove the
 * stalled look's skip, or its take-back: controls that SPIN must fail
 * (the dead sender's abandoned position, or its claimed block, holds the
 * ring for good: property 5). -DNO_HELD_ON_FULL=1 asserts that no sender
 * backs off on a full packet ring while it holds a claimed block: the
 * code does not forbid it (a plain bulk send keeps its block across the
 * retries of its packet), so SPIN must fail it, showing that the model
 * reaches that state and properties 1-5 cover it.
 *
 * Properties, exhaustively:
 *  1. every delivered message reads the bytes its sender wrote into its
 *     block (no two senders in one block; the receiver frees a block only
 *     after reading it, and reads none before its claimer committed);
 *  2. each sender's messages are delivered in its order, none twice, and
 *     a live sender's none lost; at most one message of the dead sender
 *     is lost; only a dead owner's claim is taken back (a block held
 *     across a full packet ring is still its sender's when it takes its
 *     packet);
 *  3. a sender is assigned a block only while it is FREE for the position
 *     (asserted at the tail CAS that succeeds, after the separate loads),
 *     its claim CAS then never finds the block not yet free (it claims it
 *     or finds it skipped), and it is told FULL only with the tail it
 *     loaded still the tail;
 *  4. no block is free for a position whose live sender is backing off
 *     (the monitor): the block the receiver frees goes to whichever sender
 *     looks next, never to one that may not be running;
 *  5. no process is left blocked for good (SPIN's invalid-end-state check:
 *     the receiver stops only when every live sender's messages have
 *     arrived), a dead sender's abandoned position and claimed block
 *     included, and senders holding blocks while the packet ring is full.
 *
 * Memory model: sequential consistency (see README.md).
 */
#ifndef B
#define B 2
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
#ifndef MAXSKIP
#define MAXSKIP 1
#endif
#ifndef OLD_ASSIGN
#define OLD_ASSIGN 0
#endif
#ifndef NO_SKIP
#define NO_SKIP 0 /* 1: no stalled look skips an abandoned position (a control) */
#endif
#ifndef NO_TAKEBACK
#define NO_TAKEBACK 0 /* 1: no stalled look takes back a dead owner's block (a control) */
#endif
#ifndef N
#define N 2 /* packets */
#endif
#ifndef NO_HELD_ON_FULL
#define NO_HELD_ON_FULL 0 /* 1: assert no sender backs off on a full packet ring holding a block (a control) */
#endif

#define FREE 0
#define CLAIMED 1
#define READY 2
#define SLOT(p) ((p) % B)
#define NONE 255 /* AM_BULK_SEEN_NONE: no look yet */
#define MAXPOS 16
#define PS(p) ((p) % N)

byte bpos[B];  /* block state: position */
byte bown[B];  /*              owner (0: none) */
byte btype[B]; /*              type */
byte bfrom[B]; /* the block's bytes, written between claim and commit */
byte bseq[B];
byte btail;    /* next block position to assign */
/* the packet ring: state (position, type) as for a block; the fields */
byte ppos[N];
byte pkst[N];      /* FREE, CLAIMED, READY */
byte pkfrom[N];
byte pkseq[N];
byte pkb[N];       /* the block position the packet names */
byte ptail, phead; /* next packet position to take; the receiver's head */
bit pkwait[4];     /* model bookkeeping: backing off on a full packet ring */
bit dead[4];       /* indexes 1..NS */
bit a_death;
bit alive[4];      /* the pid's process exists (am_owner_dead reads it) */
byte rcv[4];       /* next sequence number expected from each sender */
byte lost_of[4];
byte skips;        /* skips of positions assigned to live senders */
bit waiting[4];    /* model bookkeeping: backing off, not looked again */
byte assignee[MAXPOS]; /* model bookkeeping: who was assigned each position */

inline die_point() {
  if
  :: me == MORTAL && !a_death -> atomic { dead[me] = 1; a_death = 1; alive[me] = 0 }; goto gone
  :: true -> skip
  fi
}

/* A stalled sender's look at the block of position `w` (the tail, or its
 * own): take back a dead owner's claim, or skip an earlier position whose
 * FREE state two looks saw unchanged. Enabled only when it acts. */
#define ABANDONED(w) (btype[SLOT(w)] == FREE && bpos[SLOT(w)] < w)
#define MAY_SKIP(p) (dead[assignee[p]] || skips < MAXSKIP)
inline stalled_look(w) {
  atomic {
    !NO_TAKEBACK && btype[SLOT(w)] == CLAIMED && !alive[bown[SLOT(w)]] -> /* am_bulk_reclaim_dead */
    bfrom[SLOT(w)] = 0; bseq[SLOT(w)] = 0;
    btype[SLOT(w)] = FREE; bpos[SLOT(w)] = bpos[SLOT(w)] + B; bown[SLOT(w)] = 0;
    seen = bpos[SLOT(w)] /* the same look then reads FREE a lap later */
  }
}
inline first_look(w) {
  atomic { ABANDONED(w) && seen != bpos[SLOT(w)] -> seen = bpos[SLOT(w)] }
}
inline second_look(w) {
  atomic { /* bulk_skip_abandoned: unchanged since the last look */
    !NO_SKIP && ABANDONED(w) && seen == bpos[SLOT(w)] && MAY_SKIP(seen) ->
    if
    :: !dead[assignee[seen]] -> skips++
    :: else -> skip
    fi;
    bpos[SLOT(w)] = bpos[SLOT(w)] + B;
    seen = bpos[SLOT(w)] /* bulk_skip_abandoned returns the state it wrote */
  }
}

proctype sender(byte me) {
  byte seq, pos, t, seen, pk;
  bit got;
  seen = NONE;
  do
  :: seq < K ->
     die_point();
     do
     :: !got ->
#if OLD_ASSIGN
        atomic { pos = btail; assert(pos < MAXPOS); assignee[pos] = me; btail++; seen = NONE };
#else
        t = btail; /* relaxed load of the bulk tail */
        do
        :: atomic { /* relaxed load of the tail block's state */
             if
             :: btype[SLOT(t)] == FREE && bpos[SLOT(t)] == t -> got = 1 /* free for t: CAS */
             :: bpos[SLOT(t)] < t -> /* an earlier position's: SYNCQ_FULL */
                assert(btail == t); /* property 3 */
                waiting[me] = 1
             :: else -> skip /* t taken by another sender: the CAS fails */
             fi
           };
           if
           :: waiting[me] ->
              /* back off, poll; look at the block at the tail once a stale
               * interval; try again once the block or the tail changed */
              do
              :: atomic { bpos[SLOT(t)] >= t || btail != t -> waiting[me] = 0 }; break
              :: stalled_look(t)
              :: first_look(t)
              :: second_look(t)
              od;
              break
           :: else -> skip
           fi;
           atomic { /* CAS tail t -> t + 1; on failure t = the tail now */
             if
             :: btail == t ->
                assert(got && btype[SLOT(t)] == FREE && bpos[SLOT(t)] == t); /* property 3 */
                assert(t < MAXPOS); assignee[t] = me; btail++; pos = t; seen = NONE
             :: else -> t = btail; got = 0
             fi
           };
           if
           :: got -> break
           :: else -> skip
           fi
        od;
        t = 0;
        if
        :: !got -> goto reassign
        :: else -> got = 0
        fi;
#endif
        die_point(); /* assigned, not claimed: a stalled sender must skip it */
        do
        :: atomic { /* claim_slot: CAS FREE(pos) -> CLAIMED(pos, me) */
             if
             :: btype[SLOT(pos)] == FREE && bpos[SLOT(pos)] == pos ->
                btype[SLOT(pos)] = CLAIMED; bown[SLOT(pos)] = me; got = 1
             :: bpos[SLOT(pos)] > pos -> skip /* skipped: passed */
             :: else -> /* not yet free for pos: SYNCQ_FULL, holding pos */
                assert(OLD_ASSIGN); /* property 3 */
                waiting[me] = 1
             fi
           };
           if
           :: waiting[me] ->
              do
              :: atomic { bpos[SLOT(pos)] >= pos -> waiting[me] = 0 }; break
              :: stalled_look(pos)
              :: first_look(pos)
              :: second_look(pos)
              od
           :: else -> break
           fi
        od;
        if
        :: !got -> pos = 0 /* passed: take a new position */
        :: else -> skip
        fi;
reassign:
        skip
     :: else -> break
     od;
     die_point(); /* the block claimed, no packet: a stalled sender takes it back */
     do
     :: atomic { /* take: the packet at the tail free for its position */
          pkst[PS(ptail)] == FREE && ppos[PS(ptail)] == ptail ->
          /* property 2: a block held across a full packet ring is still ours */
          assert(btype[SLOT(pos)] == CLAIMED && bpos[SLOT(pos)] == pos && bown[SLOT(pos)] == me);
          pk = ptail; pkwait[me] = 0;
          pkfrom[PS(pk)] = me; pkseq[PS(pk)] = seq; pkb[PS(pk)] = pos; pkst[PS(pk)] = CLAIMED; ptail++
        };
        break
     :: atomic { /* SYNCQ_FULL: back off holding the block, no packet position; again once it changed */
          !pkwait[me] && !(pkst[PS(ptail)] == FREE && ppos[PS(ptail)] == ptail) ->
          pkwait[me] = 1;
          assert(!NO_HELD_ON_FULL) /* the control: the block is held here */
        }
     od;
     die_point(); /* packet and block claimed: the receiver takes both back */
     atomic { bfrom[SLOT(pos)] = me; bseq[SLOT(pos)] = seq }; /* the bulk copy: plain stores */
     die_point();
     atomic { btype[SLOT(pos)] = READY }; /* the block READY (relaxed) */
     die_point();
     pkst[PS(pk)] = READY; /* commit (release) */
     got = 0; pos = 0; pk = 0;
     seq++
  :: else -> break
  od;
gone:
  skip
}

#define LIVE_DONE(s) (s > NS || dead[s] || rcv[s] == K)

proctype receiver() {
  byte s, from, b;
  do
  :: LIVE_DONE(1) && LIVE_DONE(2) && LIVE_DONE(3) -> break
  :: atomic { /* deliver the committed head packet and free its block, then the packet */
       pkst[PS(phead)] == READY ->
       assert(ppos[PS(phead)] == phead);
       from = pkfrom[PS(phead)]; b = pkb[PS(phead)];
       assert(btype[SLOT(b)] == READY && bpos[SLOT(b)] == b && bown[SLOT(b)] == from); /* property 1 */
       assert(bfrom[SLOT(b)] == from && bseq[SLOT(b)] == pkseq[PS(phead)]);
       assert(pkseq[PS(phead)] == rcv[from]); /* property 2 */
       rcv[from]++;
       bfrom[SLOT(b)] = 0; bseq[SLOT(b)] = 0;
       btype[SLOT(b)] = FREE; bpos[SLOT(b)] = b + B; bown[SLOT(b)] = 0;
       pkfrom[PS(phead)] = 0; pkseq[PS(phead)] = 0; pkb[PS(phead)] = 0;
       pkst[PS(phead)] = FREE; ppos[PS(phead)] = phead + N;
       phead++; from = 0; b = 0
     }
  :: atomic { /* take back a claimed head packet whose owner is dead */
       pkst[PS(phead)] == CLAIMED && !alive[pkfrom[PS(phead)]] ->
       assert(ppos[PS(phead)] == phead);
       from = pkfrom[PS(phead)]; b = pkb[PS(phead)];
       assert(dead[from]); /* property 2: only a dead owner's claim */
       lost_of[from]++;
       if
       :: bpos[SLOT(b)] == b && bown[SLOT(b)] == from && btype[SLOT(b)] != FREE ->
          bfrom[SLOT(b)] = 0; bseq[SLOT(b)] = 0;
          btype[SLOT(b)] = FREE; bpos[SLOT(b)] = b + B; bown[SLOT(b)] = 0
       :: else -> skip
       fi;
       pkfrom[PS(phead)] = 0; pkseq[PS(phead)] = 0; pkb[PS(phead)] = 0;
       pkst[PS(phead)] = FREE; ppos[PS(phead)] = phead + N;
       phead++; from = 0; b = 0
     }
  od;
  for (s : 1 .. NS) {
    assert(lost_of[s] == 0 || dead[s] && lost_of[s] == 1)
  }
}

/* Property 4: a block FREE for an assigned position (below the tail)
 * whose live sender is backing off. */
#define FREE_FOR_WAITER(i) \
  (i < B && btype[i] == FREE && bpos[i] < btail && !dead[assignee[bpos[i]]] && waiting[assignee[bpos[i]]])
bit free_for_waiter;
proctype monitor() {
end:
  atomic {
    FREE_FOR_WAITER(0) || FREE_FOR_WAITER(1) || FREE_FOR_WAITER(2) || FREE_FOR_WAITER(3) ->
    free_for_waiter = 1;
    assert(!free_for_waiter)
  }
}

init {
  byte i;
  atomic {
    for (i : 0 .. B - 1) {
      bpos[i] = i
    }
    for (i : 0 .. N - 1) {
      ppos[i] = i
    }
    for (i : 1 .. NS) {
      alive[i] = 1;
      run sender(i)
    }
    run receiver();
    run monitor()
  }
}
