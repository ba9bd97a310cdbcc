/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq.pml — NBLFQ (004 Algorithms 1-4) as syncq implements it
 * (include/syncq/static/queue/nblfq.h: syncq_nbl_comp, syncq_nbl_enqueue,
 * syncq_nbl_dequeue), for SPIN.
 *
 * Every shared access of the C code is one atomic step here: a cell load
 * (one 64-bit atomic word: pointer and counter together), the commit CAS,
 * the head and tail hints (loads and stores). Everything a process
 * computes from its own locals runs in d_step blocks (no interleaving
 * point: the C code computes it in registers). The line-by-line
 * correspondence is in models/spin/README.md.
 *
 * Parameters (spin -D...):
 *   S       cells (a power of two >= 2)              default 2
 *   TAGW    W, counter values (2^tag bits)           default 4
 *   NPROD   producers (1..2)                         default 2
 *   PER     items per producer                       default 2
 *   PER0    items of producer 0 (<= PER)              default PER
 *   SLEEPY  1: producer 0 is the paper's "thread that sleeps between its
 *           reads and its CAS": it makes its last enqueue's reads before
 *           the other processes start, then pauses before the CAS until
 *           the consumer has taken ROUNDS items; with ROUNDS close to
 *           S * TAGW the ring turns so far that the counters wrap, the case
 *           004 §V-A b) excludes                     default 0
 *   ROUNDS  items the consumer takes while the sleepy producer pauses
 *
 * Properties (assertions, checked exhaustively): every item is dequeued
 * exactly once (no duplicate: a bitmask; no loss: when every producer is
 * done, the consumer dequeues until EMPTY and must have them all), per
 * producer FIFO (each producer's items come out in its order), and with
 * one producer full FIFO. SPIN's end-state check adds: no process is
 * left blocked.
 *
 * Memory model: sequential consistency. The C code's loads are acquire
 * and its CAS seq_cst; the head/tail hints are relaxed, which SC cannot
 * show — but the algorithm validates every hint by the CAS (004 §V-A c:
 * "we could use a random value for h"), so here the hints are read
 * nondeterministically from any cell index as well as from the variable.
 */
#ifndef S
#define S 2
#endif
#ifndef TAGW
#define TAGW 4
#endif
#ifndef NPROD
#define NPROD 2
#endif
#ifndef PER
#define PER 2
#endif
#ifndef PER0
#define PER0 PER
#endif
#ifndef SLEEPY
#define SLEEPY 0
#endif
#ifndef ROUNDS
#define ROUNDS 0
#endif

#define MASK (S - 1)
#define WMASK (TAGW - 1)
#define PREV(i) (((i) + MASK) & MASK)
#define TOTAL (PER0 + (NPROD - 1) * PER)
#define NIL 0
/* item of producer p, k-th: 1 + p * PER + k (never NIL) */
#define ITEM(p, k) (1 + (p) * PER + (k))
#define PROD_OF(x) (((x) - 1) / PER)
#define SEQ_OF(x) (((x) - 1) % PER)

#define R_OK 0
#define R_FULL 1
#define R_EMPTY 2

byte ptr[S];  /* cell: pointer part (NIL or an item) */
byte ctr[S];  /* cell: counter part, < TAGW */
byte head;    /* hints (not authoritative) */
byte tail;
byte done;    /* producers finished */
byte taken;   /* items the consumer has dequeued */
int got;      /* bitmask of dequeued items (no duplicate) */
byte next_seq[NPROD]; /* per-producer FIFO */
byte version; /* successful commit CASes so far */
bit sleeping; /* SLEEPY: producer 0 has read its cells and paused before its CAS */

/* syncq_nbl_comp(i, u, j, v): 1 before, 0 not before, 2 ambiguous (C: -1) */
inline comp(ci, cup, cuc, cj, cvp, cvc, cres) {
  if
  :: cuc == cvc -> cres = (ci < cj)
  :: else ->
     dd = (cvc - cuc) & WMASK;
     if
     :: dd == 1 -> cres = 1
     :: dd == WMASK -> cres = 0
     :: else -> cres = 2
     fi
  fi
}

/* a hint: the variable, or (since the CAS validates it) any index */
inline hint(hvar, hout) {
  if
  :: hout = hvar & MASK
  :: hout = 0;
     do
     :: hout < MASK -> hout++
     :: break
     od
  fi
}

/* syncq_nbl_enqueue */
/* Lock-freedom (004 §V-B: "a CAS fails only because another operation's
 * CAS succeeded"): an attempt may end without a result only if some commit
 * CAS succeeded while it ran. */
inline retry_ok() {
  assert(version != seen)
}

inline enqueue(eitem, eres) {
  do
  :: seen = version;
     hint(head, h);
     steps = 0; commit = 0;
     do /* chase head */
     :: atomic { up = ptr[h]; uc = ctr[h] };
        atomic { pp = ptr[PREV(h)]; pc = ctr[PREV(h)] };
        if
        :: pp != NIL && up == NIL -> commit = 1; break
        :: else ->
           d_step { comp(PREV(h), pp, pc, h, up, uc, before) };
           if
           :: before == 2 -> break
           :: before == 0 ->
              if
              :: pp == NIL && up == NIL -> commit = 1; break
              :: pp != NIL && up != NIL ->
                 atomic { xp = ptr[h]; xc = ctr[h] };
                 if
                 :: xp == up && xc == uc -> head = h; commit = 2; break
                 :: else -> break
                 fi
              :: else -> skip
              fi
           :: else -> skip
           fi
        fi;
        d_step { h = (h + 1) & MASK; steps++ };
        if
        :: steps > 2 * S -> break
        :: else -> skip
        fi
     od;
     if
     :: commit == 2 -> eres = R_FULL; break
     :: commit == 0 -> retry_ok() /* retry */
     :: commit == 1 ->
        d_step {
          c = pc;
          if :: pp == NIL -> c = (c + WMASK) & WMASK :: else -> skip fi;
          if :: h == 0 -> c = (c + 1) & WMASK :: else -> skip fi
        };
#if SLEEPY
        if /* the sleepy producer's last enqueue pauses here */
        :: me == 0 && k == PER0 - 1 ->
           sleeping = 1;
           (taken >= ROUNDS || done == NPROD - 1 && taken == TOTAL - 1)
        :: else -> skip
        fi;
#endif
        atomic { /* commit CAS */
          if
          :: ptr[h] == NIL && ctr[h] == c -> ptr[h] = eitem; commit = 3; version++
          :: else -> skip
          fi
        };
        if
        :: commit == 3 -> head = (h + 1) & MASK; eres = R_OK; break
        :: else -> retry_ok() /* retry */
        fi
     fi
  od
}

/* syncq_nbl_dequeue */
inline dequeue(dres, ditem) {
  do
  :: seen = version;
     hint(tail, t);
     atomic { pp = ptr[PREV(t)]; pc = ctr[PREV(t)] };
     atomic { up = ptr[t]; uc = ctr[t] };
     steps = 0; ok = 1;
     do /* chase tail */
     :: d_step { comp(PREV(t), pp, pc, t, up, uc, before); steps++ };
        if
        :: before == 2 || steps > 2 * S -> ok = 0; break
        :: before == 0 -> break
        :: else ->
           d_step { t = (t + 1) & MASK; pp = up; pc = uc };
           atomic { up = ptr[t]; uc = ctr[t] }
        fi
     od;
     if
     :: ok && up == NIL ->
        atomic { xp = ptr[PREV(t)]; xc = ctr[PREV(t)] };
        if
        :: pp == NIL && xp == pp && xc == pc -> tail = t; dres = R_EMPTY; break
        :: else -> ok = 0
        fi
     :: else -> skip
     fi;
     if
     :: ok ->
        d_step { c = (uc + 1) & WMASK };
        atomic { /* commit CAS */
          if
          :: ptr[t] == up && ctr[t] == uc -> ptr[t] = NIL; ctr[t] = c; ok = 2; version++
          :: else -> skip
          fi
        };
        if
        :: ok == 2 -> tail = (t + 1) & MASK; ditem = up; dres = R_OK; break
        :: else -> retry_ok()
        fi
     :: else -> retry_ok()
     fi
  od
}

/* locals back to 0 after an operation: a value no later step reads must
 * not split otherwise equal states */
inline forget() {
  d_step { h = 0; t = 0; up = 0; uc = 0; pp = 0; pc = 0; xp = 0; xc = 0; c = 0; before = 0; dd = 0; steps = 0;
           commit = 0; ok = 0; seen = 0 }
}

proctype producer(byte me) {
  byte h, t, up, uc, pp, pc, xp, xc, c, before, dd, steps, commit, ok, result, seen;
  byte k = 0;
  byte mine = (me == 0 -> PER0 : PER);
  do
  :: k < mine ->
     enqueue(ITEM(me, k), result);
     forget();
     if
     :: result == R_OK -> k++
     :: else -> skip /* FULL: try again */
     fi
  :: else -> break
  od;
  done++
}

proctype consumer() {
  byte h, t, up, uc, pp, pc, xp, xc, c, before, dd, steps, commit, ok, result, item, was_done, i, seen;
  do
  :: taken == TOTAL -> break
  :: else ->
     was_done = done;
     dequeue(result, item);
     forget();
     if
     :: result == R_OK ->
        d_step {
          assert((got & (1 << item)) == 0);                 /* no duplicate */
          got = got | (1 << item);
          assert(SEQ_OF(item) == next_seq[PROD_OF(item)]);  /* per-producer FIFO */
          next_seq[PROD_OF(item)]++;
          taken++;
          item = 0
        }
     :: result == R_EMPTY ->
        /* EMPTY after every producer finished: nothing may be left */
        assert(was_done < NPROD || taken == TOTAL)
     fi
  od;
  /* quiescent and drained: every cell empty */
  for (i : 0 .. MASK) {
    assert(ptr[i] == NIL)
  }
}

init {
  byte i;
#if SLEEPY
  /* the sleeper reads the ring first, then sleeps while the others run */
  run producer(0);
  sleeping == 1;
  i = 1;
#else
  i = 0;
#endif
  atomic {
    do
    :: i < NPROD -> run producer(i); i++
    :: else -> break
    od;
    run consumer()
  }
}
