/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wfqueue.pml — YMC wfqueue (Yang & Mellor-Crummey, PPoPP'16) as syncq
 * implements it (src/queue/wfqueue.c: enq_fast, enq_slow, help_enq,
 * commit_value, deq_fast, help_deq, deq_slow, deq_forced, seems_empty,
 * find_cell, advance_end, and the two API functions), for SPIN.
 *
 * Every shared access of the C code is one atomic step here: each load,
 * store, fetch-and-add and CAS of ei (T), di (H), ei_seen, a cell's val,
 * enq and deq, a request's id, val and idx, a segment's next pointer and
 * a handle's segment pointers. What a process computes from its locals
 * runs between them. advance_end's load-CAS loop is one step (its failed
 * turns write nothing: the step is its successful CAS, or its last load);
 * help_enq's wait of up to WFQ_SPIN loads of an empty cell is its last
 * load (the loads before it that found NULL change nothing). The
 * line-by-line correspondence is in models/spin/README.md.
 *
 * Abstractions: handles are joined before the operations start (the C
 * code links a thread's handle on its first operation, under the front
 * index), in the ring 0 -> 1 -> ... -> NT-1 -> 0; segments are linked
 * by their next pointer's CAS as in find_cell, but never reclaimed or
 * reused (cleanup, the hazard ids and the stock are not modelled: a
 * segment is its id, a cell its segment's id and offset); allocation
 * never fails (SYNCQ_ENOMEM and the request's withdrawal are not
 * modelled). A walk that starts on a segment past the wanted one lands
 * on the cell of the same offset there, as the C code's would.
 *
 * Parameters (spin -D...):
 *   NT        threads (2..3), each with its handle            default 2
 *   OPSn      operations of thread n (n = 0..2), NOPSn of them, in a
 *             mask: bit k set, the k-th is an enqueue, else a dequeue
 *   NOPSn                                                default 2 (enq, deq)
 *   PATIENCE  fast-path tries (1), or 0: the test hook's forced slow
 *             path (enqueue: one FAA then enq_slow; dequeue:
 *             deq_forced, no seems_empty)                  default 1
 *   SEGN      cells a segment (2)                          default 2
 *   NC        cells modelled (an index past them: assertion)  default 12
 *   MAXIT     bound asserted on the turns of enq_slow's loop and of
 *             help_deq's search (wait-freedom's bounded steps)  default 2
 *             (2 threads; 3 threads need more: models/spin/README.md)
 *   REACH     n > 0: assert that point n of the helping is never
 *             reached; SPIN must find it (the model reaches it): 1 a
 *             dequeuer commits a peer's enqueue request to its cell, 2 a
 *             helper finds a request committed to its cell by another
 *             and stores the value, 3 a helper answers a peer's dequeue
 *             request, 4 enq_slow's second turn, 5 a slow dequeue's
 *             EMPTY, 6 a segment link CAS lost, 7 an enqueuer finds its
 *             request committed elsewhere by a helper
 * Thread 0, once its operations are done and every other thread's too,
 * dequeues until EMPTY (the drain) and checks that nothing was lost.
 *
 * Properties (assertions, checked exhaustively):
 *   - an item is deposited in one cell only, over NULL or TOP or itself
 *     (a slow enqueue's request committed to exactly one cell);
 *   - no duplicate: each item is dequeued once; no loss: the drain finds
 *     every item enqueued;
 *   - per-producer FIFO: a dequeue that starts after another one ended
 *     gets a later item of the same producer;
 *   - EMPTY only if the queue was empty at some point of the dequeue's
 *     interval: enqueues completed <= dequeues completed with an item +
 *     other dequeues in progress, at the dequeue's start or when another
 *     dequeue started (a necessary condition of linearizability);
 *   - a dequeue request is answered once, and a dequeue that took the
 *     slow path returns the item of a cell its own request (this use of
 *     the handle's record) claimed, or EMPTY at a cell that is TOP;
 *   - find_cell starts at or before the wanted segment (its
 *     precondition); every index is within the NC cells modelled;
 *   - bounded steps: enq_slow's loop and help_deq's search end within
 *     MAXIT turns.
 *   SPIN's end-state check adds: no process is left blocked.
 *
 * Controls (each must fail):
 *   NO_CLAIM_CAS=1   help_enq commits a pending enqueue request by a
 *                    store of -i to its id instead of the CAS
 *   FORCED_OLD=1     deq_forced announces its settled cell i as id =
 *                    idx = i - 1 (the way its comment rules out)
 *   NO_EMPTY_T=1     help_enq's TOP_ENQ verdict is EMPTY without its
 *                    test of ei <= i
 *   NO_ADVANCE=1     help_deq examines cells without advancing H past
 *                    them (advance_end(&q->di, i) removed)
 * Not controls (they hold where run: models/spin/README.md):
 *   NO_REREAD=1      help_enq, finding the request committed to its cell
 *                    by another helper, commits the value it read before
 *                    (Deviation (3) removed)
 *   NO_TOP_CHECK=1   enq_slow keeps a cell whose enq it claimed without
 *                    its look at the cell's val for TOP
 *
 * Memory model: sequential consistency (the C code's accesses are
 * seq_cst but the hazard id's, not modelled, and ei_seen's, a hint that
 * "go on" always answers safely).
 */
#ifndef NT
#define NT 2
#endif
#ifndef NOPS0
#define NOPS0 2
#endif
#ifndef OPS0
#define OPS0 1
#endif
#ifndef NOPS1
#define NOPS1 2
#endif
#ifndef OPS1
#define OPS1 1
#endif
#ifndef NOPS2
#define NOPS2 0
#endif
#ifndef OPS2
#define OPS2 0
#endif
#ifndef PATIENCE
#define PATIENCE 1
#endif
#ifndef SEGN
#define SEGN 2
#endif
#ifndef NC
#define NC 12
#endif
#ifndef MAXIT
#define MAXIT 2
#endif
#ifndef NO_CLAIM_CAS
#define NO_CLAIM_CAS 0
#endif
#ifndef NO_REREAD
#define NO_REREAD 0
#endif
#ifndef FORCED_OLD
#define FORCED_OLD 0
#endif
#ifndef NO_EMPTY_T
#define NO_EMPTY_T 0
#endif
#ifndef NO_TOP_CHECK
#define NO_TOP_CHECK 0
#endif
#ifndef NO_ADVANCE
#define NO_ADVANCE 0
#endif

#ifndef REACH
#define REACH 0
#endif
/* -DREACH=n: assert that point n is never reached, so that SPIN must
 * find it (the model reaches the helping it is for) */
#define REACHED(n) assert(REACH != (n))

#define NSEG (NC / SEGN)
#define PER 3 /* items a producer at most */
#define NITEMS (NT * PER)
#define NUL 0
#define TOP 255 /* a cell word's TOP (val: TOP_VAL, enq: TOP_ENQ, deq: TOP_DEQ) */
/* item of thread p, k-th enqueue: 1 + p * PER + k (never NUL nor TOP) */
#define ITEM(p, k) (1 + (p) * PER + (k))
#define PROD_OF(x) (((x) - 1) / PER)
#define SEQ_OF(x) (((x) - 1) % PER)
#define NEXT(h) (((h) + 1) % NT)
#define NOPS(t) ((t) == 0 -> NOPS0 : ((t) == 1 -> NOPS1 : NOPS2))
#define OPS(t) ((t) == 0 -> OPS0 : ((t) == 1 -> OPS1 : OPS2))

/* the queue */
byte ei = 1, di = 1, ei_seen = 1; /* T, H (index 0 never used), the hint */
byte nseg = 1;                    /* segments linked: 0 .. nseg - 1 */
byte val[NC];                     /* NUL, an item, TOP */
byte enq[NC];                     /* NUL, h + 1 (handle h's request), TOP */
byte deq[NC];                     /* NUL, h + 1, TOP */
/* the handles: requests and segment pointers (segment ids) */
short er_id[NT];  /* > 0 pending, -i committed to cell i, 0 none */
byte er_val[NT];
short dr_id[NT];
short dr_idx[NT] = -1; /* < id: none; id: searching; > id: candidate; < 0: done at -idx */
byte ep[NT], dp[NT];

/* ghosts: the properties' record */
byte where[NITEMS + 1];       /* the cell an item was deposited in */
bit taken[NITEMS + 1];        /* dequeued */
bit enqueued[NITEMS + 1];     /* its enqueue returned */
byte done_max[NT];            /* per producer: 1 + highest seq a completed dequeue got */
byte enq_done, deq_items, inprog; /* EMPTY's witness counters */
bit empty_seen[NT];           /* the queue was empty at a point of the dequeue so far */
bit busy[NT];               /* a dequeue in progress */
byte rseq[NT];                /* handle's dequeue request: its use number */
byte claimseq[NC];            /* the use number of the request that claimed the cell */
bit answered[NT];             /* the current dequeue request answered */
byte finished;                /* threads other than 0 done */

inline deposit(c, x) {
  atomic {
    assert(val[c] == NUL || val[c] == TOP || val[c] == x);
    assert(where[x] == 0 || where[x] == c);
    where[x] = c;
    val[c] = x
  }
}

/* advance_end(end, i): end > i, one step (see the top) */
inline advance(end, i) {
  atomic {
    if
    :: end <= i -> end = i + 1
    :: else -> skip
    fi
  }
}

/* find_cell: walk the segment id s up to i's segment, linking each
 * missing one (a load of next, then the CAS); c = the cell it lands on */
inline find_cell(s, i, c) {
  assert(i < NC);
  assert(s <= i / SEGN); /* the walk starts at or before i's segment */
  do
  :: s < i / SEGN ->
     if
     :: nseg > s + 1 -> skip /* next linked */
     :: else ->
        atomic { /* the CAS of next from NULL to a fresh segment */
          if
          :: nseg == s + 1 -> nseg++
          :: else -> REACHED(6) /* another thread linked it first */
          fi
        }
     fi;
     s++
  :: else -> break
  od;
  c = s * SEGN + i % SEGN
}

/* find_own_cell on ep or dp: load it, walk, store it back if it moved */
inline find_own_cell(own, i, c) {
  s = own;
  s0 = s;
  find_cell(s, i, c);
  if
  :: s != s0 -> own = s
  :: else -> skip
  fi
}

inline commit_value(c, i, x) {
  advance(ei, i);
  deposit(c, x)
}

/* help_enq(th = me, c, i): v = an item, NUL (empty at i) or TOP */
inline help_enq(c, i, v) {
  v = val[c];
  if
  :: v == NUL ->
     atomic {
       if
       :: val[c] == NUL -> val[c] = TOP; v = TOP
       :: else -> v = val[c] /* it arrived (or TOP) */
       fi
     }
  :: else -> skip
  fi;
  if
  :: v != TOP -> skip
  :: else ->
     e = enq[c];
     if
     :: e == NUL ->
        ph = eh;
        pk = er_id[ph];
        if
        :: eh_id != 0 && eh_id != pk -> /* the peer we stayed with is done */
           eh_id = 0; ph = NEXT(ph); eh = ph;
           pk = er_id[ph]
        :: else -> skip
        fi;
        ok = 0;
        if
        :: pk > 0 && pk <= i ->
           atomic {
             if
             :: enq[c] == NUL -> enq[c] = ph + 1; ok = 1
             :: else -> e = enq[c]
             fi
           };
           if
           :: !ok && e != ph + 1 -> eh_id = pk /* stay with this peer */
           :: else -> eh_id = 0; eh = NEXT(ph)
           fi
        :: else -> eh_id = 0; eh = NEXT(ph)
        fi;
        if
        :: e == NUL ->
           atomic {
             if
             :: enq[c] == NUL -> enq[c] = TOP; e = TOP
             :: else -> e = enq[c]
             fi
           }
        :: else -> skip
        fi
     :: else -> skip
     fi;
     if
     :: e == TOP ->
        if
        :: NO_EMPTY_T || ei <= i -> v = NUL
        :: else -> v = TOP
        fi
     :: else ->
        eid = er_id[e - 1];
        ev = er_val[e - 1];
        ok = 0;
        if
        :: eid > i -> /* the request is for a later cell */
           if
           :: val[c] == TOP ->
              if
              :: ei <= i -> v = NUL; ok = 2
              :: else -> skip
              fi
           :: else -> skip
           fi
        :: eid > 0 && eid <= i ->
#if NO_CLAIM_CAS
           er_id[e - 1] = -i; ok = 1;
#else
           atomic {
             if
             :: er_id[e - 1] == eid -> er_id[e - 1] = -i; ok = 1
             :: else -> eid = er_id[e - 1] /* the CAS's failure: eid reloaded */
             fi
           };
#endif
           if
           :: ok == 1 ->
              if
              :: e != me + 1 -> REACHED(1) /* a peer's request committed */
              :: else -> skip
              fi;
              commit_value(c, i, ev)
           :: else -> skip
           fi
        :: else -> skip
        fi;
        if
        :: ok == 0 && eid == -i -> /* committed here by another helper */
#if !NO_REREAD
           ev = er_val[e - 1];
#endif
           if
           :: val[c] == TOP -> REACHED(2); commit_value(c, i, ev)
           :: else -> skip
           fi
        :: else -> skip
        fi;
        if
        :: ok != 2 -> v = val[c]
        :: else -> skip
        fi
     fi
  fi
}

/* enq_fast: r = 1 done, 0 the cell was taken (id = its index) */
inline enq_fast(x, r, rid) {
  d_step { i = ei; ei++ }; /* FAA */
  find_own_cell(ep[me], i, c);
  atomic {
    if
    :: val[c] == NUL -> deposit(c, x); r = 1
    :: else -> r = 0; rid = i
    fi
  }
}

inline enq_slow(x, rid) {
  er_val[me] = x;
  er_id[me] = rid; /* published */
  s = ep[me];
  it = 0;
  do
  :: it++;
     assert(it <= MAXIT);
     if
     :: it > 1 -> REACHED(4) /* enq_slow's second turn */
     :: else -> skip
     fi;
     d_step { i = ei; ei++ }; /* FAA */
     find_cell(s, i, c);
     atomic {
       if
       :: enq[c] == NUL -> enq[c] = me + 1; ok = 1
       :: else -> ok = 0
       fi
     };
     if
     :: ok && !NO_TOP_CHECK -> ok = (val[c] != TOP)
     :: else -> skip
     fi;
     if
     :: ok ->
        atomic {
          if
          :: er_id[me] == rid -> er_id[me] = -i
          :: else -> REACHED(7) /* a helper committed it elsewhere */
          fi
        };
        break
     :: else ->
        if
        :: er_id[me] > 0 -> skip
        :: else -> break
        fi
     fi
  od;
  at = -er_id[me];
  find_own_cell(ep[me], at, c);
  if
  :: at > i -> advance(ei, at)
  :: else -> skip
  fi;
  deposit(c, x)
}

inline enqueue(x) {
  r = 0;
#if PATIENCE
  enq_fast(x, r, id);
#endif
  if
  :: r == 0 ->
#if !PATIENCE
     d_step { id = ei; ei++ }; /* FAA */
#endif
     enq_slow(x, id)
  :: else -> skip
  fi;
  atomic { enqueued[x] = 1; enq_done++ }
}

/* deq_fast: v = an item, NUL (empty) or TOP (lost the cell; id = i) */
inline deq_fast(v, rid) {
  d_step { i = di; di++ }; /* FAA */
  find_own_cell(dp[me], i, c);
  help_enq(c, i, v);
  if
  :: v != NUL && v != TOP ->
     atomic {
       if
       :: deq[c] == NUL -> deq[c] = TOP
       :: else -> rid = i; v = TOP
       fi
     }
  :: v == TOP -> rid = i
  :: else -> skip
  fi
}

/* help_deq(th = me, ph) */
inline help_deq(hp) {
  hidx = dr_idx[hp];
  atomic { hid = dr_id[hp]; hseq = rseq[hp] } /* ghost: the use it read */
  if
  :: hidx < hid -> skip /* nothing pending */
  :: else ->
     hdp = dp[hp];
     hidx = dr_idx[hp];
     hi = hid + 1; hold = hid; cand = 0;
     it = 0;
     do
     :: it++;
        assert(it <= MAXIT);
        hs = hdp;
        do
        :: hidx == hold && cand == 0 ->
           find_cell(hs, hi, c);
#if !NO_ADVANCE
           advance(di, hi);
#endif
           help_enq(c, hi, hv);
           if
           :: hv == NUL -> cand = hi
           :: hv != TOP && deq[c] == NUL -> cand = hi
           :: else -> hidx = dr_idx[hp]
           fi;
           hi++
        :: else -> break
        od;
        if
        :: cand != 0 ->
           atomic { /* announce it */
             if
             :: dr_idx[hp] == hidx -> dr_idx[hp] = cand; hidx = cand
             :: else -> hidx = dr_idx[hp]
             fi
           };
           if
           :: hidx >= cand -> cand = 0
           :: else -> skip
           fi
        :: else -> skip
        fi;
        if
        :: hidx < 0 -> break
        :: else -> skip
        fi;
        if
        :: dr_id[hp] != hid -> break
        :: else -> skip
        fi;
        find_cell(hdp, hidx, c);
        ok = 0;
        if
        :: val[c] == TOP -> ok = 1
        :: else ->
           atomic {
             if
             :: deq[c] == NUL -> deq[c] = hp + 1; claimseq[c] = hseq; ok = 1
             :: else -> ok = (deq[c] == hp + 1)
             fi
           }
        fi;
        if
        :: ok ->
           atomic {
             if
             :: dr_idx[hp] == hidx ->
                dr_idx[hp] = -hidx;
                if
                :: hp != me -> REACHED(3) /* a peer's request answered */
                :: else -> skip
                fi;
                assert(!answered[hp]);
                answered[hp] = 1
             :: else -> skip
             fi
           };
           break
        :: else -> skip
        fi;
        hold = hidx;
        if
        :: hidx >= hi -> hi = hidx + 1
        :: else -> skip
        fi
     od
  fi
}

inline deq_slow(v, rid, ridx) {
  atomic { dr_id[me] = rid; rseq[me]++; answered[me] = 0 } /* ghost: a new use of the record */
  dr_idx[me] = ridx; /* published */
  help_deq(me);
  i = -dr_idx[me];
  find_own_cell(dp[me], i, c);
  atomic {
    v = val[c];
    if
    :: v == TOP -> v = NUL; REACHED(5) /* a slow dequeue's EMPTY */
    :: else -> assert(v != NUL && deq[c] == me + 1 && claimseq[c] == rseq[me])
    fi
  }
}

inline deq_forced(v) {
  d_step { i = di; di++ }; /* FAA */
  find_own_cell(dp[me], i, c);
  help_enq(c, i, v);
  if
  :: v == TOP -> id = i; at = i
  :: v != TOP && v != NUL && deq[c] != NUL -> id = i; at = i
  :: else ->
#if FORCED_OLD
     id = i - 1; at = i - 1
#else
     id = i - 1; at = i
#endif
  fi;
  deq_slow(v, id, at)
}

/* EMPTY's witness: the queue was empty at this point for dequeuer t */
inline witness(t) {
  if
  :: busy[t] && enq_done <= deq_items + inprog - 1 -> empty_seen[t] = 1
  :: else -> skip
  fi
}

inline dequeue(v) {
  atomic {
    k2 = 0;
    do
    :: k2 < NT -> lo[k2] = done_max[k2]; k2++
    :: else -> break
    od;
    busy[me] = 1; inprog++; empty_seen[me] = 0;
    k2 = 0;
    do
    :: k2 < NT -> witness(k2); k2++
    :: else -> break
    od
  };
  v = TOP;
#if PATIENCE
  /* seems_empty (Deviation (6)) */
  d = di;
  if
  :: d < ei_seen -> skip
  :: else ->
     e2 = ei;
     if
     :: d >= e2 -> v = NUL
     :: else -> ei_seen = e2
     fi
  fi;
  if
  :: v == TOP ->
     deq_fast(v, id);
     if
     :: v == TOP -> deq_slow(v, id, id)
     :: else -> skip
     fi;
     if
     :: v != NUL -> help_deq(dh); dh = NEXT(dh)
     :: else -> skip
     fi
  :: else -> skip
  fi;
#else
  deq_forced(v);
  if
  :: v != NUL -> help_deq(dh); dh = NEXT(dh)
  :: else -> skip
  fi;
#endif
  atomic {
    busy[me] = 0; inprog--;
    if
    :: v == NUL -> assert(empty_seen[me])
    :: else ->
       assert(!taken[v]);
       taken[v] = 1;
       deq_items++;
       assert(SEQ_OF(v) + 1 > lo[PROD_OF(v)]);
       if
       :: done_max[PROD_OF(v)] < SEQ_OF(v) + 1 -> done_max[PROD_OF(v)] = SEQ_OF(v) + 1
       :: else -> skip
       fi
    fi
  }
}

proctype thread(byte me) {
  /* the holder's own: the next peers to help (eh, dh), the peer it
   * stayed with (eh_id) */
  byte eh = NEXT(me), dh = NEXT(me);
  short eh_id = 0;
  /* locals */
  byte k = 0, ne = 0, k2, r, x, v, hv, ev, e, e2, ph, c, s, s0, d, hdp, hs, it, hseq;
  short i, id, at, pk, eid, hidx, hid, hi, hold, cand;
  byte ok;
  bit draining;
  byte lo[NT];
  /* one call site of each operation (the verifier's size); thread 0's
   * dequeues after its own are the drain, once the others are done */
  do
  :: if
     :: k < NOPS(me) -> r = (OPS(me) >> k) & 1
     :: k >= NOPS(me) && me == 0 && !draining ->
        finished == NT - 1; /* the drain: alone */
        draining = 1; r = 0
     :: k >= NOPS(me) && draining && v != NUL -> r = 0
     :: else -> break
     fi;
     if
     :: r -> x = ITEM(me, ne); ne++; enqueue(x)
     :: else -> dequeue(v)
     fi;
     k++
  od;
  if
  :: me == 0 ->
     k = 1;
     do
     :: k <= NITEMS -> assert(!enqueued[k] || taken[k]); k++
     :: else -> break
     od
  :: else -> finished++
  fi
}

init {
  atomic {
    byte t = 0;
    do
    :: t < NT -> run thread(t); t++
    :: else -> break
    od
  }
}
