/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_ticket.pml — the queue locks of the active messages' locking claims
 * (src/am/claim_lock.c: queue_lock, queue_trylock, rl_current, rl_enter,
 * rl_holder_dead, rl_release, rl_hand_on, rl_skip_dead_run, rl_leave),
 * the ticket lock (NSL = 1) and Anderson's array lock (NSL = 2 or 3
 * slots; C: 64), with senders that may die at any step, for SPIN.
 *
 * The lock: `next` (a fetch-and-add gives a waiter its position t) and
 * NSL slots, each a word (position, pid, type: GO / HELD / SKIP; am_state
 * in C, three arrays written together here) and the holder's start time
 * beside it. Position x's word is slot[x mod NSL]: the ticket lock's one
 * word says "now serving x", Anderson's array gives each position its own
 * slot. Positions start at NSL (C: 0), so that the other slots' initial
 * tags (C: SKIP(i - 64)) are SKIP(i) here, before every position.
 *
 * A waiter (queue_lock): takes t; enters by CAS GO(t) -> HELD(t, me),
 * then stores its start time (rl_enter); else writes its waiter record
 * (WAITING(t, me)), and sees its turn skipped (its slot past t, or
 * SKIP(t)): it takes a new position. Otherwise it looks at the current
 * position x (rl_current: for the ticket lock the word itself; for
 * Anderson the nearest position before t whose slot carries its own tag,
 * else the highest tag of all; each slot's load a step of its own, other
 * processes moving between, as in C) and, once the
 * word stayed unchanged for a stale interval (untimed here: any look may
 * be acted on, once), acts on it:
 *   GO(x): x was handed over and never entered: CAS to SKIP(x), hand
 *     x + 1 on;
 *   HELD(x, pid) with pid judged dead (rl_holder_dead: the start time
 *     beside the word, then the pid's process; am_owner_dead): clear the
 *     start time, CAS to HELD(x, me), store its start time; Anderson: if
 *     x + 1's slot already names x + 1 or later (the dead holder had
 *     handed on), nothing more; else repair (am_claim_repair: a step here,
 *     am_lock.pml models it) and release x;
 *   SKIP(x) (x was skipped and x + 1 not handed on: the skipper died, or
 *     stalls, between its CAS and its hand-over): hand x + 1 on;
 * and after a hand-over skips every following position whose waiter
 * record names a dead process or one that left (rl_skip_dead_run). Every
 * hand-over after a SKIP is rl_hand_on: a load of x + 1's slot, then, if
 * it names a position before x + 1, a CAS from that word to GO(x + 1), so
 * the skipper and a waiter that found its SKIP stale hand x + 1 on once.
 * A plain claim that saw no progress for its patience gives up
 * (rl_leave): records LEFT(t, me), CASes GO(t) -> SKIP(t) and hands t + 1
 * on if t had come; the send returns SYNCQ_ETIMEDOUT (here: the sender
 * goes on to its next message). The holder releases: clears its start
 * time, stores GO(t + 1) into t + 1's slot (rl_release).
 *
 * Senders in MORTALS (a bit per id) may die before or after any step that
 * writes shared memory, at most MAXDEATHS of them: a dead sender stops
 * forever and no process holds its pid (pids are not reused here:
 * am_claim.pml checks reuse). The stale rule acts on a GO(x) whose waiter
 * is alive (slow, descheduled: C cannot tell) at most MAXSKIP times in
 * all; such a waiter loses its place (the contract's "a process stopped
 * while waiting loses its place"). At most MAXLEAVE claims give up. These
 * bounds keep the positions finite.
 *
 * Senders in NOWAITS (a bit per id) claim with NOWAIT (queue_trylock):
 * load next (t), load t's slot, and only if it says GO(t) take t by a CAS
 * of next from t to t + 1, then enter with rl_enter's CAS; a CAS that
 * fails, or a slot not GO(t), is a failed attempt (NTRIES attempts, C:
 * AM_NOWAIT_TRIES), and an rl_enter that fails (t was skipped under us by
 * the stale rule) is SYNCQ_EBUSY at once. The send then goes on to its
 * next message. No waiter record: a NOWAIT claimer never waits.
 *
 * When every first sender has finished or died, a last sender (id NS + 1,
 * never mortal, a plain claim) claims the lock: whatever the dead left,
 * it must get in.
 *
 * Controls (each must fail): -DOLD_SKIP=1 is the code before the SKIP
 * branch (no waiter acts on a stale SKIP(x); hand-overs after a skip are
 * plain stores): a skipper that died between its CAS and its hand-over
 * left every later claim waiting for good (C: SYNCQ_ETIMEDOUT at every
 * claim, for good; found by this model, test_lock_skipper_dies in
 * tests/am/am_test.c); -DSTORE_HANDON=1 the SKIP branch with plain stores for
 * the hand-overs (load x + 1's slot, store GO(x + 1) if it names an
 * earlier position); -DSTORE_SKIP=1 the stale skip of GO(x) as a store
 * after the look instead of a CAS; -DNO_HANDED=1 (Anderson) the take-over
 * without its look at x + 1's slot (a holder that had handed on is
 * repaired and released again); -DOLD_TAKEOVER=1 the take-over without
 * clearing the dead holder's start time first; -DNO_FALLBACK=1 and
 * -DANY_TAG=1 are wrong scans (at scan_step); -DNOWAIT_FAA=1,
 * -DNOWAIT_STORE=1 and -DNOWAIT_NO_TAKE=1 wrong NOWAIT claims (at
 * trylock).
 *
 * Properties, exhaustively:
 *  1. at most one live process inside the lock (a dead holder's position
 *     is taken over only once the holder is dead);
 *  2. positions are entered in increasing order (a take-over enters the
 *     dead holder's position again), so live waiters are served in the
 *     order of their positions (FIFO), except a position the stale rule
 *     skipped; a live waiter finds its turn skipped only after such a
 *     skip, and the run of dead waiters skips only dead or departed
 *     waiters' positions;
 *  3. no live process waits for good (SPIN's invalid-end-state check: a
 *     look or an act is enabled only when the words it reads changed or
 *     the judged process died, so a wait that could last for ever is a
 *     blocked state): the lock is never held or owed to a dead process for
 *     good; the last sender gets in, and leaves the lock free for the next
 *     position (GO(next) in next's slot);
 *  4. a NOWAIT claim enters only as properties 1 and 2 allow, never leaves
 *     a position owed when it returns SYNCQ_EBUSY (the position it took,
 *     if any, was entered or skipped by then), and returns SYNCQ_EBUSY
 *     only when the lock was held or owed during each failed attempt.
 *
 * Memory model: sequential consistency (see README.md).
 */
#ifndef NSL
#define NSL 1 /* slots: 1 the ticket lock, 2 or 3 Anderson's array lock */
#endif
#ifndef NS
#define NS 3
#endif
#ifndef K
#define K 1
#endif
#ifndef MORTALS
#define MORTALS 14 /* bit s: sender s may die (2 + 4 + 8: senders 1-3) */
#endif
#ifndef MAXDEATHS
#define MAXDEATHS 2
#endif
#ifndef MAXSKIP
#define MAXSKIP 0
#endif
#ifndef MAXLEAVE
#define MAXLEAVE 0
#endif
#ifndef OLD_SKIP
#define OLD_SKIP 0
#endif
#ifndef STORE_HANDON
#define STORE_HANDON 0
#endif
#ifndef STORE_SKIP
#define STORE_SKIP 0
#endif
#ifndef NO_HANDED
#define NO_HANDED 0
#endif
#ifndef OLD_TAKEOVER
#define OLD_TAKEOVER 0
#endif
#ifndef ATOMIC_SCAN
#define ATOMIC_SCAN 0
#endif
#ifndef NO_FALLBACK
#define NO_FALLBACK 0
#endif
#ifndef ANY_TAG
#define ANY_TAG 0
#endif
#ifndef NOWAITS
#define NOWAITS 0 /* bit s: sender s (1-3) claims with NOWAIT (queue_trylock) */
#endif
#ifndef NTRIES
#define NTRIES 2 /* C: AM_NOWAIT_TRIES (8) */
#endif
#ifndef NOWAIT_FAA
#define NOWAIT_FAA 0
#endif
#ifndef NOWAIT_STORE
#define NOWAIT_STORE 0
#endif
#ifndef NOWAIT_NO_TAKE
#define NOWAIT_NO_TAKE 0
#endif

#define GO 0
#define HELD 1
#define SKIP 2
#define WAITING 1
#define LEFT 2
#define MAXP 16 /* positions */
#define LAST (NS + 1)
#define SL(p) ((p) % NSL)

/* the slots' words and start times */
byte wpos[NSL], wpid[NSL], wtype[NSL], wstart[NSL];
byte next = NSL;
/* waiter records (am_queue.waiter; C: 512, shared modulo; here one per position) */
byte rpid[MAXP], rtype[MAXP];
/* model bookkeeping */
byte owner[MAXP]; /* who took position p */
bit left[MAXP];   /* its owner gave it up (rl_leave) */
bit lskip[MAXP];  /* skipped while its owner was alive and waiting */
bit handed[MAXP]; /* GO(p) was written */
bit chg[5]; /* a slot word was written since the process's last look */
bit nbz[5]; /* NOWAIT claimer: the lock was held or owed during its attempt */
bit alive[5], dead[5], fin[5];
byte deaths, liveskips, leaves;
byte holder; /* the live process inside the lock (0: none) */
byte lastin; /* the last position entered */

/* property 1: each position is handed over once */
#define HANDED(p) assert(!handed[p]); handed[p] = 1
#define NB(i) ((NOWAITS >> (i)) & 1)
#if NOWAITS
/* a position taken, by `me` (a NOWAIT claimer's attempt sees every other's) */
#define TAKEN() nbz[1] = nbz[1] | (NB(1) && me != 1); nbz[2] = nbz[2] | (NB(2) && me != 2); nbz[3] = nbz[3] | (NB(3) && me != 3)
/* a slot word written: next to an instant the lock was held or owed */
#define WW() chg[1] = 1; chg[2] = 1; chg[3] = 1; chg[4] = 1; nbz[1] = nbz[1] | NB(1); nbz[2] = nbz[2] | NB(2); nbz[3] = nbz[3] | NB(3)
#else
#define TAKEN() skip
#define WW() chg[1] = 1; chg[2] = 1; chg[3] = 1; chg[4] = 1
#endif
/* the lock is free: every position before next handed over and nobody,
 * live or dead, inside */
#define FREE (handed[next] && holder == 0)
/* position p entered or skipped: nobody owes it */
#define SETTLED(p) (wpos[SL(p)] > (p) || wpos[SL(p)] == (p) && wtype[SL(p)] != GO)
/* am_owner_dead(pid, start): no process holds the pid, or the start time
 * is not 0 and not that process's (sender s: start time s) */
#define JUDGED_DEAD(p, st) (!alive[p] || ((st) != 0 && (st) != (p)))
#define ALLDONE ((dead[1] || fin[1]) && (NS < 2 || dead[2] || fin[2]) && (NS < 3 || dead[3] || fin[3]))

inline die_point() {
  if
  :: ((MORTALS >> me) & 1) && deaths < MAXDEATHS ->
     atomic { dead[me] = 1; alive[me] = 0; deaths++ }; goto gone
  :: true -> skip
  fi
}

/* Entering position p: no live process inside (property 1), positions in
 * order (property 2; a take-over enters the dead holder's again). */
inline enter(p, over) {
  assert(holder == 0 || dead[holder]);
  assert(p > lastin || over && p == lastin);
  lastin = p;
  holder = me
}

/* rl_release: clear the start time, store GO(x + 1) into x + 1's slot. */
inline release(x) {
  wstart[SL(x)] = 0;
  die_point();
  atomic { wpos[SL(x + 1)] = x + 1; wtype[SL(x + 1)] = GO; wpid[SL(x + 1)] = 0; WW(); HANDED(x + 1); holder = 0 }
}

/* rl_hand_on(y): after SKIP(y - 1), GO(y) into y's slot unless it names
 * y or later: a load, then a CAS from the word loaded (r = 1: we handed). */
inline hand_on(y) {
  r = 0;
#if OLD_SKIP
  atomic { wpos[SL(y)] = y; wtype[SL(y)] = GO; wpid[SL(y)] = 0; WW(); HANDED(y) };
  r = 1
#else
  do
  :: atomic { sp = wpos[SL(y)]; sy = wtype[SL(y)]; sq = wpid[SL(y)] };
     if
     :: sp < y ->
#if STORE_HANDON
        atomic { wpos[SL(y)] = y; wtype[SL(y)] = GO; wpid[SL(y)] = 0; WW(); HANDED(y); r = 1 };
#else
        atomic {
          if
          :: wpos[SL(y)] == sp && wtype[SL(y)] == sy && wpid[SL(y)] == sq ->
             wpos[SL(y)] = y; wtype[SL(y)] = GO; wpid[SL(y)] = 0; WW(); HANDED(y); r = 1
          :: else -> skip
          fi
        };
#endif
        if
        :: r -> break
        :: else -> skip
        fi
     :: else -> break
     fi
  od;
  sp = 0; sy = 0; sq = 0
#endif
}

/* rl_skip_dead_run(cx + 1, t): while y's record says its waiter died or
 * left, CAS GO(y) -> SKIP(y) and hand y + 1 on. */
inline skip_run() {
  y = cx + 1;
  do
  :: y < t ->
     atomic { /* the record (relaxed), am_owner_dead(pid, 0) */
       if
       :: rtype[y] == LEFT || rtype[y] == WAITING && !alive[rpid[y]] -> r = 1
       :: else -> r = 0
       fi
     };
     if
     :: r ->
        atomic {
          if
          :: wpos[SL(y)] == y && wtype[SL(y)] == GO ->
             wtype[SL(y)] = SKIP; WW(); r = 1;
             assert(dead[owner[y]] || left[y]) /* property 2 */
          :: else -> r = 0
          fi
        };
        if
        :: r -> die_point(); hand_on(y + 1); die_point(); y++
        :: else -> break
        fi
     :: else -> break
     fi
  :: else -> break
  od;
  y = 0
}

/* One load of rl_current(t)'s scan, the k-th slot back from t, into (nx,
 * nt, np); nf: found (C's `seen`); k > NSL when the scan is over. The
 * ticket lock's scan is its one word. Anderson's: nearest first, a slot
 * that names its own position ends it (not the last, t's own slot); else
 * the highest tag before t of all slots. Each load is a step of its own
 * (-DATOMIC_SCAN=1: the whole scan one step). Controls: -DNO_FALLBACK=1
 * without the highest tag (only a slot naming its own position is
 * found), -DANY_TAG=1 the nearest slot naming any position before t. */
inline scan_step() {
  if
  :: NSL == 1 -> nx = wpos[0]; nt = wtype[0]; np = wpid[0]; nf = 1; k = NSL + 1
  :: else ->
     p = t - k;
     sp = wpos[SL(p)]; sy = wtype[SL(p)]; sq = wpid[SL(p)];
     if
     :: (sp == p || ANY_TAG && sp < t) && k < NSL -> nx = sp; nt = sy; np = sq; nf = 1; k = NSL + 1
     :: else ->
        if
        :: !NO_FALLBACK && sp < t && (!nf || sp > nx) -> nx = sp; nt = sy; np = sq; nf = 1
        :: else -> skip
        fi;
        k++
     fi
  fi
}

/* The scan over: a word other than the last look's starts a new stale
 * interval (acted = 0); the look is kept in (cf, cx, ct, cp). */
inline look_end() {
  if
  :: nf != cf || nx != cx || nt != ct || np != cp -> acted = 0
  :: else -> skip
  fi;
  cf = nf; cx = nx; ct = nt; cp = np;
  nf = 0; nx = 0; nt = 0; np = 0; k = 0; p = 0; sp = 0; sy = 0; sq = 0
}

/* queue_trylock (a NOWAIT claim): r = 1, position t entered; r = 0,
 * SYNCQ_EBUSY. tk: the position this attempt took (0: none). Properties:
 * it enters only as a waiter would (enter(): nobody beside it, positions
 * in order); at SYNCQ_EBUSY it owes no position (the one it took, if
 * any, was entered or skipped), and each failed attempt saw the lock held
 * or owed (nbz[me]: not FREE at its start, or a position taken or a slot
 * word written during it). Controls: -DNOWAIT_FAA=1 takes t with a
 * fetch-and-add before looking at its slot (and returns EBUSY holding it
 * if it is not GO(t)); -DNOWAIT_STORE=1 enters with a store of HELD(t, me)
 * (t is ours: the CAS on next gave it) instead of rl_enter's CAS;
 * -DNOWAIT_NO_TAKE=1 enters by rl_enter's CAS on the slot alone, without
 * taking t from next. */
inline trylock() {
  y = 0;
  do
  :: tk = 0;
#if NOWAIT_FAA
     atomic { t = next; nbz[me] = !FREE; next++; owner[t] = me; TAKEN(); assert(next < MAXP) };
     tk = t;
     die_point();
     r = 1;
#else
     atomic { t = next; nbz[me] = !FREE }; /* relaxed load of next: a hint */
     atomic { r = (wpos[SL(t)] == t && wtype[SL(t)] == GO) }; /* relaxed load of t's slot: a hint */
#if !NOWAIT_NO_TAKE
     if
     :: r ->
        atomic { /* CAS next t -> t + 1 */
          if
          :: next == t -> next++; owner[t] = me; TAKEN(); assert(next < MAXP)
          :: else -> r = 0
          fi
        };
        if
        :: r -> tk = t; die_point()
        :: else -> skip
        fi
     :: else -> skip
     fi;
#endif
#endif
     if
     :: r ->
        atomic { /* rl_enter: CAS GO(t) -> HELD(t, me) */
#if NOWAIT_STORE
          wpos[SL(t)] = t; wtype[SL(t)] = HELD; wpid[SL(t)] = me; WW(); enter(t, 0)
#else
          if
          :: wpos[SL(t)] == t && wtype[SL(t)] == GO -> wtype[SL(t)] = HELD; wpid[SL(t)] = me; WW(); enter(t, 0)
          :: else -> r = 0
          fi
#endif
        }
     :: else -> skip
     fi;
     if
     :: r -> die_point(); wstart[SL(t)] = me; break
     :: else ->
        assert(nbz[me]); /* the attempt failed: the lock was held or owed */
        if
        :: tk != 0 -> assert(SETTLED(tk)); break /* t skipped under us: SYNCQ_EBUSY */
        :: else -> skip
        fi;
        if
        :: y < NTRIES - 1 -> y++
        :: else -> break /* SYNCQ_EBUSY */
        fi
     fi
  od;
  y = 0; tk = 0; nbz[me] = 0
}

proctype sender(byte me) {
  byte t, cx, ct, cp, nx, nt, np, k, p, y, sp, sy, sq, r, done, tk;
  bit recorded, acted, cf, nf, gaveup;
  if
  :: me == LAST -> ALLDONE
  :: else -> skip
  fi;
  do
  :: done < K ->
     die_point();
#if NOWAITS
     if
     :: NB(me) -> trylock(); gaveup = !r; r = 0; goto inside
     :: else -> skip
     fi;
#endif
again:
     atomic { t = next; next++; owner[t] = me; TAKEN(); assert(next < MAXP) }; /* fetch-and-add */
     recorded = 0; acted = 0; cf = 0; cx = 0; ct = 0; cp = 0; chg[me] = 1; gaveup = 0;
     do
     :: atomic { /* rl_enter: CAS GO(t) -> HELD(t, me) */
          wpos[SL(t)] == t && wtype[SL(t)] == GO ->
          wtype[SL(t)] = HELD; wpid[SL(t)] = me; WW(); enter(t, 0)
        };
        die_point();
        wstart[SL(t)] = me;
        break
     :: atomic { !recorded -> rtype[t] = WAITING; rpid[t] = me; recorded = 1 };
        die_point()
     :: atomic { /* our turn skipped: queue again */
          recorded && (wpos[SL(t)] > t || wpos[SL(t)] == t && wtype[SL(t)] == SKIP) ->
          assert(lskip[t]) /* property 2 */
        };
        goto again
     :: atomic { /* rl_current, when a word changed since the last look: its first load */
          recorded && chg[me] ->
          chg[me] = 0; k = 1;
          scan_step();
#if ATOMIC_SCAN
          do
          :: k <= NSL -> scan_step()
          :: else -> break
          od;
#endif
          if
          :: k > NSL -> look_end()
          :: else -> skip
          fi
        };
#if !ATOMIC_SCAN && NSL > 1
        do /* the scan's other loads, each a step: other processes move between */
        :: atomic {
             k > 0 ->
             scan_step();
             if
             :: k > NSL -> look_end()
             :: else -> skip
             fi
           }
        :: k == 0 -> break
        od
#endif
     :: atomic { /* x handed over and never entered: skip it (CAS GO(x) -> SKIP(x)) */
          cf && !acted && ct == GO && (dead[owner[cx]] || left[cx] || liveskips < MAXSKIP) ->
          acted = 1;
#if STORE_SKIP
        };
        atomic { /* the store after the look */
          wtype[SL(cx)] = SKIP; wpos[SL(cx)] = cx; wpid[SL(cx)] = 0; WW(); r = 1;
#else
          if
          :: wpos[SL(cx)] == cx && wtype[SL(cx)] == GO -> wtype[SL(cx)] = SKIP; WW(); r = 1
          :: else -> r = 0
          fi;
#endif
          if
          :: r && !dead[owner[cx]] && !left[cx] -> liveskips++; lskip[cx] = 1
          :: else -> skip
          fi
        };
        if
        :: r -> die_point(); hand_on(cx + 1); die_point(); skip_run()
        :: else -> skip
        fi
     :: atomic { /* rl_holder_dead: the start time beside the word, the pid's process */
          cf && !acted && ct == HELD && JUDGED_DEAD(cp, wstart[SL(cx)]) -> acted = 1
        };
#if !OLD_TAKEOVER
        wstart[SL(cx)] = 0; /* rl_enter: the dead holder's start time cleared */
        die_point();
#endif
        atomic { /* rl_enter: CAS HELD(x, dead) -> HELD(x, me) */
          if
          :: wpos[SL(cx)] == cx && wtype[SL(cx)] == HELD && wpid[SL(cx)] == cp ->
             wpid[SL(cx)] = me; WW(); r = 1;
             if
             :: NSL == 1 -> enter(cx, 1)
             :: else -> skip
             fi
          :: else -> r = 0
          fi
        };
        if
        :: r ->
           die_point(); /* am.claim.took_over */
           wstart[SL(cx)] = me;
           die_point();
           atomic { /* Anderson: had the dead holder handed x + 1 on? */
             if
             :: NSL == 1 -> r = 2
             :: NSL > 1 && (NO_HANDED || wpos[SL(cx + 1)] <= cx) -> r = 2; enter(cx, 1)
             :: else -> r = 1
             fi
           };
           if
           :: r == 2 ->
              die_point(); /* am_claim_repair */
              release(cx);
              die_point();
              skip_run()
           :: else -> skip
           fi
        :: else -> skip
        fi
#if !OLD_SKIP
     :: atomic { cf && !acted && ct == SKIP -> acted = 1 };
        /* x skipped, x + 1 perhaps not handed on */
        hand_on(cx + 1);
        if
        :: r -> die_point(); skip_run()
        :: else -> skip
        fi
#endif
     :: atomic { /* rl_leave: the record says LEFT */
          cf && me != LAST && leaves < MAXLEAVE -> leaves++; rtype[t] = LEFT; rpid[t] = me; left[t] = 1
        };
        die_point();
        atomic {
          if
          :: wpos[SL(t)] == t && wtype[SL(t)] == GO -> wtype[SL(t)] = SKIP; WW(); r = 1
          :: else -> r = 0
          fi
        };
        if
        :: r -> die_point(); hand_on(t + 1)
        :: else -> skip
        fi;
        gaveup = 1;
        break
     od;
inside:
     if
     :: !gaveup ->
        die_point(); /* am.claim.inside: Figure 2's section */
        release(t)
     :: else -> skip
     fi;
     done++
  :: else -> break
  od;
  fin[me] = 1;
  if
  :: me == LAST -> /* property 3: the lock free for the next position */
     assert(holder == 0 && wpos[SL(next)] == next && wtype[SL(next)] == GO)
  :: else -> skip
  fi;
gone:
  skip
}

init {
  byte i;
  atomic {
    wpos[0] = NSL;
    handed[NSL] = 1;
    for (i : 1 .. NSL - 1) {
      wpos[i] = i; wtype[i] = SKIP
    }
    for (i : 1 .. LAST) {
      alive[i] = 1;
      run sender(i)
    }
  }
}
