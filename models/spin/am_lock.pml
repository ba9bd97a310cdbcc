/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_lock.pml — the locking packet claims of 000 (Figure 2 under a lock
 * whose holder can die) as syncq's active messages implement them
 * (src/am/claim_lock.c: tas_lock, rl_enter, rl_holder_dead, rl_release,
 * locked_section; src/am/claim_common.c: am_claim_under_lock,
 * am_claim_repair, am_bulk_reclaim_dead, am_claim_locked_bulk_stalled;
 * src/am/am.c: am_send, deliver, am_free_delivered, unstick's take-back
 * of a dead claim), with senders that may die at any step, for SPIN.
 *
 * The lock is one word, as the TAS and TTAS claims' (claim_lock.c): GO(k)
 * free, HELD(k, pid) held, the holder's start time beside it. Here the
 * word is (ltype, lpid) and the start lstart; the hand-over count k is
 * abstracted exactly: every write of the word in C gives a value never
 * seen before (k grows at each release; a take-over changes the pid, and
 * a dead pid never holds again), so a waiter's CAS from the word it read
 * succeeds exactly when the word was not written since; `lchg[me]` records
 * that (set by every write of the word while the waiter holds what it
 * read). -DNO_COUNT=1 drops the count: the CAS then compares (type, pid)
 * only, a control below. A taker CASes GO -> HELD(me) (TAS tries it also
 * while the lock is held, for the hand-over the holder will make: the
 * same step once the word is GO), then stores its start time (rl_enter).
 * A waiter that finds the word HELD (C: unchanged for a stale interval;
 * untimed here) judges the holder as rl_holder_dead does, in C's steps:
 * the load of the word, then the load of the start time beside it and
 * the /proc read (am_owner_dead: dead when no process holds the pid, or
 * when the start time is not 0 and differs from that process's), then
 * the clearing of the start time beside the word, the CAS from the word
 * it read to HELD(me); it stores its start time, repairs
 * (am_claim_repair) and goes on into the section. -DOLD_TAKEOVER=1 is
 * the take-over before it cleared the start time: a waiter that loaded
 * the taker's word and then the dead holder's start time judged the live
 * taker dead and took the lock from it (found by this model; a control
 * below). The release
 * clears the start time, then stores GO (rl_release). -DNO_CLEAR=1
 * leaves the start time there: a control below.
 *
 * One packet ring of N packets and one bulk ring of B blocks; a slot's
 * state is (position, pid, type) in one word in C (am_state), three arrays
 * written together here. A FREE state names the position it is free for.
 * Figure 2's section (am_claim_under_lock), under the lock: load the tail
 * t and the packet's state: FREE(t) goes on, the previous lap's occupant
 * (t - N, CLAIMED or READY) is FULL, anything else a state no claim leaves
 * there (C: SYNCQ_EINVAL, every later claim refused: here an assertion,
 * property 4); for a bulk message then the same on the bulk tail b and its
 * block, store CLAIMED(b, me), advance the bulk tail; write the packet's
 * bulk link (has_bulk, bulk_pos), store CLAIMED(t, me), advance the tail.
 * Out of the lock the sender fills the packet and the block (plain
 * stores), stores the block READY, commits the packet READY. On FULL it
 * releases the lock and stalls: it tries again once the slot at the tail
 * changed, and meanwhile (C: once a stale interval, ops->bulk_stalled) a
 * bulk sender looks at the block at the bulk tail it loads: CLAIMED by a
 * dead owner (C: the start time beside it; here pids are not reused, so
 * the pid alone judges) -> FREE a lap on (am_bulk_reclaim_dead). Each
 * message is a packet or a bulk message, chosen at each send.
 *
 * Senders in MORTALS (a bit per id) may die before or after any step that
 * writes shared state, inside the lock between any two of its stores
 * included, at most MAXDEATHS of them: a dead sender stops forever and no
 * process holds its pid.
 *
 * Receiver (its steps are its polls, untimed): delivers a READY head
 * packet (reads the packet and its block, frees the block a lap on, then
 * the packet); takes back a CLAIMED head packet whose owner is dead (C:
 * after the stale interval; here at any poll once the owner is dead):
 * CAS the packet to FREE a lap on, then its block, if it still shows the
 * dead sender's CLAIMED or READY at that position. When every live
 * sender's messages have arrived it takes back a dead claim left at the
 * head, and then acts as the next sender would: takes a dead holder's
 * lock over and repairs (the final checks below).
 *
 * Controls: -DOLD_REPAIR=1 is the repair before its branch for a block
 * FREE a lap on at the bulk tail (a stalled look took back the block of
 * a holder that died between its two bulk steps); -DOLD_REPAIR=2 the
 * repair before its branch for a packet FREE a lap on at the tail (the
 * receiver took the claim back of a holder that died before advancing
 * the tail); -DNO_REPAIR=1 no repair at all; -DOLD_TAKEOVER=1,
 * -DNO_CLEAR=1 and -DNO_COUNT=1 above. Each must fail.
 *
 * Properties, exhaustively:
 *  1. every delivered message holds its own sender's bytes, in the packet
 *     and in its block (the block READY for that position and pid);
 *  2. each sender's messages are delivered in its order, none twice, a
 *     live sender's none lost; only a dead sender's claim is taken back,
 *     at most one message each;
 *  3. at most one live process inside the lock (a dead holder's lock is
 *     taken over only once it is dead);
 *  4. a claim under the lock never finds a state no claim leaves at the
 *     tail or the bulk tail; while the lock is free (GO) the tails point
 *     at FREE for their own position or at the previous lap's occupant
 *     (the monitor), and at the end, after the receiver's take-over and
 *     repair of a dead holder's lock, every packet is FREE for a position
 *     of the next lap and every block is FREE for one, or CLAIMED by a
 *     dead sender a lap behind the bulk tail (a stalled look takes it back
 *     once the bulk tail comes round to it);
 *  5. no process is left blocked for good (SPIN's invalid-end-state check:
 *     the receiver stops only when every live sender's messages have
 *     arrived): the lock is never held by a dead process for good, a
 *     dead holder's block never holds the bulk ring for good.
 *
 * Memory model: sequential consistency (see README.md).
 */
#ifndef N
#define N 2 /* packets */
#endif
#ifndef B
#define B 1 /* bulk blocks */
#endif
#ifndef NS
#define NS 2
#endif
#ifndef K
#define K 2
#endif
#ifndef MORTALS
#define MORTALS 4 /* bit s: sender s may die (2 + 4 + 8: senders 1-3) */
#endif
#ifndef MAXDEATHS
#define MAXDEATHS 1
#endif
#ifndef BULK
#define BULK 2 /* 0: packets only, 1: bulk only, 2: either, chosen at each send */
#endif
#ifndef OLD_REPAIR
#define OLD_REPAIR 0
#endif
#ifndef NO_REPAIR
#define NO_REPAIR 0
#endif
#ifndef NO_CLEAR
#define NO_CLEAR 0
#endif
#ifndef NO_COUNT
#define NO_COUNT 0
#endif
#ifndef OLD_TAKEOVER
#define OLD_TAKEOVER 0
#endif

#define FREE 0
#define CLAIMED 1
#define READY 2
#define GO 0
#define HELD 1
#define PS(p) ((p) % N)
#define BS(p) ((p) % B)
#define NONE 255

/* the lock word and the start time beside it */
byte ltype, lpid, lstart;
bit lwin[4]; /* holds a word it read, for its CAS */
bit lchg[4]; /* the word was written since */
/* packets: state (position, pid, type), the bulk link, the message bytes */
byte ppos[N], ppid[N], ptype[N];
bit phb[N];
byte pbp[N], pfrom[N], pseq[N];
/* blocks: state, bytes */
byte bpos[B], bpid[B], btype[B];
byte bfrom[B], bseq[B];
byte tail, btail; /* next packet and block positions (written under the lock) */
byte head;        /* the receiver's */
/* model bookkeeping */
bit alive[4]; /* the pid's process exists (am_owner_dead reads it) */
bit dead[4];
byte deaths;
byte holder; /* the live process inside the lock (0: none) */
byte rcv[4], lost_of[4];
bit finished;

#define LWRITE() lchg[1] = lchg[1] | lwin[1]; lchg[2] = lchg[2] | lwin[2]; lchg[3] = lchg[3] | lwin[3]
/* am_owner_dead(pid, start): no process holds the pid, or the start time
 * beside it is not 0 and not that process's (sender s: start time s) */
#define JUDGED_DEAD(p, st) (!alive[p] || ((st) != 0 && (st) != (p)))

inline die_point() {
  if
  :: ((MORTALS >> me) & 1) && deaths < MAXDEATHS ->
     atomic { dead[me] = 1; alive[me] = 0; deaths++ }; goto gone
  :: true -> skip
  fi
}

/* Entering: no live process inside (property 3). */
inline enter(who) {
  assert(holder == 0 || dead[holder]);
  holder = who
}

/* am_claim_repair, run by whoever took a dead holder's lock over. */
inline repair() {
#if !NO_REPAIR
  atomic { /* relaxed load of the tail (under the lock), acquire load of the packet at the tail */
    rt = tail;
    if
    :: ppos[PS(rt)] == rt && ptype[PS(rt)] != FREE -> rs = 1 /* the dead holder's claim: tail not advanced */
    :: OLD_REPAIR != 2 && ptype[PS(rt)] == FREE && ppos[PS(rt)] == rt + N -> rs = 1 /* that claim, taken back */
    :: else -> rs = 0
    fi
  };
  if
  :: rs ->
     tail = rt + 1; /* a claimed packet's block is behind the bulk tail: nothing more */
     die_point()
  :: else ->
     atomic { /* relaxed load of the bulk tail (after the packet's state), acquire load of its block */
       rb = btail;
       if
       :: OLD_REPAIR != 1 && btype[BS(rb)] == FREE && bpos[BS(rb)] == rb + B -> rs = 2 /* taken back by a look */
       :: btype[BS(rb)] == CLAIMED && bpos[BS(rb)] == rb -> rs = 3 /* the dead holder's block */
       :: else -> rs = 0
       fi
     };
     if
     :: rs == 2 -> btail = rb + 1; die_point()
     :: rs == 3 -> /* owner_start = 0 (not modelled), then the release store of FREE(b) */
        atomic { btype[BS(rb)] = FREE; bpos[BS(rb)] = rb; bpid[BS(rb)] = 0 };
        die_point()
     :: else -> skip
     fi
  fi;
  rt = 0; rb = 0; rs = 0
#else
  skip
#endif
}

/* The release (rl_release): clear the start time, hand GO on. */
inline release() {
#if !NO_CLEAR
  lstart = 0;
  die_point();
#endif
  atomic { ltype = GO; lpid = 0; LWRITE(); holder = 0 }
}

/* Is the slot at the tail (and, for bulk, at the bulk tail) the previous
 * lap's occupant: FULL, as the section would find it now. */
#define PKT_FULL (ppos[PS(tail)] + N == tail && ptype[PS(tail)] != FREE)
#define BLK_FULL (bpos[BS(btail)] + B == btail && btype[BS(btail)] != FREE)

proctype sender(byte me) {
  byte seq, t, b, wpid, lt, rt, rb, rs;
  bit bulk, nofree, judged;
  do
  :: seq < K ->
     die_point();
#if BULK == 2
     if
     :: bulk = 1
     :: bulk = 0
     fi;
#else
     bulk = BULK;
#endif
again:
     /* ---- the lock (tas_lock) */
     wpid = 0; judged = 0;
     do
     :: atomic { /* CAS GO(k) -> HELD(k, me) */
          ltype == GO -> ltype = HELD; lpid = me; LWRITE(); enter(me);
          lwin[me] = 0; lchg[me] = 0; wpid = 0; judged = 0
        };
        die_point(); /* the lock held, no start time beside it: judged by the pid alone */
        lstart = me;
        break
     :: atomic { /* acquire load of the word, when it changed since the last */
          !judged && ltype == HELD && (wpid == 0 || wpid != lpid || !NO_COUNT && lchg[me]) ->
          wpid = lpid; lwin[me] = 1; lchg[me] = 0
        }
     :: atomic { /* rl_holder_dead: the start time beside the word, the pid's process */
          !judged && wpid != 0 && JUDGED_DEAD(wpid, lstart) -> judged = 1
        }
     :: judged ->
#if !OLD_TAKEOVER
        lstart = 0; /* rl_enter: the dead holder's start time cleared (relaxed; the CAS publishes it) */
#endif
        atomic { /* rl_enter: CAS from the word read to HELD(k, me) */
          if
          :: ltype == HELD && lpid == wpid && (NO_COUNT || !lchg[me]) ->
             lpid = me; LWRITE(); enter(me);
             lwin[me] = 0; lchg[me] = 0; wpid = 0; judged = 0;
             rs = 4 /* took it over */
          :: else -> /* the word seen instead: look again */
             wpid = 0; judged = 0; lwin[me] = 0; lchg[me] = 0
          fi
        };
        if
        :: rs == 4 ->
           rs = 0;
           die_point();
           lstart = me;
           die_point();
           repair();
           break
        :: else -> skip
        fi
     od;
     die_point(); /* am.claim.inside */
     /* ---- Figure 2's section (am_claim_under_lock) */
     atomic { /* the tail (relaxed, under the lock), the packet's state (acquire) */
       t = tail;
       if
       :: ptype[PS(t)] == FREE && ppos[PS(t)] == t -> nofree = 0
       :: ptype[PS(t)] != FREE && ppos[PS(t)] + N == t -> nofree = 1
       :: else -> assert(0) /* property 4: SYNCQ_EINVAL */
       fi
     };
     if
     :: !nofree && bulk ->
        atomic { /* the bulk tail, the block's state */
          b = btail;
          if
          :: btype[BS(b)] == FREE && bpos[BS(b)] == b -> nofree = 0
          :: btype[BS(b)] != FREE && bpos[BS(b)] + B == b -> nofree = 1
          :: else -> assert(0) /* property 4: SYNCQ_EINVAL */
          fi
        };
        if
        :: !nofree ->
           atomic { btype[BS(b)] = CLAIMED; bpid[BS(b)] = me }; /* owner_start, then CLAIMED(b, me) (release) */
           die_point(); /* am.claim.bulk_tail */
           btail = b + 1;
           die_point() /* am.claim.bulk_inside */
        :: else -> skip
        fi
     :: else -> skip
     fi;
     if
     :: !nofree ->
        atomic { phb[PS(t)] = bulk; pbp[PS(t)] = (bulk -> b : 0) }; /* the bulk link, owner_start */
        die_point();
        atomic { ptype[PS(t)] = CLAIMED; ppid[PS(t)] = me }; /* CLAIMED(t, me) (release) */
        die_point(); /* am.claim.tail */
        tail = t + 1;
        die_point()
     :: else -> skip
     fi;
     release();
     if
     :: nofree ->
        /* stalled: back off and try again once the slot at the tail
         * changed; a bulk sender looks at the block at the bulk tail */
        nofree = 0; lt = NONE;
        do
        :: atomic { !(PKT_FULL || bulk && BLK_FULL) -> lt = NONE }; goto again
        :: atomic { bulk && lt != btail -> lt = btail } /* relaxed load of the bulk tail */
        :: atomic { /* am_bulk_reclaim_dead: CLAIMED by a dead owner -> FREE a lap on (CAS) */
             bulk && lt != NONE && btype[BS(lt)] == CLAIMED && !alive[bpid[BS(lt)]] ->
             btype[BS(lt)] = FREE; bpos[BS(lt)] = bpos[BS(lt)] + B; bpid[BS(lt)] = 0
           }
        od
     :: else -> skip
     fi;
     die_point(); /* claimed, out of the lock */
     atomic { /* the packet's fields and the bulk copy: plain stores */
       pfrom[PS(t)] = me; pseq[PS(t)] = seq;
       if
       :: bulk -> bfrom[BS(b)] = me; bseq[BS(b)] = seq
       :: else -> skip
       fi
     };
     if
     :: bulk ->
        die_point(); /* am.send.bulk_copy */
        atomic { btype[BS(b)] = READY }; /* READY(b, me) (relaxed) */
     :: else -> skip
     fi;
     die_point(); /* am.send.claimed */
     ptype[PS(t)] = READY; /* the commit: READY(t, me) (release) */
     t = 0; b = 0; bulk = 0;
     seq++
  :: else -> break
  od;
gone:
  skip
}

#define LIVE_DONE(s) (s > NS || dead[s] || rcv[s] == K)

/* The take-back of the dead claim at the head (unstick): the packet by
 * CAS, then its block if it still shows the dead sender's CLAIMED or
 * READY at that position. */
inline take_back() {
  atomic {
    ptype[PS(head)] == CLAIMED && ppos[PS(head)] == head && !alive[ppid[PS(head)]] ->
    from = ppid[PS(head)]; hb = phb[PS(head)]; b = pbp[PS(head)];
    assert(dead[from]); /* property 2 */
    lost_of[from]++;
    ptype[PS(head)] = FREE; ppos[PS(head)] = head + N; ppid[PS(head)] = 0;
    head++
  };
  if
  :: hb ->
     atomic {
       if
       :: bpos[BS(b)] == b && bpid[BS(b)] == from && btype[BS(b)] != FREE ->
          btype[BS(b)] = FREE; bpos[BS(b)] = b + B; bpid[BS(b)] = 0
       :: else -> skip
       fi
     }
  :: else -> skip
  fi;
  from = 0; b = 0; hb = 0
}

/* Deliver the READY head packet (reading it and its block), free the
 * block a lap on, then the packet (am_free_delivered). */
inline deliver() {
  atomic {
    ptype[PS(head)] == READY && ppos[PS(head)] == head ->
    from = ppid[PS(head)];
    assert(pfrom[PS(head)] == from && pseq[PS(head)] == rcv[from]); /* properties 1, 2 */
    rcv[from]++;
    if
    :: phb[PS(head)] ->
       b = pbp[PS(head)];
       assert(btype[BS(b)] == READY && bpos[BS(b)] == b && bpid[BS(b)] == from); /* property 1 */
       assert(bfrom[BS(b)] == from && bseq[BS(b)] + 1 == rcv[from]);
       bfrom[BS(b)] = 0; bseq[BS(b)] = 0;
       btype[BS(b)] = FREE; bpos[BS(b)] = b + B; bpid[BS(b)] = 0
    :: else -> skip
    fi;
    pfrom[PS(head)] = 0; pseq[PS(head)] = 0;
    ptype[PS(head)] = FREE; ppos[PS(head)] = head + N; ppid[PS(head)] = 0;
    head++; from = 0; b = 0
  }
}

proctype receiver() {
  byte me, s, from, b, rt, rb, rs; /* me: 0, never mortal (repair's death points) */
  bit hb;
  do
  :: LIVE_DONE(1) && LIVE_DONE(2) && LIVE_DONE(3) -> break
  :: deliver()
  :: take_back()
  od;
  /* Every live sender's messages arrived: what a dead sender committed
   * is delivered, a dead claim left at the head taken back (after the
   * stale interval), and the next sender would take a dead holder's lock
   * over and repair. */
  do
  :: deliver()
  :: take_back()
  :: else -> break
  od;
  atomic {
    if
    :: ltype == HELD -> assert(dead[lpid]); lpid = 0; enter(0); rs = 5
    :: else -> skip
    fi
  };
  if
  :: rs == 5 -> rs = 0; repair(); atomic { ltype = GO; lstart = 0; holder = 0 }
  :: else -> skip
  fi;
  finished = 1;
  for (s : 1 .. NS) {
    assert(lost_of[s] == 0 || dead[s] && lost_of[s] == 1) /* property 2 */
  }
  /* property 4 at the end */
  assert(head == tail);
  for (s : 0 .. N - 1) {
    assert(ptype[s] == FREE && ppos[s] >= tail && ppos[s] < tail + N)
  }
  for (s : 0 .. B - 1) {
    assert(btype[s] == FREE && bpos[s] >= btail && bpos[s] < btail + B ||
           btype[s] == CLAIMED && !alive[bpid[s]] && bpos[s] + B >= btail && bpos[s] < btail)
  };
gone:
  skip
}

/* Property 4 while the lock is free: the tails point at FREE for their
 * own position or at the previous lap's occupant. */
#define PKT_OK (ptype[PS(tail)] == FREE && ppos[PS(tail)] == tail || PKT_FULL)
#define BLK_OK (btype[BS(btail)] == FREE && bpos[BS(btail)] == btail || BLK_FULL)
proctype monitor() {
end:
  atomic {
    ltype == GO && !finished && !(PKT_OK && BLK_OK) ->
    assert(0)
  }
}

init {
  byte i;
  atomic {
    for (i : 0 .. N - 1) {
      ppos[i] = i
    }
    for (i : 0 .. B - 1) {
      bpos[i] = i
    }
    for (i : 1 .. NS) {
      alive[i] = 1;
      run sender(i)
    }
    run receiver();
    run monitor()
  }
}
