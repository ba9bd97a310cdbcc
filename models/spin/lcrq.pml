/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lcrq.pml — LCRQ (src/queue/lcrq.c: crq_enqueue, crq_dequeue) and, with
 * -DPRQ=1 (lprq.pml), LPRQ (src/queue/lprq.c: prq_enqueue, prq_dequeue),
 * in the linked rings both share (src/queue/linked_rings.h: lr_enqueue,
 * lr_dequeue, lr_ring_seems_empty, lr_fix_state, lr_should_close,
 * lr_close, lr_give_up), for SPIN.
 *
 * Every shared access of the C code is one atomic step here: the
 * fetch-and-adds on head and tail (a tail ticket carries CLOSED, here
 * closed[r] read with it), the fetch-and-or that closes, the loads of
 * head, tail, tail_seen, next and the ends, each CAS (LCRQ's double-width
 * CAS on a cell is one step on its three fields; LPRQ's single-width CAS
 * on se or on val one step each), the stores (closed_at, tail_seen,
 * LPRQ's take of an item). What a process computes from its own locals
 * runs in d_step blocks. The line-by-line correspondence is in
 * models/spin/README.md.
 *
 * Abstractions, each argued in models/spin/README.md:
 *  - Reclamation: a ring is never freed or reused (hazard pointers are
 *    not modelled); a ring made by an enqueuer whose link CAS fails is
 *    never published, so the make and the link are one step here.
 *  - Deviation (4), the dequeuer's bounded wait for ticket h's enqueuer:
 *    its loads (tail, closed_at, gave_up, the cell) write nothing and
 *    decide only how long the dequeuer waits before it reads its cell
 *    again; the model reads the cell again at once, and SPIN's
 *    interleavings contain every wait's. What the wait's skips rely on
 *    (no enqueue writes a ticket at or past closed_at, nor a ticket given
 *    up) is asserted at each write.
 *  - The starvation bound: LR_PATIENCE is PATIENCE here (16 in the C).
 *  - Memory: sequential consistency; the C's atomics are seq_cst but the
 *    tail hint tail_seen (relaxed: any value read was tail's once, which
 *    SC's interleavings of its stores show too).
 *  - The cell map lr_slot is the identity for R <= 4 (4 cells to a
 *    64-byte line); MAP=1 models a map of 2 cells to a line instead.
 *
 * Parameters (spin -D...):
 *   PRQ       0: LCRQ's cells (safe | index, item); 1: LPRQ's (se, val)
 *   R         cells a ring (2 or 4)                          default 2
 *   NPROD     producers (1..2)                               default 2
 *   PER       items a producer                               default 2
 *   NCONS     consumers (1..2)                               default 1
 *   PATIENCE  failed tickets before a starving enqueuer closes default 2
 *   MAXEMPTY  EMPTY answers a consumer gets before it dequeues only
 *             while an item it could take was enqueued      default 1
 *   WAIT      1: a dequeuer that finds its cell empty (or, LPRQ, marked)
 *             reads it once more before it acts (Deviation (4)'s wait,
 *             its loads left out); 0: it acts at once, which leaves out
 *             only a read whose value nothing uses          default 1
 *   MAP       1: the cell map of 2 cells to a line (R = 4)    default 0
 *   Controls (each must make a check fail):
 *   NO_UNSAFE   a dequeuer that finds an older round's item leaves the
 *               cell as it is (no unsafe mark)
 *   NO_CLOSE    the tantrum returns LR_RING_CLOSED without setting CLOSED
 *   NO_RECHECK  lr_dequeue moves head on without its second dequeue
 *   NO_VOID     (PRQ) a dequeuer treats an enqueuer's mark as empty,
 *               without voiding it
 *   NO_MARK     (PRQ) an enqueuer claims se without marking val first
 *
 * Properties (assertions, checked exhaustively):
 *  - no duplicate (a bitmask of the items dequeued);
 *  - per-producer FIFO: when a dequeue returns a producer's item, every
 *    earlier item of that producer was returned, or is owed by another
 *    consumer's dequeue already in progress (which must then return it);
 *  - EMPTY only when the queue was empty at some point of the dequeue's
 *    interval: at some point, the enqueues that had returned were no more
 *    than the dequeues that had returned an item and the other
 *    consumers' dequeues in progress (a necessary condition of
 *    linearizability; with the producers done, it is "no loss");
 *  - no item is written into a ring after a dequeuer moved head past it
 *    (a retired ring), nor at a ticket at or past the ring's closed_at,
 *    nor at a ticket given up (lr_close's and lr_give_up's claims); tail
 *    leaves a ring before head does (Deviation (3));
 *  - the model's bounds: tickets below TMAX, rings below NRING. Every
 *    retry of a ring operation takes a ticket and every retry of the list
 *    follows a ring that was linked, so an operation that never finished
 *    (a livelock) would break one of them; SPIN's end-state check adds
 *    that no process is left blocked.
 */
#ifndef PRQ
#define PRQ 0
#endif
#ifndef R
#define R 2
#endif
#ifndef NPROD
#define NPROD 2
#endif
#ifndef PER
#define PER 2
#endif
#ifndef NCONS
#define NCONS 1
#endif
#ifndef PATIENCE
#define PATIENCE 2
#endif
#ifndef MAXEMPTY
#define MAXEMPTY 1
#endif
#ifndef WAIT
#define WAIT 1
#endif
#ifndef MAP
#define MAP 0
#endif
#ifndef NO_UNSAFE
#define NO_UNSAFE 0
#endif
#ifndef NO_CLOSE
#define NO_CLOSE 0
#endif
#ifndef NO_RECHECK
#define NO_RECHECK 0
#endif
#ifndef NO_VOID
#define NO_VOID 0
#endif
#ifndef NO_MARK
#define NO_MARK 0
#endif

#define TOTAL (NPROD * PER)
#define NRING (TOTAL + 1) /* the first ring and one per item at most */
#define NONE 255          /* next: no ring linked */
#define OPEN 255          /* closed_at: LR_OPEN */
#define NOLOST 255        /* lost: no ticket failed yet */
#define TMAX 30           /* tickets of the model (gave_up's bits) */
/* item k of producer p: 1 + p * PER + k (never 0, the empty cell) */
#define ITEM(p, k) (1 + (p) * PER + (k))
#define PROD_OF(x) (((x) - 1) / PER)
#define SEQ_OF(x) (((x) - 1) % PER)
/* LPRQ: a thread's mark (the C's bit 63 | thread number) */
#define MARKV(p) (100 + (p))
#define BOTTOM(v) ((v) == 0 || (v) >= 100)
/* lr_slot: ticket t's cell in the ring */
#if MAP
#define SLOT(t) ((((t) & 1) * 2) | (((t) & (R - 1)) >> 1))
#else
#define SLOT(t) ((t) & (R - 1))
#endif
#define CELL(rr, t) ((rr) * R + SLOT(t))

#define R_OK 0
#define R_CLOSED 1
#define D_ITEM 0
#define D_EMPTY 1

/* the rings */
byte head[NRING];
byte tail[NRING];
bit closed[NRING]; /* tail's CLOSED bit */
byte tail_seen[NRING];
byte closed_at[NRING];
int gave_up[NRING];
byte next[NRING];
/* cells: LCRQ (safe, index, item); LPRQ (safe, epoch, val) */
bit csafe[NRING * R];
byte cidx[NRING * R];
byte cval[NRING * R];
/* the list */
byte qhead;
byte qtail;
byte nalloc = 1; /* rings made so far */
/* ghosts */
bit retired[NRING]; /* head moved past it */
byte ret;           /* enqueues returned */
byte taken;         /* dequeues returned with an item */
byte inflight;      /* consumers inside a dequeue */
bit indeq[NCONS];
bit wasempty[NCONS]; /* the emptiness condition held at some point of the dequeue */
byte owe[NCONS];     /* an item the consumer's dequeue in progress must return */
int got;             /* bitmask of the items dequeued */

/* the checks at a write of item it at ticket tt of ring rr */
inline write_checks(rr, tt) {
  assert(!retired[rr]);
  assert(closed_at[rr] == OPEN || tt < closed_at[rr]);
  assert(((gave_up[rr] >> tt) & 1) == 0)
}

/* lr_ring_alloc + crq_make / prq_make holding it in ticket 0's cell, and
 * the link CAS (Figure 6) of it after ring rr: one step, since the ring is
 * private until the CAS publishes it */
inline link_fresh(rr, it, okv) {
  atomic {
    if
    :: next[rr] == NONE ->
       assert(nalloc < NRING);
       fi_ = 0;
       do
       :: fi_ < R ->
#if PRQ
          csafe[nalloc * R + fi_] = 1; cidx[nalloc * R + fi_] = 0;
#else
          csafe[nalloc * R + SLOT(fi_)] = 1; cidx[nalloc * R + SLOT(fi_)] = fi_;
#endif
          fi_++
       :: else -> break
       od;
#if PRQ
       cidx[nalloc * R + SLOT(0)] = 1;
#endif
       cval[nalloc * R + SLOT(0)] = it;
       tail[nalloc] = 1;
       closed_at[nalloc] = OPEN;
       next[nalloc] = NONE;
       next[rr] = nalloc;
       nalloc++;
       fi_ = 0;
       okv = 1
    :: else -> okv = 0
    fi
  }
}

/* lr_fix_state (Figure 5's fixState) */
inline fix_state(rr) {
  do
  :: atomic { t = tail[rr]; tc = closed[rr] };
     hh = head[rr];
     if
     :: tail[rr] != t || closed[rr] != tc -> skip /* continue */
     :: else ->
        if
        :: tc || hh <= t -> break /* a closed tail is above any head */
        :: else ->
           atomic {
             if
             :: tail[rr] == t && closed[rr] == tc -> tail[rr] = hh; ok = 1
             :: else -> ok = 0
             fi
           };
           if
           :: ok -> break
           :: else -> skip
           fi
        fi
     fi
  od;
  skip; /* a break lands here, not in the d_step */
  d_step { ok = 0; hh = 0; tc = 0 }
}

/* lr_close(r, t) after failing ticket t, and lr_give_up */
inline close_ring(rr, tt) {
  atomic {
    old = tail[rr]; oc = closed[rr];
#if !NO_CLOSE
    closed[rr] = 1
#endif
  };
  if
  :: !oc -> closed_at[rr] = old
  :: else -> skip
  fi;
  gave_up[rr] = gave_up[rr] | (1 << tt);
  d_step { old = 0; oc = 0 }
}

/* crq_enqueue / prq_enqueue: eres = R_OK or R_CLOSED */
inline ring_enqueue(rr, it, eres) {
  lost = NOLOST; tries = 0;
  do
  :: atomic { t = tail[rr]; tc = closed[rr]; tail[rr]++ };
     assert(t < TMAX);
     if
     :: tc ->
        if
        :: lost != NOLOST -> gave_up[rr] = gave_up[rr] | (1 << lost)
        :: else -> skip
        fi;
        eres = R_CLOSED; break
     :: else -> skip
     fi;
     ok = 0;
#if PRQ
     d_step { s = CELL(rr, t); cyc = t / R + 1 };
     atomic { vi = cidx[s]; vs = csafe[s] }; /* se */
     v = cval[s];
     if
     :: BOTTOM(v) && vi < cyc ->
        if
        :: vs -> ok = 1
        :: else ->
           if
           :: head[rr] <= t -> ok = 1
           :: else -> skip
           fi
        fi
     :: else -> skip
     fi;
     if
     :: ok ->
#if !NO_MARK
        atomic { /* 1: mark */
          if
          :: cval[s] == v -> cval[s] = MARKV(me)
          :: else -> ok = 0
          fi
        };
#endif
        if
        :: ok ->
           atomic { /* 2: claim */
             if
             :: cidx[s] == vi && csafe[s] == vs -> cidx[s] = cyc; csafe[s] = 1
             :: else -> ok = 0
             fi
           };
           if
           :: ok ->
              atomic { /* 3: publish */
                if
#if NO_MARK
                :: cval[s] == v ->
#else
                :: cval[s] == MARKV(me) ->
#endif
                   write_checks(rr, t); cval[s] = it; ok = 2
                :: else -> ok = 0
                fi
              }
           :: else -> skip
           fi
        :: else -> skip
        fi
     :: else -> skip
     fi;
#else
     s = CELL(rr, t);
     atomic { vi = cidx[s]; vs = csafe[s]; v = cval[s] };
     if
     :: v == 0 && vi <= t ->
        if
        :: vs -> ok = 1
        :: else ->
           if
           :: head[rr] <= t -> ok = 1
           :: else -> skip
           fi
        fi
     :: else -> skip
     fi;
     if
     :: ok ->
        atomic { /* the double-width CAS */
          if
          :: cidx[s] == vi && csafe[s] == vs && cval[s] == v ->
             write_checks(rr, t); cidx[s] = t; csafe[s] = 1; cval[s] = it; ok = 2
          :: else -> ok = 0
          fi
        }
     :: else -> skip
     fi;
#endif
     if
     :: ok == 2 -> eres = R_OK; break
     :: else -> skip
     fi;
     /* ticket t lost: lr_should_close */
     hh = head[rr];
     if
     :: t >= hh + R || tries >= PATIENCE -> /* full, or starving: the tantrum */
        close_ring(rr, t);
        eres = R_CLOSED; break
     :: else -> skip
     fi;
     d_step { lost = t; tries++ }
  od;
  skip; /* a break lands here, not in the d_step */
  d_step { t = 0; tc = 0; s = 0; vi = 0; vs = 0; v = 0; ok = 0; hh = 0; lost = 0; tries = 0; cyc = 0 }
}

/* crq_dequeue / prq_dequeue: dres = D_ITEM with ditem, or D_EMPTY */
inline ring_dequeue(rr, dres, ditem) {
  /* lr_ring_seems_empty (Deviation (1)) */
  h = head[rr];
  if
  :: h < tail_seen[rr] -> dres = D_ITEM /* not empty: go on */
  :: else ->
     t = tail[rr]; /* CLOSED masked */
     if
     :: h >= t -> dres = D_EMPTY
     :: else -> tail_seen[rr] = t; dres = D_ITEM
     fi
  fi;
  if
  :: dres == D_ITEM ->
     do
     :: atomic { h = head[rr]; head[rr]++ };
        assert(h < TMAX);
#if PRQ
        d_step { s = CELL(rr, h); cyc = h / R + 1 };
#else
        s = CELL(rr, h);
#endif
        waited = !WAIT; took = 0;
        do
#if PRQ
        :: atomic { vi = cidx[s]; vs = csafe[s] }; /* se */
           v = cval[s];
           if
           :: vi > cyc -> break /* a later cycle owns the cell */
           :: else -> skip
           fi;
           if
           :: !BOTTOM(v) && vi == cyc ->
              if
              :: cidx[s] != cyc -> skip /* continue */
              :: else -> cval[s] = 0; ditem = v; took = 1; break
              fi
           :: !BOTTOM(v) && vi < cyc -> /* an older cycle's item: mark the cell unsafe */
#if NO_UNSAFE
              break
#else
              atomic {
                if
                :: cidx[s] == vi && csafe[s] == vs -> csafe[s] = 0; ok = 1
                :: else -> ok = 0
                fi
              };
              if
              :: ok -> break
              :: else -> skip
              fi
#endif
           :: BOTTOM(v) && !waited -> waited = 1 /* Deviation (4): read again */
           :: BOTTOM(v) && waited && v != 0 && !NO_VOID -> /* a mark: void its claim */
              atomic {
                if
                :: cval[s] == v -> cval[s] = 0
                :: else -> skip
                fi
              }
           :: BOTTOM(v) && waited && (v == 0 || NO_VOID) ->
              if
              :: vi == cyc -> break /* empty, and ticket h's claim void */
              :: else ->
                 atomic { /* raise it to cycle c: ticket h's enqueuer fails */
                   if
                   :: cidx[s] == vi && csafe[s] == vs -> cidx[s] = cyc; ok = 1
                   :: else -> ok = 0
                   fi
                 };
                 if
                 :: ok -> break
                 :: else -> skip
                 fi
              fi
           fi
#else
        :: atomic { vi = cidx[s]; vs = csafe[s]; v = cval[s] };
           if
           :: vi > h -> break /* a later round owns the cell */
           :: else -> skip
           fi;
           if
           :: v != 0 && vi == h -> /* our item */
              atomic {
                if
                :: cidx[s] == vi && csafe[s] == vs && cval[s] == v -> cidx[s] = h + R; cval[s] = 0; ok = 1
                :: else -> ok = 0
                fi
              };
              if
              :: ok -> ditem = v; took = 1; break
              :: else -> skip
              fi
           :: v != 0 && vi < h -> /* an older round's item: mark the cell unsafe */
#if NO_UNSAFE
              break
#else
              atomic {
                if
                :: cidx[s] == vi && csafe[s] == vs && cval[s] == v -> csafe[s] = 0; ok = 1
                :: else -> ok = 0
                fi
              };
              if
              :: ok -> break
              :: else -> skip
              fi
#endif
           :: v == 0 && !waited -> waited = 1 /* Deviation (4): read again */
           :: v == 0 && waited -> /* empty: advance it past h */
              atomic {
                if
                :: cidx[s] == vi && csafe[s] == vs && cval[s] == v -> cidx[s] = h + R; ok = 1
                :: else -> ok = 0
                fi
              };
              if
              :: ok -> break
              :: else -> skip
              fi
           fi
#endif
        od;
        if
        :: took -> dres = D_ITEM; break
        :: else -> skip
        fi;
        t = tail[rr]; /* CLOSED masked */
        if
        :: t <= h + 1 -> fix_state(rr); dres = D_EMPTY; break
        :: else -> skip /* ticket h found nothing, and items may follow */
        fi
     od
  :: else -> skip
  fi;
  skip; /* a break lands here, not in the d_step */
  d_step { h = 0; t = 0; s = 0; vi = 0; vs = 0; v = 0; ok = 0; waited = !WAIT; took = 0; cyc = 0 }
}

/* lr_enqueue (Figure 6) */
inline lr_enqueue(it) {
  do
  :: r = qtail;
     n = next[r];
     if
     :: n != NONE -> /* tail lags behind a linked ring: help it on */
        atomic {
          if
          :: qtail == r -> qtail = n
          :: else -> skip
          fi
        }
     :: else ->
        ring_enqueue(r, it, res);
        if
        :: res == R_OK -> break
        :: else ->
           link_fresh(r, it, lk);
           if
           :: lk ->
              atomic {
                if
                :: qtail == r -> qtail = next[r]
                :: else -> skip
                fi
              };
              break
           :: else -> skip
           fi
        fi
     fi
  od;
  skip; /* a break lands here, not in the d_step */
  d_step { r = 0; n = 0; res = 0; lk = 0 }
}

/* lr_dequeue (Figure 6) */
inline lr_dequeue(dres, ditem) {
  do
  :: r = qhead;
     ring_dequeue(r, dres, ditem);
     if
     :: dres == D_ITEM -> break
     :: else -> skip
     fi;
     n = next[r];
     if
     :: n == NONE -> dres = D_EMPTY; break
     :: else -> skip
     fi;
#if !NO_RECHECK
     ring_dequeue(r, dres, ditem); /* an enqueue may have landed before the close */
     if
     :: dres == D_ITEM -> break
     :: else -> skip
     fi;
#endif
     if
     :: qtail == r -> /* tail leaves r before head does (Deviation (3)) */
        atomic {
          if
          :: qtail == r -> qtail = n
          :: else -> skip
          fi
        }
     :: else -> skip
     fi;
     atomic {
       if
       :: qhead == r -> assert(qtail != r); qhead = n; retired[r] = 1
       :: else -> skip
       fi
     }
  od;
  skip; /* a break lands here, not in the d_step */
  d_step { r = 0; n = 0 }
}

proctype producer(byte me) {
  byte r, n, res, lk, t, s, vi, v, hh, lost, tries, cyc, old, fi_, ok;
  bit tc, vs, oc;
  byte k = 0;
  do
  :: k < PER ->
     lr_enqueue(ITEM(me, k));
     d_step { ret++; k++ }
  :: else -> break
  od
}

/* the start of a dequeue: the emptiness condition at this point, for this
 * consumer and for each other one in a dequeue */
inline deq_start() {
  d_step {
    indeq[me] = 1; inflight++; wasempty[me] = 0;
    c = 0;
    do
    :: c < NCONS ->
       if
       :: indeq[c] && ret <= taken + inflight - 1 -> wasempty[c] = 1
       :: else -> skip
       fi;
       c++
    :: else -> break
    od;
    c = 0
  }
}

proctype consumer(byte me) {
  byte r, n, h, t, s, vi, v, hh, cyc, ok, item, result, c, j, miss, empties;
  bit tc, vs, took;
  bit waited = !WAIT;
  do
  :: taken == TOTAL -> break
  :: else ->
     /* after MAXEMPTY EMPTY answers, a dequeue only once an enqueue has
      * returned an item not yet taken: polling would run the counters
      * without end (each EMPTY answer may raise them) */
     (empties < MAXEMPTY || ret > taken || taken == TOTAL);
     if
     :: taken == TOTAL -> break
     :: else -> skip
     fi;
     deq_start();
     lr_dequeue(result, item);
     d_step {
       indeq[me] = 0; inflight--;
       if
       :: result == D_ITEM ->
          assert((got & (1 << item)) == 0); /* no duplicate */
          got = got | (1 << item);
          taken++;
          if
          :: owe[me] != 0 -> assert(item == owe[me]); owe[me] = 0
          :: else -> skip
          fi;
          /* per-producer FIFO: each earlier item returned, or owed */
          j = ITEM(PROD_OF(item), 0);
          do
          :: j < item ->
             if
             :: (got & (1 << j)) == 0 ->
                c = 0; miss = 1;
                do /* owed already (by a dequeue that returns it)? */
                :: c < NCONS ->
                   if
                   :: owe[c] == j -> miss = 0
                   :: else -> skip
                   fi;
                   c++
                :: else -> break
                od;
                c = 0;
                do /* else another consumer's dequeue in progress owes it */
                :: c < NCONS ->
                   if
                   :: c != me && indeq[c] && owe[c] == 0 && miss -> owe[c] = j; miss = 0
                   :: else -> skip
                   fi;
                   c++
                :: else -> break
                od;
                assert(miss == 0)
             :: else -> skip
             fi;
             j++
          :: else -> break
          od
       :: else ->
          assert(owe[me] == 0);
          assert(wasempty[me]); /* EMPTY: the queue was empty at some point */
          if
          :: empties < MAXEMPTY -> empties++
          :: else -> skip
          fi
       fi;
       wasempty[me] = 0; item = 0; result = 0; c = 0; j = 0; miss = 0
     }
  od
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < NRING -> next[i] = NONE; closed_at[i] = OPEN; i++
    :: else -> break
    od;
#if PRQ
    /* epoch 0 everywhere: free for cycle 1 */
#else
    i = 0;
    do
    :: i < R -> csafe[SLOT(i)] = 1; cidx[SLOT(i)] = i; i++
    :: else -> break
    od;
#endif
#if PRQ
    i = 0;
    do
    :: i < R -> csafe[i] = 1; i++
    :: else -> break
    od;
#endif
    i = 0;
    do
    :: i < NPROD -> run producer(i); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NCONS -> run consumer(i); i++
    :: else -> break
    od
  }
}
