/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_claim.pml — 000's lock-free packet claim (Figure 3) as syncq's active
 * messages implement it (src/am/claim_lockfree.c: assign, claim_slot,
 * lockfree_claim; src/am/am.c: am_send, am_poll_queue, deliver, unstick,
 * skip_abandoned_run), with senders that may die at any step, for SPIN.
 *
 * One packet queue of N slots. A slot's state is (position, owner, type)
 * in one 64-bit word in C (am_state); here three arrays updated together
 * in one atomic step, as the C code's single-word loads, stores and CAS.
 * A FREE state names the position it is free for. The fields a sender
 * fills (handler, args; here: sender and sequence number) are plain
 * stores between claim and commit.
 *
 * Senders (NS of them, K messages each, in order). Assignment (assign):
 * load the tail t; load the state of the packet at t; if it is FREE(t),
 * CAS the tail t -> t + 1 (three steps: another sender or the receiver may
 * act between them); if it still holds the previous lap's position, the
 * queue is full: back off and try again holding nothing (C: SYNCQ_FULL to
 * am_send, which backs off, polls its own endpoint and retries; a NOWAIT
 * send returns it: for packets both take the same path, so the model has
 * one kind of sender); any other state means another sender took t, and
 * the CAS fails and reloads the tail (a sender overtaken at its position
 * takes the next one). Claim (claim_slot): CAS FREE(pos) ->
 * CLAIMED(pos, me); a slot moved past pos (the receiver skipped it) sends
 * the sender back to assignment. Then, as separate steps, record its
 * start time in the slot's owner_start (the C order: the lock-free claimer
 * can write it only after its claim CAS), fill, commit (store READY(pos)).
 * Sender MORTAL may die before or after any step that writes shared
 * state (at most one death): it stops forever and its pid is gone.
 *
 * -DOLD_ASSIGN=1 is the code before the assignment waited for a free
 * packet: the tail is taken unconditionally (a fetch-and-increment), and a
 * claim that finds its packet not yet free for it backs off holding the
 * position. The control run that SPIN must fail (property 5 below).
 *
 * Identities: sender s is the process with pid s and start time s (the
 * process table pstart[pid]: the start time of the process that holds the
 * pid now, 0 when none does). With -DREUSE=1 a new process (start time
 * NS + 1, not a sender) may take the dead sender's pid and later exit.
 *
 * Receiver (its steps are its polls; the model does not time them): at
 * its head position h, delivers a READY(h) packet and frees the slot for
 * h + N; takes back a CLAIMED(h) packet whose owner it judges dead
 * (counted lost); steps over a slot that already serves the next lap
 * (FREE(h + N) or later states: h was skipped ahead); and skips a position
 * assigned and never claimed (h below the tail, its slot FREE(h)): CAS
 * FREE(h) -> FREE(h + N), then, as skip_abandoned_run, each later
 * position of the same lap below the tail read at an earlier look whose
 * slot still shows FREE for it. C looks twice, a stale interval apart,
 * at the clock read its paced polls make (an empty queue's polls at the
 * pace of their own count, idle_pace): once to find FREE(h) with the
 * tail past h (and read the tail again: the positions assigned by then),
 * once to CAS. Here the CAS and the run are one step, and the tail of the
 * earlier look is any value the tail has had since h was assigned (the
 * run may stop at any position below the tail now): h's slot shows FREE(h)
 * from h's assignment until its claim or skip, so every such value is
 * one a look could have read; and each CAS of the run writes a slot that
 * only that position's sender's claim also writes, so a claim between
 * two CASes is the same as one before the head's (the CAS then fails).
 * The timeout may also expire for a live but slow sender: the model lets
 * the receiver skip a position assigned to a dead sender at any time, and
 * positions of live senders at most MAXSKIP times in all, the run's
 * included (a bound on the state space, not on the algorithm; `assignee`
 * is the model's bookkeeping, C does not know it). The take-back judges as
 * am_owner_dead does, from what it reads, in C's steps: the state (pid),
 * owner_start, the pid's process: dead when no process holds the pid,
 * or when owner_start is not 0 and differs from that process's start time
 * (the pid was reused); else alive. Then it clears owner_start and CASes
 * the state to FREE(h + N). Every free (the delivery, the take-back)
 * clears owner_start, so a claim not yet stamped reads 0 and is judged by
 * its pid alone; -DNO_CLEAR=1 leaves the previous claimer's start time
 * there (the code before that fix), the control run that SPIN must fail.
 *
 * Properties, exhaustively:
 *  1. every delivered packet carries the fields of the sender that claimed
 *     it (no two senders in one slot, and the receiver reads no packet
 *     before its claimer filled and committed it: a free clears them);
 *  2. each sender's messages are delivered in its order, none twice, and
 *     a live sender's none lost (its sequence numbers arrive without a
 *     gap); at most one message of the dead sender is lost (the one it
 *     was sending); only a dead owner's claim is taken back;
 *  3. a sender is assigned a position only while its packet is FREE for
 *     it (asserted at the tail CAS that succeeds, after the separate
 *     loads; a load that found t taken is always followed by a failed
 *     CAS), and its claim CAS then never finds the packet not yet free:
 *     it claims it or finds it skipped; a sender is told the queue is
 *     full only with the tail it loaded still the tail and N positions
 *     the receiver has not passed;
 *  4. no process is left blocked for good (SPIN's invalid-end-state
 *     check: the receiver stops only when every live sender's messages
 *     have arrived; a sender that found the queue full waits until the
 *     packet at the tail changes, since trying again before that finds
 *     the same, so a sender that could wait for ever is a blocked state);
 *  5. no packet is free for a sender that is backing off (that found its
 *     packet not free, or the queue full, and has not looked again) while
 *     that sender lives (the monitor): the in-order receiver never waits
 *     at a packet bound to a sender that may not be running.
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
#ifndef OLD_ASSIGN
#define OLD_ASSIGN 0
#endif
#ifndef MONITOR
#define MONITOR 1 /* 0: property 5 not checked (the old assignment's other properties) */
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
bit waiting[4];  /* model bookkeeping: the sender is backing off (found
                  * its packet not free, or the queue full, and has not
                  * looked again) */
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
  byte seq, pos, t;
  bit got;
  do
  :: seq < K ->
     /* the steps before the assignment CAS write nothing shared (and
      * those between a passed claim and the next assignment): a death
      * there is a death here */
     die_point();
     do
     :: !got ->
#if OLD_ASSIGN
        atomic { pos = tail; assert(pos < MAXPOS); assignee[pos] = me; tail++ }; /* fetch-and-increment */
#else
        /* assign(): a packet position only while its packet is free */
        t = tail; /* relaxed load of the tail */
        do
        :: atomic { /* relaxed load of the tail packet's state */
             if
             :: stype[SLOT(t)] == FREE && spos[SLOT(t)] == t -> got = 1 /* free for t: CAS */
             :: spos[SLOT(t)] < t -> /* the previous lap's: SYNCQ_FULL */
                assert(tail == t && head + N <= t); /* property 3: N positions the receiver has not passed */
                waiting[me] = 1
             :: else -> skip /* t taken by another sender: the CAS fails */
             fi
           };
           if
           :: waiting[me] ->
              /* back off, poll, try again with the tail loaded afresh: a
               * try before the packet at t is freed (its position then t)
               * finds it full again */
              atomic { spos[SLOT(t)] >= t || tail != t -> waiting[me] = 0 };
              break
           :: else -> skip
           fi;
           atomic { /* CAS tail t -> t + 1; on failure t = the tail now */
             if
             :: tail == t ->
                assert(got && stype[SLOT(t)] == FREE && spos[SLOT(t)] == t); /* property 3 */
                assert(t < MAXPOS); assignee[t] = me; tail++; pos = t
             :: else -> t = tail; got = 0
             fi
           };
           if
           :: got -> break
           :: else -> skip
           fi
        od;
        t = 0;
        if
        :: !got -> goto reassign /* backed off: assign again */
        :: else -> got = 0
        fi;
#endif
        die_point(); /* assigned, not claimed: the receiver must skip it */
        /* claim_slot(): CAS FREE(pos) -> CLAIMED(pos, me) */
        do
        :: atomic {
             if
             :: stype[SLOT(pos)] == FREE && spos[SLOT(pos)] == pos ->
                stype[SLOT(pos)] = CLAIMED; spid[SLOT(pos)] = me; got = 1
             :: spos[SLOT(pos)] > pos -> skip /* skipped by the receiver: passed */
             :: else -> /* not yet free for pos: SYNCQ_FULL, holding pos */
                assert(OLD_ASSIGN); /* property 3 */
                waiting[me] = 1
             fi
           };
           if
           :: waiting[me] -> atomic { spos[SLOT(pos)] >= pos -> waiting[me] = 0 }
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
     die_point(); /* claimed, owner_start not yet written */
     sstart[SLOT(pos)] = me;  /* owner_start = our start time, after the CAS */
     /* a death from here to the commit leaves the same claim for the
      * receiver to judge (the fields are read only after READY) */
     die_point();
     atomic { mfrom[SLOT(pos)] = me; mseq[SLOT(pos)] = seq }; /* fill: plain stores */
     atomic { spos[SLOT(pos)] = pos; spid[SLOT(pos)] = me; stype[SLOT(pos)] = READY }; /* commit: store READY(pos, me) (release) */
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

/* may the receiver skip position p now (its sender dead, or live and
 * slow: at most MAXSKIP of those) */
#define MAY_SKIP(p) (dead[assignee[p]] || skips < MAXSKIP)
inline count_skip(p) {
  if
  :: !dead[assignee[p]] -> skips++
  :: else -> skip
  fi
}

proctype receiver() {
  byte s, from, tpid, ostart, pst, p;
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
  :: atomic { /* h was skipped ahead of the head: the slot serves the next lap */
       spos[SLOT(head)] == head + N -> head++
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
  :: atomic { /* skip h, assigned (h below the tail) and still not claimed
               * (FREE(h)) a stale interval after a look that found it so:
               * CAS FREE(h) -> FREE(h + N) */
       stype[SLOT(head)] == FREE && spos[SLOT(head)] == head && tail > head && MAY_SKIP(head) ->
       count_skip(head);
       spos[SLOT(head)] = head + N;
       /* skip_abandoned_run: each later position of the lap below the
        * tail read at that look (any value the tail has had since h was
        * assigned: the loop may stop at any p) still FREE for itself */
       p = head + 1;
       do
       :: p < tail && p - head < N ->
          if
          :: stype[SLOT(p)] == FREE && spos[SLOT(p)] == p && MAY_SKIP(p) ->
             count_skip(p);
             spos[SLOT(p)] = p + N
          :: else -> skip /* claimed since (the CAS fails), or the bound */
          fi;
          p++
       :: true -> break
       od;
       head++; p = 0
     }
  od;
  /* only the dead sender may have lost anything, and one message at most */
  for (s : 1 .. NS) {
    assert(lost_of[s] == 0 || dead[s] && lost_of[s] == 1)
  }
}

/* Property 5: a packet FREE for an assigned position (below the tail)
 * whose live sender is backing off. The receiver, in order, waits at such
 * a packet until that sender runs again (the convoy the assignment rule
 * removed); the assignment rule makes it unreachable. */
#define FREE_FOR_WAITER(i) \
  (i < N && stype[i] == FREE && spos[i] < tail && !dead[assignee[spos[i]]] && waiting[assignee[spos[i]]])
bit free_for_waiter; /* set only to name the violation in SPIN's report */
proctype monitor() {
end:
  atomic {
    FREE_FOR_WAITER(0) || FREE_FOR_WAITER(1) || FREE_FOR_WAITER(2) || FREE_FOR_WAITER(3) ->
    free_for_waiter = 1;
    assert(!free_for_waiter)
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
#if MONITOR
    run monitor();
#endif
#if REUSE
    run reuser()
#endif
  }
}
