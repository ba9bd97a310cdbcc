/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq_race.h — named delay points inside the library, for race tests
 * (liburcu's yield injection: its test builds compile the library with
 * calls that can stall a thread at chosen instants).
 *
 * The library marks the instants a test may want to stretch with
 * SYNCQ_RACE_POINT("name"). In the installed library and in syncq_static
 * the macro is nothing: the library's sources take the empty one of
 * src/race_internal.h (not installed), and the installed static bodies
 * (include/syncq/static/) define none and compile a point only inside
 * `#ifdef SYNCQ_RACE_POINT`, so a program that includes them gets no
 * hook (tests/install checks that no installed header defines one). The test library
 * syncq_race (tests/CMakeLists.txt) compiles the lock, queue, active message, hazard pointer, Treiber stack, CAS counter and delay sources with this
 * header forced in first, so each point calls syncq_race_hook when a test
 * has set one. A test that links syncq_race defines the hook variable with
 * SYNCQ_RACE_HOOK_DEFINE (at file scope, once) and sets it before it
 * starts threads; the hook decides by name and by thread whom to stall.
 *
 * Points:
 *   "lock.handover"  every lock's unlock, right after the store or
 *                    exchange that releases the lock (to a waiter, or to
 *                    whoever comes next): from there on the next holder
 *                    may destroy and free the lock.
 *   "lock.clh.trylock.released"  the trylock of "clh" and "clh-tp",
 *                    between its read of a released tail node and its
 *                    read of that node's spare (where the tail moves on).
 *   "lock.ttas_ps.tested"  the "ttas-ps" lock's wait, between the test
 *                    that found the lock free and its test-and-set
 *                    (src/lock/ttas_ps.c): a lock taken there fails the
 *                    test-and-set, and the waiter backs off (SPIN).
 *   "reclaim.hp.scan.counted"  a hazard-pointer scan that has counted
 *                    the domain's records, before it reads their slots
 *                    (src/reclaim/hazard.c): records published meanwhile
 *                    must still be read.
 *   "stack.treiber.push.loaded"  the Treiber stack's push, between its
 *                    read of Top and its CAS (src/stack/treiber.c): a
 *                    push made there fails the CAS, and the first one
 *                    backs off.
 *   "counter.cas_backoff.loaded"  the "cas-backoff" counter's
 *                    fetch-and-add, between its first read of the value
 *                    and its CAS (src/counter/cas.c): an add made there
 *                    fails the CAS, and the counter backs off.
 *   "delay.calibrating"  the delay loop's calibration, measured, not yet
 *                    published (src/delay.c): the state word says
 *                    calibrating. The signal tests raise their signal
 *                    there; delay_calibrating_race_test stops it there.
 *   "queue.scq2.ticket"  SCQ2's enqueue, between its Tail ticket and its
 *                    read of the cell (where a dequeuer overtakes it).
 *   "queue.scq2.dequeue.ticket"  SCQ2's dequeue, between its Head ticket
 *                    and its read of the cell (an item whose ticket is
 *                    taken, not yet consumed).
 *   "pr.dwcas.locked"  inside a double-width CAS whose comparison held,
 *                    before it writes (see below).
 *   "queue.loo.enqueue.ticket", "queue.loo.dequeue.ticket"  LOO, between
 *                    an operation's Tail or Head ticket and its
 *                    fetch-and-add on the slot.
 *   "am.claim.inside"  an active-message send inside its claim: a locking
 *                    claim holds the queue's lock, nothing claimed yet; the
 *                    lock-free claim has its packet position assigned, not
 *                    claimed (src/am/claim_*.c).
 *   "am.claim.bulk_inside"  a bulk send inside its claim with its bulk
 *                    block taken, its packet not: the lock-free claim has
 *                    the block position assigned, not claimed
 *                    (src/am/claim_lockfree.c); a locking claim holds the
 *                    lock and the block it claimed, the bulk tail advanced
 *                    (src/am/claim_common.c). am_test stops a sender there,
 *                    the crash matrix kills one.
 *   "am.send.bulk_copy"  a bulk send with half its bytes copied into the
 *                    claimed block (src/am/am.c).
 *   "am.send.claimed"  a send between its claim and its commit (src/am/am.c).
 *                    The AM tests kill or stop the process there
 *                    (tests/am/crash_matrix_test.c).
 *   "am.claim.assign"  the lock-free claim's NOWAIT assignment, between
 *                    its read of the tail and its read of that position's
 *                    slot (src/am/claim_lockfree.c): am_test sends through
 *                    another peer there, taking the position.
 *   "am.claim.owner"  the lock-free claim with its block or packet CLAIMED
 *                    by its CAS, its start time not yet written
 *                    (src/am/claim_lockfree.c): am_test stops a sender there.
 *   "am.claim.tail"  a locking claim's critical section with the packet
 *                    (and block) claimed, the tail not yet advanced
 *                    (src/am/claim_common.c): am_test kills a sender there.
 *   "am.claim.bulk_tail"  a locking claim's critical section with the bulk
 *                    block claimed, the bulk tail not yet advanced, the
 *                    packet not claimed (src/am/claim_common.c): the crash
 *                    matrix kills a sender there. The lock-free claim has
 *                    no such instant (its tail moves before its claim).
 *   "am.claim.took_over"  a spin-lock claim's waiter that has just taken
 *                    over a dead holder's lock word by CAS, its start time
 *                    not yet written beside it (src/am/claim_lock.c,
 *                    rl_enter): am_test stops a sender there.
 *   "am.claim.queued"  a ticket or Anderson claim's waiter that holds a
 *                    position it cannot enter yet, its waiter record
 *                    just written (src/am/claim_lock.c, queue_lock):
 *                    am_test stops a sender there and kills it.
 *   "am.claim.skipped"  a ticket or Anderson claim's waiter that has just
 *                    skipped a position (CAS to SKIP), the next not yet
 *                    handed on (queue_lock, rl_skip_dead_run, rl_leave):
 *                    am_test kills a sender there: at its first skip, at
 *                    a later one of the same pass (rl_skip_dead_run), and
 *                    at the skip of its own position as it gives up;
 *                    the crash matrix's "skipped" and "skipped-run" columns
 *                    kill a sender at those two.
 *   "am.claim.left"  a plain ticket or Anderson claim that gives up its
 *                    position (SYNCQ_ETIMEDOUT), its waiter record saying
 *                    so, before its CAS that skips the position if it was
 *                    handed to it meanwhile (rl_leave): am_test stops a
 *                    sender there, hands it its position, and kills it at
 *                    "am.claim.skipped" after that CAS.
 *   "am.send.stalled"  a send stalled on a full queue, right after it polled
 *                    its own endpoint (src/am/am.c): am_test counts them.
 *   "am.poll.taken.request", "am.poll.taken.reply"  a poll of that queue
 *                    that has taken it (nobody else polls it until it
 *                    returns), its head not yet read; "am.poll.ready": a
 *                    poll that found its head packet ready, not yet
 *                    delivered (src/am/am.c): am_test holds one poll there
 *                    while another thread polls the endpoint.
 *   "am.wait.sleep", "am.wait.yield"  syncq_am_wait about to sleep on its
 *                    doorbell (its queues looked idle after its fence), or
 *                    to yield the processor between polls (src/am/am.c):
 *                    am_test counts them.
 *   "am.poll.clock", "am.send.clock"  a clock read of a poll at a head
 *                    that is not ready (a claim, an assignment), and of
 *                    the sending thread's paced clock (a read its count
 *                    made due, or a look at a destination's creator;
 *                    src/am/am.c): am_test counts them.
 *   "queue.loo.dequeue.snapshot", "queue.loo.dequeue.confirm"  LOO's
 *                    dequeue, between its Head load and its Tail load: in
 *                    the EMPTY test before the ticket, and in the guarded
 *                    second one it makes when the first looks empty.
 *   "queue.loo.enqueue.checked"  LOO's enqueue, between its test for a
 *                    full Tail node (a node allocated if so) and its ticket.
 *   "queue.<algo>.enqueue.ticket", "queue.<algo>.dequeue.ticket"  the
 *                    fetch-and-add queues (scq, wcq, lcrq, lprq, wfqueue):
 *                    a ticket (cell index) taken, its cell not yet
 *                    touched; "queue.lprq.enqueue.marked": a PRQ cell
 *                    holding the enqueuer's mark, not yet claimed.
 *   "queue.<algo>.enqueue.linked", "queue.<algo>.dequeue.read"  the
 *                    linked queues (ms, ms-hp as "queue.ms.*", plj,
 *                    valois): a node linked, Tail not yet swung (the
 *                    others must help); Head read, not yet swung.
 *   "queue.nblfq.chase", "queue.nblfq.commit", "queue.nblfq.committed"
 *                    NBLFQ and NBLFQ2 (syncq/static/queue/nblfq.h):
 *                    inside a chase, between the chase and the commit CAS,
 *                    and between the commit and the hint write.
 *   "queue.nblfq.torn" NBLFQ2's enqueue: between the counter and the
 *                    pointer load of its first read of the cell at the hint.
 *   "queue.naive_ring.enqueue.stale", "queue.fai_array.enqueue.stale"
 *                    the naive ring's and the FAI array's enqueue, having
 *                    read tail past head, before it pauses and reads them
 *                    again (ring_stale_race_test counts them).
 *   "queue.vyukov.enqueue.claimed", "queue.vyukov.dequeue.claimed"
 *                    Vyukov's blocking ring: a position claimed, its cell
 *                    not yet published or freed (queue_progress_test's
 *                    check that a waiting queue is caught).
 *   "po.join.claimed"  syncq_po_join with the process claimed in its
 *                    state word (PO_CLAIMED), before it waits for the exit
 *                    and frees the slot (src/po/process.c).
 *   "po.slot.freed"  a freed slot back in the free ring, its count not yet
 *                    given back to live (src/po/process.c).
 *   "po.slot_ring.put.claimed"  the free ring's put with its position
 *                    claimed, the cell not yet published: a take of that
 *                    position waits (src/po/slot_ring.c).
 *   "po.mpsc.exchanged"  the "mpsc" mailbox's push between its exchange
 *                    of the tail and its link of the previous tail: the
 *                    message (and each later one) is on its way, none of
 *                    them can be taken yet (src/po/mbox_mpsc.c).
 *
 * Double-width CAS: in the race library syncq_pr_dwcas is the one defined
 * below, a lock around a read, a comparison and two stores, which is how
 * ThreadSanitizer's runtime and lock-based libatomic implement a 16-byte
 * CAS. This header includes syncq/pr.h itself with pr.h's own body renamed
 * (never called), as models/genmc/genmc_shim.h does, so it must come
 * before syncq/pr.h: included after it, the second definition is a
 * compile error, never a silent use of the instruction. A test can stall a thread inside it
 * ("pr.dwcas.locked") and see whether anything writes the pair meanwhile
 * without the lock, i.e. with a single-width operation on one half.
 * syncq_race_dwcas_waiting counts the threads queued for the lock.
 */
#ifndef SYNCQ_RACE_H
#define SYNCQ_RACE_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "syncq/atomic.h"

/* pr.h's double-width CAS, compiled under another name and never called:
 * every syncq_pr_dwcas after this header is the lock-based one below. */
#define syncq_pr_dwcas syncq_pr_dwcas_instruction_
#include "syncq/pr.h"
#undef syncq_pr_dwcas

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*syncq_race_hook_fn)(const char *name);

/* Set before threads start, read only afterwards: no atomics needed. */
extern syncq_race_hook_fn syncq_race_hook;

#define SYNCQ_RACE_POINT(name)                          \
  do {                                                  \
    syncq_race_hook_fn syncq_race_h_ = syncq_race_hook; \
    if (syncq_race_h_ != NULL) syncq_race_h_(name);     \
  } while (0)

/* The double-width CAS lock (one for every pair, as ThreadSanitizer's)
 * and the number of threads waiting for it. */
extern _Atomic(int) syncq_race_dwcas_lock;
extern _Atomic(int) syncq_race_dwcas_waiting;

#define SYNCQ_RACE_HOOK_DEFINE               \
  syncq_race_hook_fn syncq_race_hook = NULL; \
  _Atomic(int) syncq_race_dwcas_lock = 0;    \
  _Atomic(int) syncq_race_dwcas_waiting = 0

static inline bool syncq_race_dwcas(_Atomic(uint64_t) *lo, _Atomic(uint64_t) *hi, uint64_t *expected_lo,
                                    uint64_t *expected_hi, uint64_t desired_lo, uint64_t desired_hi) {
  if (atomic_exchange(&syncq_race_dwcas_lock, 1) != 0) {
    atomic_fetch_add(&syncq_race_dwcas_waiting, 1);
    while (atomic_exchange(&syncq_race_dwcas_lock, 1) != 0) sched_yield();
    atomic_fetch_sub(&syncq_race_dwcas_waiting, 1);
  }
  const uint64_t cur_lo = atomic_load(lo), cur_hi = atomic_load(hi);
  const bool ok = cur_lo == *expected_lo && cur_hi == *expected_hi;
  if (ok) {
    SYNCQ_RACE_POINT("pr.dwcas.locked");
    atomic_store(lo, desired_lo);
    atomic_store(hi, desired_hi);
  } else {
    *expected_lo = cur_lo;
    *expected_hi = cur_hi;
  }
  atomic_store(&syncq_race_dwcas_lock, 0);
  return ok;
}
static inline bool syncq_pr_dwcas(syncq_pr_dw_atomic *p, syncq_pr_dw *expected, syncq_pr_dw desired) {
  return syncq_race_dwcas(&p->lo, &p->hi, &expected->lo, &expected->hi, desired.lo, desired.hi);
}

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_RACE_H */
