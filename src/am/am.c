/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am.c — sending, polling and the handler table of shared-memory active
 * messages; the receiver's reclamation of dead senders' claims (layer 5
 * of src/am, see am_segment.h).
 *
 * Contract
 *   Source:      000 §3 (common approach to delivery): a sender claims a
 *                packet (claim_*.c), fills it, and changes its type to
 *                READY (READY-BULK with a bulk block); the receiver's poll
 *                takes the head packet when ready, runs the handler it
 *                names, then marks packet and block FREE. Senders stalled
 *                on a full queue back off exponentially and poll their own
 *                endpoint (§3.1: cyclic requests cannot deadlock); at the
 *                backoff's cap (AM_FULL_BACKOFF_CAP_NS, 1.6 us) they also
 *                yield the processor, so an oversubscribed machine still
 *                runs the receiver and the sender assigned the head packet;
 *                syncq_am_wait does the same for the receiver, and
 *                sleeps on a futex in the segment once its queues have
 *                stayed empty for SYNCQ_AM_WAIT_YIELD_NS ("Sleeping"
 *                below). API in the shape of GASNet-EX (handler table by
 *                index, short and bulk requests, at most one reply from a
 *                request handler).
 *   Progress:    delivery is FIFO per queue; a poll never waits (it returns
 *                when the head packet is not ready); a send waits on a
 *                full queue (or returns SYNCQ_FULL with NOWAIT) and on the
 *                claim lock within its bound (claim_lock.c, claim_posix.c).
 *   Atomics:     send = the claim + 1 release store (commit) + 1 seq_cst
 *                fence + 1 relaxed load (the doorbell, under TSan 1
 *                seq_cst fetch-and-add of 0 instead; + 1 fetch-and-add
 *                and a FUTEX_WAKE when the receiver sleeps) + 1 relaxed
 *                load of the peer's next look at its creator, compared
 *                with the thread's last clock read (a thread-local count
 *                of sends until the next read, no shared write: a read
 *                at most every send, at least every 64th; once a stale
 *                interval per peer a relaxed store of the next look and
 *                a /proc read of the creator, "the clock in a stream of
 *                events"; once the creator is found dead, a relaxed
 *                store of AM_PEER_DEAD and no look again); poll of one
 *                message = 1 acquire load + 1-2 release stores (free
 *                packet, block; each after a relaxed store of 0 in its
 *                start time) + 1 store of the head + 1 relaxed
 *                fetch-and-add (counter); every poll of a queue, empty
 *                or not, also takes the queue with 1 relaxed load + 1
 *                acquire CAS of a process-local word (the polling
 *                thread's mark) and gives it back with 1 release store
 *                (am_queue_take: of the threads of the creating process
 *                that poll one endpoint at once, stalled senders
 *                included, one at a time is in a queue).
 *   Memory:      never allocates on the send/poll paths; the first reply
 *                to a given requester maps its segment (malloc + mmap);
 *                the first time a thread finds its own mark on a queue
 *                outside a poll of it, it reads its stack's bounds
 *                (pthread_getattr_np, which may allocate).
 *   Robustness:  a packet CLAIMED by a process that has died (pid gone,
 *                zombie, or pid reused: start time differs) and blocking
 *                the head for the endpoint's stale_claim_ns (timed with
 *                the clock read at the polls' pace) is taken back
 *                (its bulk block too) and counted in `lost`; with the
 *                lock-free claim, a position assigned but never claimed
 *                for that long is skipped (`skipped`). A sender waiting
 *                for a bulk block held by a dead sender takes it back (a
 *                lock-free block position assigned and never claimed, it
 *                skips).
 *                Messages for unregistered handlers go to the default
 *                handler and are counted in `unhandled`. Recovery runs in
 *                passes: once one dead claim at the head has been taken
 *                back, the dead claims right after it are taken back in
 *                the same poll, and once one abandoned lock-free position
 *                is skipped, every position of that lap assigned as long
 *                ago and still unclaimed is skipped with it. A queue whose
 *                handler left its poll by longjmp is taken back by its
 *                thread's next poll from no deeper a frame ("a poll that
 *                never returned" below).
 *   Hostile segment: every address a send or a poll follows is computed
 *                from the geometry this process validated (the endpoint's
 *                at creation, a peer's at connect), never from the
 *                segment again; positions read from it are masked. A send
 *                or poll that finds the segment's fixed fields changed
 *                returns SYNCQ_EINVAL; a slot or lock word in a state no
 *                process writes is SYNCQ_EINVAL (claim_*.c).
 *   Signal-safe: no.
 *   Process-shared: yes (the segment); handles are per process.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "am_claim.h"
#include "am_core.h"
#include "am_internal.h"
#include "am_segment.h"
#include "../read_once_internal.h"
#include "syncq/backoff.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/pr.h"
#include "syncq/export.h"     /* SYNCQ_TSAN: the project's ThreadSanitizer detection */
#include "../race_internal.h" /* SYNCQ_RACE_POINT: nothing outside race tests */

#define AM_STALL_POLL_BUDGET 16u /* messages a stalled sender handles per backoff step */
/* A sender stalled on a full queue waits 100 ns, doubling up to this cap
 * (3.1 us in all), then yields the processor before each further wait of
 * the cap. With more processes than processors, the receiver or the
 * sender that holds the head packet may be waiting for this processor:
 * lc98-stress with 3 writers to one reader on 2 processors took 15 s for
 * 1,000,000 messages when senders spun up to 30 us between yields (and the
 * reader never yielded), 0.44-0.48 s with the reader yielding, 0.058 s with
 * both (one writer alone: 0.038 s; docs/reliability.md, "Active messages:
 * senders and receivers that are not running"). On dedicated processors a
 * yield returns at once, and the cap keeps a stalled sender's tries (a CAS
 * or lock attempt on the queue's lines) about 2 us apart. */
#define AM_FULL_BACKOFF_INITIAL_NS 100u
#define AM_FULL_BACKOFF_CAP_NS 1600u

static unsigned am_poll_queue(syncq_am_endpoint *ep, int qi, unsigned budget, bool paused); /* a stalled sender polls */

/* ---------------------------------------------------------------- the clock in a stream of events
 *
 * Two streams look at the clock for a bound of the stale interval: the
 * polls that find the head packet CLAIMED (a dead sender's claim is taken
 * back once it has blocked the head that long) and the sends with room
 * (the destination's creator is looked at once an interval). Read at
 * every event, the clock was 40 % of a bulk stream's receiver (the head
 * stays CLAIMED through each 8 KB copy; docs/reliability.md, "Active
 * messages: the clock of a poll at a claimed head"). A fixed count of
 * events between reads would stretch the bound by that count times the
 * time between events, for a receiver that polls once a millisecond. So
 * the count follows the rate: each read measures the time per event since
 * the last read and sets the count of events until the next one so that
 * reads fall about a 16th of the stale interval apart at that rate (at
 * least every event, at most every AM_PACE_MAX-th). A stream as fast as
 * polls in a loop reads the clock every 64 events; one of an event every
 * millisecond or more rarely (default interval: 20 ms), at every event.
 * What it cannot see is a stream that slows down between two reads: the
 * next read is then at most AM_PACE_MAX of the slow events late. A poll
 * that syncq_am_wait makes after it yielded or slept (`paused`: the wait
 * knows time passed) reads the clock whatever the count says. The polls'
 * count is the queue's (am_pace, written by the thread polling it); the
 * sends' is the sending thread's (am_send_pace below). */
#define AM_PACE_MAX 64u /* events between two clock reads at most */
/* Lock-free: empty polls between two clock reads at most, for a position
 * assigned and never claimed under an empty-looking head (unstick): the
 * fixed count this pace replaced, so a loop of empty polls reads the
 * clock no more often than before; such a position is rare (its sender
 * died between its two CASes) and waits two stale intervals anyway. */
#define AM_IDLE_PACE_MAX 1024u
#define AM_PACE_SHARE 16u /* reads aim to fall a 16th of the stale interval apart */

/* The clock, read again: a new episode of pc starts at t. */
static inline void am_pace_start(am_pace *pc, uint64_t t) {
  atomic_store_explicit(&pc->left, 0u, memory_order_relaxed);   /* relaxed: am_pace (am_internal.h) */
  atomic_store_explicit(&pc->every, 1u, memory_order_relaxed);  /* relaxed: as above */
  atomic_store_explicit(&pc->last_ns, t, memory_order_relaxed); /* relaxed: as above */
}

/* One more event of pc: true when it is to read the clock (am_pace_next).
 * One load and one store of a count otherwise. */
static inline bool am_pace_due(am_pace *pc) {
  uint32_t left = atomic_load_explicit(&pc->left, memory_order_relaxed); /* relaxed: am_pace (am_internal.h) */
  if (left == 0u) return true;
  atomic_store_explicit(&pc->left, left - 1u, memory_order_relaxed); /* relaxed: as above */
  return false;
}

/* The clock read at time t for an event of pc (due, or read anyway): the
 * events until the next read, from the time per event since the last one
 * (span_ns: the stale interval; max: the most events between two reads).
 * Returns t. */
static uint64_t am_pace_next(am_pace *pc, uint64_t t, uint64_t span_ns, uint32_t max) {
  /* relaxed: am_pace (am_internal.h) */
  uint64_t last = atomic_load_explicit(&pc->last_ns, memory_order_relaxed);
  uint32_t every = atomic_load_explicit(&pc->every, memory_order_relaxed); /* relaxed: as above */
  uint32_t left = atomic_load_explicit(&pc->left, memory_order_relaxed);   /* relaxed: as above */
  /* events since the last read, this one included (left < every: the
   * guard keeps a division by zero out of any state) */
  uint32_t n = left < every ? every - left : 1u;
  uint32_t next = 1u; /* no last read: read at the next event */
  if (last != 0u && t >= last) {
    uint64_t per = (t - last) / n;
    uint64_t e = per == 0u ? max : span_ns / AM_PACE_SHARE / per;
    next = e < 1u ? 1u : e > max ? max : (uint32_t)e;
  }
  atomic_store_explicit(&pc->every, next, memory_order_relaxed);     /* relaxed: as above */
  atomic_store_explicit(&pc->left, next - 1u, memory_order_relaxed); /* relaxed: as above */
  atomic_store_explicit(&pc->last_ns, t, memory_order_relaxed);      /* relaxed: as above */
  return t;
}

/* The clock of a poll at a stuck head, and of a send with room: race
 * points, so tests can count the reads. */
static inline uint64_t am_poll_clock(void) {
  SYNCQ_RACE_POINT("am.poll.clock");
  return syncq_now_ns();
}
static inline uint64_t am_send_clock(void) {
  SYNCQ_RACE_POINT("am.send.clock");
  return syncq_now_ns();
}

/* The sends' clock is paced per thread, not per peer: several threads may
 * send through one peer, and a count in the peer would be written by each
 * of their sends, a line every other sender reads (base, geo), moving
 * between their caches at every send. A thread's own count is written by
 * it alone. Each send counts down; the count's reads set `now_ns`, which
 * every send compares with its peer's next look (dead_check_ns): a peer
 * is looked at once the thread's last read has passed that time, whatever
 * peer the read came on (a thread alternating over many peers looks at
 * each within an interval and its next read, a 16th of it at the rate it
 * measured or AM_PACE_MAX sends, and its next send to that peer).
 *
 * initial-exec: a thread-pointer-relative load on the send path instead
 * of a call to __tls_get_addr (the general model in a shared library);
 * libsyncq.so is a DT_NEEDED library, and a dlopen of it takes these 24
 * bytes from glibc's static TLS surplus, as it does for the library's
 * other thread-local words (treiber.c, wcq.c, fiber_current.c). */
typedef struct am_send_pace {
  uint32_t left;    /* sends to let pass before the next read (0: read at the next) */
  uint32_t every;   /* sends from the last read to the next */
  uint64_t now_ns;  /* the last read (0: none yet): the time of this thread's sends until the next */
  uint64_t span_ns; /* the shortest stale interval of the sends since that read (0: none yet) */
} am_send_pace;
static _Thread_local am_send_pace am_send_tls __attribute__((tls_model("initial-exec")));

/* This thread's clock is read for a send, at t: the pace of its next
 * sends from the time per send since the last read, so that reads fall a
 * 16th of the shortest stale interval of the sends between apart (at
 * least every send, at most every AM_PACE_MAX-th). Not inlined: the
 * send's fast path keeps the count alone. */
__attribute__((noinline)) static uint64_t am_send_read(am_send_pace *sp, uint64_t t) {
  uint32_t next = 1u; /* no read before: read at the next send, and learn the rate */
  if (sp->now_ns != 0u && t >= sp->now_ns && sp->every != 0u) {
    uint64_t per = (t - sp->now_ns) / sp->every;
    uint64_t e = per == 0u ? AM_PACE_MAX : sp->span_ns / AM_PACE_SHARE / per;
    next = e < 1u ? 1u : e > AM_PACE_MAX ? AM_PACE_MAX : (uint32_t)e;
  }
  sp->every = next;
  sp->left = next - 1u;
  sp->now_ns = t;
  sp->span_ns = 0u; /* the next sends set it */
  return t;
}

/* One more send of this thread to a peer of stale interval span_ns: the
 * time it goes by, this thread's last clock read (read now when due). */
static inline uint64_t am_send_now(uint64_t span_ns) {
  am_send_pace *sp = &am_send_tls;
  if (span_ns <= sp->span_ns - 1u) sp->span_ns = span_ns; /* the shorter (0 - 1: none yet) */
  if (sp->left == 0u) return am_send_read(sp, am_send_clock());
  sp->left--;
  return sp->now_ns;
}

/* ---------------------------------------------------------------- sleeping
 *
 * syncq_am_wait sleeps in the kernel once it has spun and yielded for
 * SYNCQ_AM_WAIT_YIELD_NS: a futex wait on the segment's `bell` (shared,
 * not private: senders are other processes). `asleep` counts the threads
 * of the receiving process that may be in (or entering) that wait; a
 * sender reads it as "maybe asleep" when it is nonzero. Dekker's protocol
 * between each waiting thread (am_sleep) and each sender (am_ring):
 *   waiter: (if its queues are not idle, yield instead of all this)
 *           read bell; add 1 to asleep; seq_cst fence; look at its
 *           queues (am_queue_idle); futex-wait on bell while it holds
 *           what was read, if they are idle; subtract 1 from asleep;
 *   sender: commit the packet (after advancing the tail); seq_cst
 *           fence; read asleep; if nonzero, bump bell and futex-wake
 *           every thread waiting on it.
 * The two fences are ordered one way or the other: the waiter's look
 * sees the tail and commit, so it does not sleep, or the sender reads
 * asleep at or after the waiter's write of it (fence to fence), and every
 * write of asleep from then until the waiter subtracts its 1 still counts
 * it: the sender sees a nonzero count and wakes it (a bump before the
 * futex wait makes the kernel's check of bell fail, one after finds the
 * waiter queued on it). A waiter that read the bumped bell synchronises
 * with the bump (release, acquire) and so sees the commit before it
 * looks. A count, not a flag: with a flag that each waiter set and
 * cleared, the first of two sleepers to wake (a timeout, a message it
 * then took) cleared it under the other, whose wake-ups were lost
 * (models/spin/am_wait.pml checks both forms).
 * The count itself lives in the endpoint (ep->waiters), which no other
 * process can write; each change of it, under a lock in the same word,
 * writes the new count to the segment's asleep (am_waiters_add), so
 * the threads' writes of asleep follow one another in the lock's order
 * and the last one is the count. The receiver never reads asleep back:
 * what another process writes there cannot overflow or wrap the count,
 * and lasts only until the next sleep begins or ends (a value too high
 * costs wake-ups no one needed; zero under a sleeper loses its
 * wake-ups, a slice each, see below). When the receiving process dies
 * in its sleep, asleep keeps its count: senders to the dead endpoint ring
 * a bell no one waits on, and a new endpoint of that name is a new,
 * zero-filled segment.
 * ThreadSanitizer does not model a fence (GCC warns -Wtsan) and would
 * draw no order from these; under TSan (SYNCQ_TSAN) every write of asleep
 * is a seq_cst exchange (the waiter's first one in its fence's place) and
 * the sender reads it with a seq_cst RMW that adds 0, in its fence's and
 * load's place: RMWs of asleep follow its modification order, each
 * reading the one before it, so either the sender's comes after the
 * waiter's add and reads a count that includes it, or the waiter's add
 * reads the sender's write or a later RMW in its release sequence and
 * synchronizes with it, and its look sees the commit, as with the
 * fences. A normal build's machine code is the fences'.
 * A lost wake-up (a doorbell word overwritten by another process, a sender
 * killed between its commit and its wake) costs at most one slice: every
 * futex wait lasts at most SYNCQ_AM_WAIT_SLEEP_SLICE_NS, after which the
 * waiter polls again. */

#define AM_WAITERS_LOCK 0x80000000u /* ep->waiters: a thread is changing the count and its copy */

/* Add delta (1 or -1) to the count of ep's sleeping threads and write the
 * result to the segment's asleep, under the lock bit of ep->waiters (see
 * above). The holder has two stores to make, and the lock is taken only
 * by threads about to sleep or just woken: a thread that finds it held
 * yields to it. */
static void am_waiters_add(syncq_am_endpoint *ep, uint32_t delta) {
  uint32_t v;
  for (;;) {
    /* relaxed: a guess that the CAS below validates */
    v = atomic_load_explicit(&ep->waiters, memory_order_relaxed);
    /* acquire: pairs with the release store that ends the last holder's
     * change (its count and its write of asleep come first) */
    if ((v & AM_WAITERS_LOCK) == 0u &&
        atomic_compare_exchange_weak_explicit(&ep->waiters, &v, v | AM_WAITERS_LOCK, memory_order_acquire,
                                              memory_order_relaxed))
      break;
    sched_yield(); /* the holder may be waiting for this processor */
  }
  uint32_t n = v + delta; /* at most the threads of this process: never near the lock bit */
  am_header *h = ep->base;
#if SYNCQ_TSAN
  /* seq_cst exchange: pairs with am_ring's RMW (see above); adding, it
   * stands in the place of the fence that follows in am_sleep */
  (void)atomic_exchange(&h->asleep, n);
#else
  /* relaxed: the lock orders it after this process's earlier writes of
   * asleep; adding, am_sleep's fence orders it before the look (pairs
   * with am_ring's fence) */
  atomic_store_explicit(&h->asleep, n, memory_order_relaxed);
#endif
  /* release: pairs with the acquire CAS that takes the lock next */
  atomic_store_explicit(&ep->waiters, n, memory_order_release);
}

/* After a commit into the segment of h: wake its receiver if it sleeps. */
static void am_ring(am_header *h) {
#if SYNCQ_TSAN
  /* seq_cst RMW that writes back what it reads (adds 0), in the fence's
   * and the load's place: pairs with am_waiters_add's exchange (see above). */
  if (atomic_fetch_add(&h->asleep, 0u) == 0u) return;
#else
  /* seq_cst: the StoreLoad between our commit (and tail) and the load of
   * asleep; pairs with the fence in am_sleep (see above). */
  atomic_thread_fence(memory_order_seq_cst);
  /* relaxed: ordered after the commit by the fence above; any nonzero
   * count, or value, is "maybe asleep" */
  if (atomic_load_explicit(&h->asleep, memory_order_relaxed) == 0u) return;
#endif
  /* release: pairs with am_sleep's acquire load of bell (a receiver that
   * reads this bump sees the commit) */
  atomic_fetch_add_explicit(&h->bell, 1u, memory_order_release);
  (void)syncq_futex_wake(&h->bell, 0, true); /* all: whoever waits on the word, however it got there */
}

/* Queue qi holds nothing assigned beyond what this process delivered: its
 * tail is its head and the head slot is free for it. Anything else (a
 * message, a sender between its assignment and its commit, a dead
 * sender's claim or an abandoned position the poll must take back, an
 * overwritten tail) is not idle, and the wait keeps yielding instead. */
static bool am_queue_idle(syncq_am_endpoint *ep, int qi) {
  am_qview v; /* from the validated geometry, as the poll's */
  am_qview_of(ep->base, &ep->geo, qi, &v);
  /* relaxed: only this process's polls write the head, maybe another
   * thread's here, without polling[qi]'s acquire: a stale head is behind
   * the tail, so it only makes the queue look busy (the wait yields) */
  uint32_t hd = atomic_load_explicit(&v.q->head, memory_order_relaxed);
  /* relaxed: in am_sleep's look after its count, ordered after asleep's
   * write by its fence (pairs with am_ring's); its first look, before the
   * count, is a hint: "not idle" there only makes the wait yield */
  if (atomic_load_explicit(&v.q->tail, memory_order_relaxed) != hd) return false;
  /* relaxed: as the tail's */
  return atomic_load_explicit(&am_pkt_at(&v, hd)->state, memory_order_relaxed) == am_state(hd, 0, AM_FREE);
}

/* The caller's mark in ep->polling: nonzero, one per live thread. */
static inline uintptr_t am_poller_self(void) { return (uintptr_t)pthread_self(); }

/* Queue qi is being polled further up this thread's stack: this wait
 * cannot deliver from it (a message there rings the bell all the same, a
 * spurious wake-up). A queue another thread is polling is looked at as
 * any other: a message there keeps this wait yielding, not sleeping,
 * until that poll has delivered it (it may have read the head before the
 * message came, and a message committed before our count rings nothing). */
static bool am_polled_here(syncq_am_endpoint *ep, int qi) {
  /* relaxed: only this thread writes its own mark, and it reads it back */
  return atomic_load_explicit(&ep->polling[qi], memory_order_relaxed) == am_poller_self();
}

/* Both queues of ep are idle, but for one polled further up this thread's
 * stack (am_polled_here). */
static bool am_idle(syncq_am_endpoint *ep) {
  return (am_polled_here(ep, AM_Q_REPLY) || am_queue_idle(ep, AM_Q_REPLY)) &&
         (am_polled_here(ep, AM_Q_REQUEST) || am_queue_idle(ep, AM_Q_REQUEST));
}

/* Sleep up to ns unless a queue of ep has something (see above). False
 * when a queue was not idle at the first look, and the wait yields
 * instead: such a queue holds a message on its way (a sender between its
 * assignment and its commit may be waiting for this processor) or one the
 * poll must take back, and no send may ring for it. True when it slept,
 * or when the look after the fence found a message just committed (the
 * wait polls at once). Several threads may sleep here at once: each adds
 * itself to the count of sleepers and takes itself off, so one that
 * wakes leaves the others counted, and senders ring for them. */
static bool am_sleep(syncq_am_endpoint *ep, uint64_t ns) {
  /* A first look without the count: a queue that is not idle now needs
   * no wake-up, and senders are spared a count that would send them into
   * FUTEX_WAKE for nothing at every poll of a busy wait. */
  if (!am_idle(ep)) return false;
  SYNCQ_RACE_POINT("am.wait.looked"); /* tests: hold a waiter between its first look and its count */
  am_header *h = ep->base;
  /* acquire: pairs with am_ring's release bump */
  uint32_t seen = atomic_load_explicit(&h->bell, memory_order_acquire);
  am_waiters_add(ep, 1u);
#if !SYNCQ_TSAN
  /* seq_cst: the StoreLoad between asleep and the look at the queues;
   * pairs with the fence in am_ring (under TSan, am_waiters_add's
   * exchange stands in its place) */
  atomic_thread_fence(memory_order_seq_cst);
#endif
  SYNCQ_RACE_POINT("am.wait.counted"); /* tests: hold a counted waiter before its look */
  bool poll_now = true;                /* slept, or something came in */
  if (am_idle(ep)) {
    SYNCQ_RACE_POINT("am.wait.sleep"); /* tests: count the sleeps */
    /* no futex on this system: yield instead */
    poll_now = syncq_futex_wait(&h->bell, seen, ns > INT64_MAX ? INT64_MAX : (int64_t)ns, true) != SYNCQ_ENOTSUP;
    SYNCQ_RACE_POINT("am.wait.woken"); /* tests: hold a woken waiter before it leaves the count */
  }
  am_waiters_add(ep, UINT32_MAX); /* -1: a sender that read the count before makes one wake-up too many */
  return poll_now;
}

/* ---------------------------------------------------------------- handlers */

static bool own(const syncq_am_endpoint *ep) {
  uint32_t pid;
  uint64_t start;
  am_self_identity(&pid, &start);
  return ep->owner == (pid_t)pid;
}

int syncq_am_register(syncq_am_endpoint *ep, unsigned index, const char *name, syncq_am_handler fn, void *ctx) {
  if (ep == NULL || index >= SYNCQ_AM_MAX_HANDLERS) return SYNCQ_EINVAL;
  if (name != NULL && strlen(name) > SYNCQ_AM_NAME_MAX) return SYNCQ_EINVAL;
  am_handler_entry *e = &ep->handlers[index];
  e->fn = fn;
  e->ctx = fn ? ctx : NULL;
  if (fn != NULL && name != NULL) strcpy(e->name, name); /* length checked above */
  else e->name[0] = '\0';
  return SYNCQ_OK;
}

const char *syncq_am_handler_name(const syncq_am_endpoint *ep, unsigned index) {
  if (ep == NULL || index >= SYNCQ_AM_MAX_HANDLERS || ep->handlers[index].fn == NULL) return NULL;
  return ep->handlers[index].name;
}

int syncq_am_set_default_handler(syncq_am_endpoint *ep, syncq_am_handler fn, void *ctx) {
  if (ep == NULL) return SYNCQ_EINVAL;
  ep->default_fn = fn;
  ep->default_ctx = ctx;
  return SYNCQ_OK;
}

int syncq_am_counters_of(const syncq_am_endpoint *ep, syncq_am_counters *out) {
  if (ep == NULL || out == NULL) return SYNCQ_EINVAL;
  am_header *h = ep->base;
  out->delivered = atomic_load(&h->delivered);
  out->unhandled = atomic_load(&h->unhandled);
  out->last_unhandled = atomic_load(&h->last_unhandled);
  out->lost = atomic_load(&h->lost);
  out->skipped = atomic_load(&h->skipped);
  return SYNCQ_OK;
}

bool syncq_am_token_is_request(const syncq_am_token *token) { return token && token->queue == AM_Q_REQUEST; }
syncq_am_endpoint *syncq_am_token_endpoint(const syncq_am_token *token) { return token ? token->ep : NULL; }
int syncq_am_token_sender(const syncq_am_token *token) {
  /* src as the poll read it from the packet, checked against the table's
   * size: another process may have written any value there */
  if (token == NULL || token->tp != NULL || token->queue != AM_Q_REQUEST || token->src >= SYNCQ_AM_MAX_PEERS) return -1;
  return (int)token->src;
}

/* ---------------------------------------------------------------- send */

static int check_msg(unsigned handler, const uint32_t *args, unsigned nargs, unsigned flags) {
  if (handler >= SYNCQ_AM_MAX_HANDLERS || nargs > SYNCQ_AM_MAX_ARGS || (nargs > 0 && args == NULL) ||
      (flags & ~SYNCQ_AM_NOWAIT) != 0)
    return SYNCQ_EINVAL;
  return SYNCQ_OK;
}

/* A send into the mapping `base` of a segment whose geometry this process
 * validated as `g` (at connect). Every address comes from g; the segment's
 * own copy of the fixed fields is only compared with it, once per send:
 * changed, the segment was overwritten, and nothing is followed. Values a
 * sender reads from the segment afterwards (tails, lock words, states) are
 * used masked or compared, never as offsets. */
/* Is the destination's creator, the only process that polls it, gone?
 * Looked at (one read of /proc) once a stale interval per peer at most,
 * at time t: by a NOWAIT send that found the queue full (a sender that
 * retries on FULL learns SYNCQ_EDEAD within an interval instead of
 * getting SYNCQ_FULL for ever), and by a send with room when its paced
 * clock read comes (am_send), so a send to a receiver that died commits
 * into its queue for about an interval at most, not until the queue is
 * full. The first look is the connect's (am_peer_make). */
static bool am_creator_gone(const am_geometry *g, _Atomic(uint64_t) *next_check, uint64_t t) {
  /* relaxed: a schedule the peer's senders share; a store lost to another
   * sender's only moves the next look by an interval, or (one that
   * overwrote AM_PEER_DEAD) costs the next send a /proc read that finds
   * the death again */
  uint64_t next = atomic_load_explicit(next_check, memory_order_relaxed);
  if (next == AM_PEER_DEAD) return true; /* found dead before: a death is final */
  if (t < next) return false;
  atomic_store_explicit(next_check, t + g->stale_ns, memory_order_relaxed);
  if (!am_owner_dead((uint32_t)g->creator_pid, g->creator_start)) return false;
  atomic_store_explicit(next_check, AM_PEER_DEAD, memory_order_relaxed); /* relaxed: as above */
  return true;
}

/* A send's look at its destination's creator, due by this thread's paced
 * clock: the clock read afresh (so the next look is an interval from now,
 * not from a read up to a 16th old), and this thread's pace started again
 * from it (its next send reads the clock and measures the rate anew): a
 * thread whose sends were fast and now come slowly learns it at a look,
 * not up to AM_PACE_MAX slow sends later. Once an interval per peer at
 * most: out of line. */
__attribute__((noinline)) static bool am_send_look(syncq_am_peer *to) {
  uint64_t t = am_send_clock();
  am_send_pace *sp = &am_send_tls;
  sp->left = 0u;
  sp->every = 1u;
  sp->now_ns = t;
  /* The peer's first send, within an interval of the connect's own look:
   * no second /proc read (a program that connects and sends at once paid
   * it at its start: lc98-stress's seven lock-free writers, 0.4 ms of a
   * 1.9 ms sample); the next look an interval after the connect's.
   * relaxed: a schedule the peer's senders share (am_creator_gone) */
  if (atomic_load_explicit(&to->dead_check_ns, memory_order_relaxed) == 0u && t - to->connect_ns < to->geo.stale_ns) {
    atomic_store_explicit(&to->dead_check_ns, to->connect_ns + to->geo.stale_ns, memory_order_relaxed);
    return false;
  }
  return am_creator_gone(&to->geo, &to->dead_check_ns, t);
}

static int am_send(syncq_am_peer *to, int qi, syncq_am_endpoint *self, uint16_t src, unsigned handler, const void *data,
                   size_t len, bool bulk, const uint32_t *args, unsigned nargs, unsigned flags) {
  void *base = to->base;
  const am_geometry *g = &to->geo;
  const am_claim_ops *ops = to->claim;
  am_header *h = base;
  int r = check_msg(handler, args, nargs, flags);
  if (r != SYNCQ_OK) return r;
  if (bulk && (len > g->bulk_size || (len > 0 && data == NULL))) return SYNCQ_EINVAL;
  if (!am_geometry_same(base, g->size, g)) return SYNCQ_EINVAL;
  /* a creator gone since the last look: answer before committing a
   * message nobody will poll (the time: this thread's paced clock).
   * relaxed: a schedule the peer's senders share (am_creator_gone) */
  if (am_send_now(g->stale_ns) >= atomic_load_explicit(&to->dead_check_ns, memory_order_relaxed) && am_send_look(to))
    return SYNCQ_EDEAD;
  am_qview v;
  am_qview_of(base, g, qi, &v);
  am_claim_state cs;
  memset(&cs, 0, sizeof cs);
  cs.want_bulk = bulk;
  cs.bulk_seen = AM_BULK_SEEN_NONE; /* no stalled look yet */
  am_self_identity(&cs.pid, &cs.start);
  bool may_poll = self != NULL && self->owner == (pid_t)cs.pid; /* a forked child must not poll its parent's */
  const bool nowait = (flags & SYNCQ_AM_NOWAIT) != 0;
  syncq_backoff_exp b;
  (void)syncq_backoff_exp_init(&b, AM_FULL_BACKOFF_INITIAL_NS, AM_FULL_BACKOFF_CAP_NS);
  uint64_t next_check = 0;
  bool yielded = false; /* the last backoff step yielded: our polls of self come after a pause */
  for (;;) {
    if (atomic_load_explicit(&h->closed, memory_order_relaxed) != 0u) { /* relaxed: a hint; shutdown is final */
      am_claim_release(&v, &cs);
      return SYNCQ_EDEAD;
    }
    r = ops->claim(&v, nowait, &cs); /* the validated geometry's claim: the segment's may be overwritten */
    if (r == SYNCQ_OK) break;
    if (r != SYNCQ_FULL) { /* refused (overwritten segment) or timed out: keep nothing */
      am_claim_release(&v, &cs);
      return r;
    }
    if (nowait) {
      am_claim_release(&v, &cs);
      return am_creator_gone(g, &to->dead_check_ns, syncq_now_ns()) ? SYNCQ_EDEAD : SYNCQ_FULL;
    }
    /* stalled: make room in our own queues (000 §3.1); a queue another
     * thread of this process is polling is skipped (am_queue_take): that
     * poll makes the room */
    if (may_poll) {
      (void)am_poll_queue(self, AM_Q_REPLY, AM_STALL_POLL_BUDGET, yielded);
      if (qi == AM_Q_REQUEST) (void)am_poll_queue(self, AM_Q_REQUEST, AM_STALL_POLL_BUDGET, yielded);
      /* and the transport's, so a job mixing both paths cannot deadlock */
      if (self->tp != NULL) (void)self->tp->poll(self->tp->ctx, AM_STALL_POLL_BUDGET);
      SYNCQ_RACE_POINT("am.send.stalled"); /* tests: count the stalled sender's polls */
    }
    uint64_t t = syncq_now_ns();
    if (next_check == 0) {
      next_check = t + g->stale_ns;
    } else if (t >= next_check) {
      next_check = t + g->stale_ns;
      if (am_owner_dead((uint32_t)g->creator_pid, g->creator_start)) { /* nobody will make room */
        am_claim_release(&v, &cs);
        return SYNCQ_EDEAD;
      }
      ops->bulk_stalled(&v, &cs); /* a block held by a dead sender, or abandoned */
    }
    /* Back off; once the backoff is at its cap, also yield: on an
     * oversubscribed machine the process that must run next (the
     * receiver, or the sender assigned the head packet) may be waiting
     * for this CPU (AM_FULL_BACKOFF_CAP_NS). */
    yielded = syncq_backoff_exp_wait(&b) >= b.cap_ns;
    if (yielded) sched_yield();
  }
  am_packet *p = am_pkt_at(&v, cs.pkt_pos);
  p->handler = (uint16_t)handler;
  p->nargs = (uint8_t)nargs;
  p->src_peer = src;
  if (nargs > 0) memcpy(p->args, args, nargs * sizeof args[0]);
  if (bulk) {
    if (len > 0) {
      unsigned char *dst = am_data_at(&v, cs.bulk_pos);
      size_t half = len / 2u; /* tests: die with the block half copied */
      memcpy(dst, data, half);
      SYNCQ_RACE_POINT("am.send.bulk_copy");
      memcpy(dst + half, (const unsigned char *)data + half, len - half);
    }
    p->bulk_len = (uint32_t)len;
    am_bulk_slot *bs = am_slot_at(&v, cs.bulk_pos);
    /* relaxed: READY only tells reclaimers "not orphaned"; the packet's
     * release store below publishes the data */
    atomic_store_explicit(&bs->state, am_state(cs.bulk_pos, cs.pid, AM_READY), memory_order_relaxed);
  } else {
    p->bulk_len = 0;
  }
  SYNCQ_RACE_POINT("am.send.claimed"); /* tests: die between claim and commit */
  /* release: pairs with the receiver's acquire load of the state (it then
   * reads the fields and the bulk block written above) */
  atomic_store_explicit(&p->state, am_state(cs.pkt_pos, cs.pid, bulk ? AM_READY_BULK : AM_READY), memory_order_release);
  am_ring(h);
  return SYNCQ_OK;
}

/* A send through a transport: the same checks as the queue block's. */
static int tp_send(const am_transport *tp, int dest, int qi, unsigned handler, const void *data, size_t len, bool bulk,
                   const uint32_t *args, unsigned nargs, unsigned flags) {
  int r = check_msg(handler, args, nargs, flags);
  if (r != SYNCQ_OK) return r;
  if (bulk && (len > tp->bulk_size || (len > 0 && data == NULL))) return SYNCQ_EINVAL;
  return tp->send(tp->ctx, dest, qi, handler, data, len, bulk, args, nargs, flags);
}

int syncq_am_request(syncq_am_peer *peer, unsigned handler, const uint32_t *args, unsigned nargs, unsigned flags) {
  if (peer == NULL) return SYNCQ_EINVAL;
  if (peer->tp != NULL)
    return tp_send(peer->tp, peer->trank, AM_Q_REQUEST, handler, NULL, 0, false, args, nargs, flags);
  return am_send(peer, AM_Q_REQUEST, peer->self, peer->src_index, handler, NULL, 0, false, args, nargs, flags);
}

int syncq_am_request_bulk(syncq_am_peer *peer, unsigned handler, const void *data, size_t len, const uint32_t *args,
                          unsigned nargs, unsigned flags) {
  if (peer == NULL) return SYNCQ_EINVAL;
  if (peer->tp != NULL)
    return tp_send(peer->tp, peer->trank, AM_Q_REQUEST, handler, data, len, true, args, nargs, flags);
  return am_send(peer, AM_Q_REQUEST, peer->self, peer->src_index, handler, data, len, true, args, nargs, flags);
}

/* The destination's end as a send would find it, looked at now: its
 * `closed` word (one load, any value another process writes is only
 * compared), then its creator as validated at connect (one /proc read,
 * am_peer_end). A death found here is recorded in the peer's schedule
 * (AM_PEER_DEAD), so the sends after it answer SYNCQ_EDEAD at once. */
int syncq_am_peer_check(syncq_am_peer *peer, char *why, size_t why_size) {
  if (why != NULL && why_size > 0) why[0] = '\0';
  if (peer == NULL) return SYNCQ_EINVAL;
  if (peer->tp != NULL) { /* the transport judges it (syncq_am_mpi_peer_dead) */
    if (why != NULL && why_size > 0) snprintf(why, why_size, "a peer through a transport: ask the transport");
    return SYNCQ_ENOTSUP;
  }
  if (!am_geometry_same(peer->base, peer->geo.size, &peer->geo)) {
    if (why != NULL && why_size > 0) snprintf(why, why_size, "its segment was overwritten");
    return SYNCQ_EINVAL;
  }
  uint32_t pid = 0;
  int end = am_peer_end(peer, true, &pid);
  if (end == AM_END_LIVE) return SYNCQ_OK;
  if (end == AM_END_DIED) /* relaxed: a schedule the peer's senders share (am_creator_gone) */
    atomic_store_explicit(&peer->dead_check_ns, AM_PEER_DEAD, memory_order_relaxed);
  if (why != NULL && why_size > 0) {
    if (end == AM_END_DIED) snprintf(why, why_size, "its process died (pid %u)", (unsigned)pid);
    else if (end == AM_END_CLOSED) snprintf(why, why_size, "its endpoint was closed");
    else snprintf(why, why_size, "its endpoint said leaving (its destroy began)");
  }
  return SYNCQ_EDEAD;
}

/* The requester's endpoint, connected on the first reply to it. */
static int reply_peer(syncq_am_endpoint *ep, uint16_t src, syncq_am_peer **out) {
  syncq_am_peer *p = ep->reply_peer[src];
  /* gone (closed, or its creator found dead: relaxed, the peer's schedule,
   * am_creator_gone); maybe re-created since */
  if (p != NULL && (atomic_load(&((am_header *)p->base)->closed) != 0u ||
                    atomic_load_explicit(&p->dead_check_ns, memory_order_relaxed) == AM_PEER_DEAD)) {
    (void)syncq_am_disconnect(p);
    ep->reply_peer[src] = p = NULL;
  }
  if (p == NULL) {
    am_peer_slot *t = am_at(ep->base, ep->geo.peers_off); /* the validated offset, not the segment's */
    /* acquire: pairs with the release store of READY after the name */
    if (atomic_load_explicit(&t[src].state, memory_order_acquire) != AM_PEER_READY) return SYNCQ_ENOENT;
    char name[SYNCQ_AM_NAME_MAX + 1];
    memcpy(name, t[src].name, sizeof name);
    name[SYNCQ_AM_NAME_MAX] = '\0';
    if (!am_name_ok(name)) return SYNCQ_EINVAL; /* the slot was overwritten */
    int r = am_peer_make(NULL, name, &p);
    if (r == SYNCQ_ENOENT) return SYNCQ_EDEAD;
    if (r != SYNCQ_OK) return r;
    ep->reply_peer[src] = p;
  }
  *out = p;
  return SYNCQ_OK;
}

static int reply_common(syncq_am_token *token, unsigned handler, const void *data, size_t len, bool bulk,
                        const uint32_t *args, unsigned nargs, unsigned flags) {
  if (token == NULL || token->queue != AM_Q_REQUEST || token->replied) return SYNCQ_EINVAL;
  int r = check_msg(handler, args, nargs, flags);
  if (r != SYNCQ_OK) return r;
  if (token->tp != NULL) {
    r = tp_send(token->tp, token->trank, AM_Q_REPLY, handler, data, len, bulk, args, nargs, flags);
    if (r == SYNCQ_OK) token->replied = true;
    return r;
  }
  if (token->src == AM_NO_PEER || token->src >= SYNCQ_AM_MAX_PEERS) return SYNCQ_ENOENT;
  syncq_am_peer *p;
  r = reply_peer(token->ep, token->src, &p);
  if (r != SYNCQ_OK) return r;
  r = am_send(p, AM_Q_REPLY, token->ep, AM_NO_PEER, handler, data, len, bulk, args, nargs, flags);
  if (r == SYNCQ_OK) token->replied = true;
  return r;
}

int syncq_am_reply(syncq_am_token *token, unsigned handler, const uint32_t *args, unsigned nargs, unsigned flags) {
  return reply_common(token, handler, NULL, 0, false, args, nargs, flags);
}

int syncq_am_reply_bulk(syncq_am_token *token, unsigned handler, const void *data, size_t len, const uint32_t *args,
                        unsigned nargs, unsigned flags) {
  return reply_common(token, handler, data, len, true, args, nargs, flags);
}

/* ---------------------------------------------------------------- poll */

void am_dispatch(syncq_am_endpoint *ep, syncq_am_token *tk, unsigned idx, const uint32_t *args, unsigned nargs,
                 const void *data, size_t len) {
  am_header *h = ep->base;
  am_handler_entry *e = idx < SYNCQ_AM_MAX_HANDLERS ? &ep->handlers[idx] : NULL;
  if (e != NULL && e->fn != NULL) {
    e->fn(tk, args, nargs, data, len, e->ctx);
    atomic_fetch_add_explicit(&h->delivered, 1u, memory_order_relaxed); /* a statistic */
  } else {
    atomic_fetch_add_explicit(&h->unhandled, 1u, memory_order_relaxed); /* a statistic */
    atomic_store_explicit(&h->last_unhandled, idx, memory_order_relaxed);
    if (ep->default_fn) ep->default_fn(tk, args, nargs, data, len, ep->default_ctx);
  }
}

static inline void am_free_delivered(const am_qview *v, am_packet *p, uint32_t hd, bool bulk, uint32_t bpos);

static void deliver(syncq_am_endpoint *ep, int qi, const am_qview *v, am_packet *p, uint64_t s, uint32_t hd) {
  /* The packet's words, each loaded once (SYNCQ_READ_ONCE) before it is
   * checked or masked: a hostile sender may change them under us, and the
   * value bounded must be the value used. */
  uint32_t args[SYNCQ_AM_MAX_ARGS];
  const unsigned nargs_sent = SYNCQ_READ_ONCE(p->nargs);
  unsigned nargs = nargs_sent <= SYNCQ_AM_MAX_ARGS ? nargs_sent : SYNCQ_AM_MAX_ARGS;
  memcpy(args, p->args, nargs * sizeof args[0]); /* values only: the handler's to judge */
  bool bulk = am_state_type(s) == AM_READY_BULK;
  uint32_t bpos = SYNCQ_READ_ONCE(p->bulk_pos);
  const void *data = bulk ? am_data_at(v, bpos) : NULL;
  uint32_t blen = SYNCQ_READ_ONCE(p->bulk_len);
  size_t len = bulk ? (blen <= v->bulk_size ? blen : v->bulk_size) : 0;
  syncq_am_token tk = {ep, qi, SYNCQ_READ_ONCE(p->src_peer), false, NULL, 0};
  am_dispatch(ep, &tk, SYNCQ_READ_ONCE(p->handler), args, nargs, data, len);
  am_free_delivered(v, p, hd, bulk, bpos);
}

/* Free the delivered head packet hd (and its bulk block at bpos) for the
 * next lap. */
static inline void am_free_delivered(const am_qview *v, am_packet *p, uint32_t hd, bool bulk, uint32_t bpos) {
  if (bulk) {
    am_bulk_slot *bs = am_slot_at(v, bpos);
    /* relaxed: published by the release store of FREE below (0 while FREE,
     * am_segment.h) */
    atomic_store_explicit(&bs->owner_start, 0u, memory_order_relaxed);
    /* release: pairs with the next claimer's acquire load/CAS of FREE
     * (our reads of the block happen before its writes) */
    atomic_store_explicit(&bs->state, am_state(bpos + v->blocks, 0, AM_FREE), memory_order_release);
  }
  /* relaxed: published by the release store of FREE below (0 while FREE) */
  atomic_store_explicit(&p->owner_start, 0u, memory_order_relaxed);
  /* release: pairs with the next claimer's acquire of FREE(hd + n) */
  atomic_store_explicit(&p->state, am_state(hd + v->packets, 0, AM_FREE), memory_order_release);
}

/* Lock-free: the head position hd was found abandoned (assigned before
 * `since`, unclaimed for a stale interval). Every later position of the
 * same lap assigned before `since` (the tail then: `tail_then`) whose slot
 * still shows FREE for it has waited as long: skip them all in this pass
 * (FREE a lap later, as for hd), so a crash of many senders between their
 * two CASes costs one stale interval, not one each. The head then steps
 * over them (am_poll_queue). */
static void skip_abandoned_run(syncq_am_endpoint *ep, const am_qview *v, uint32_t hd, uint32_t tail_then) {
  am_header *h = ep->base;
  for (uint32_t pos = hd + 1u; am_pos_after(tail_then, pos) && pos - hd < v->packets; pos++) {
    am_packet *p = am_pkt_at(v, pos);
    uint64_t s = am_state(pos, 0, AM_FREE);
    /* release: pairs with the next claimer's acquire of FREE; a late
     * sender that finds FREE(pos + n) takes a new position */
    if (atomic_compare_exchange_strong_explicit(&p->state, &s, am_state(pos + v->packets, 0, AM_FREE),
                                                memory_order_release, memory_order_relaxed))
      atomic_fetch_add_explicit(&h->skipped, 1u, memory_order_relaxed); /* a statistic */
  }
}

/* The head packet is not ready. Take back a dead sender's claim or skip
 * an abandoned lock-free assignment once it has blocked the head for the
 * stale timeout; true if the head position was consumed. `recovering`:
 * the position before was just taken back in this pass, so a dead owner
 * here is taken back at once (death is a fact; the stale interval only
 * spaces out the /proc reads): a run of dead claims costs one interval.
 * `paused`: the caller paused since its last poll (syncq_am_wait's yield
 * or sleep): read the clock whatever the pace says. */
static bool unstick(syncq_am_endpoint *ep, int qi, const am_qview *v, am_packet *p, uint64_t s, uint32_t hd,
                    bool recovering, bool paused) {
  am_header *h = ep->base;
  am_queue *q = v->q;
  bool claimed = am_state_pos(s) == hd && am_state_type(s) == AM_CLAIMED;
  bool free_here = s == am_state(hd, 0, AM_FREE) && ep->claim->assigns;
  if (!claimed && !free_here) {
    ep->stuck_since[qi] = 0;
    return false; /* empty, or a packet of the previous lap still being freed */
  }
  am_pace *pace = &ep->stuck_pace[qi];
  bool seen = ep->stuck_since[qi] != 0 && ep->stuck_pos[qi] == hd; /* stuck here since an earlier poll */
  uint64_t t;
  if (free_here) {
    /* An empty lock-free queue may hide a position assigned to a sender
     * that died before claiming it. Look rarely: the clock at the pace of
     * the empty polls (a count of their own, kept across messages, so a
     * queue that empties after each message does not read the clock each
     * time; at most every AM_IDLE_PACE_MAX-th, at every poll of a queue
     * polled a millisecond apart or more rarely: a fixed count of 1,024
     * polled every 5 ms skipped the position only after 15 s), and the tail
     * (the senders' line: reading it costs their next assignment CAS a
     * cache miss) only once the head has been empty for the stale
     * timeout. */
    am_pace *idle = &ep->idle_pace[qi];
    if (!paused && !am_pace_due(idle)) return false;
    t = am_pace_next(idle, am_poll_clock(), v->stale_ns, AM_IDLE_PACE_MAX);
  } else {
    /* A CLAIMED head seen before: the clock at the pace of these polls
     * ("the clock in a stream of events"); the head stays CLAIMED through
     * a live sender's whole copy */
    if (seen && !recovering && !paused && !am_pace_due(pace)) return false;
    t = am_poll_clock();
  }
  if (claimed && recovering) {
    ep->stuck_pos[qi] = hd;
    ep->stuck_since[qi] = t > v->stale_ns ? t - v->stale_ns : 1u; /* due now */
    am_pace_start(pace, t);
  } else if (!seen) {
    ep->stuck_pos[qi] = hd;
    ep->stuck_since[qi] = t;
    ep->unclaimed_since[qi] = 0;
    am_pace_start(pace, t); /* the next poll reads the clock and learns their rate */
    return false;
  } else if (claimed) {
    (void)am_pace_next(pace, t, v->stale_ns, AM_PACE_MAX);
  }
  if (t - ep->stuck_since[qi] < v->stale_ns) return false;
  uint64_t freed = am_state(hd + v->packets, 0, AM_FREE);
  if (free_here) {
    /* relaxed: a hint; the CAS below decides */
    if (!am_pos_after(atomic_load_explicit(&q->tail, memory_order_relaxed), hd)) {
      ep->unclaimed_since[qi] = 0; /* idle: nobody was assigned this position */
      return false;
    }
    if (ep->unclaimed_since[qi] == 0) { /* assigned: give its sender the timeout to claim it */
      ep->unclaimed_since[qi] = t;
      /* relaxed: a hint, as above; positions before it were assigned by now */
      ep->unclaimed_tail[qi] = atomic_load_explicit(&q->tail, memory_order_relaxed);
      return false;
    }
    if (t - ep->unclaimed_since[qi] < v->stale_ns) return false;
    /* release: pairs with the next claimer's acquire of FREE; a late
     * sender that finds FREE(hd + n) takes a new position */
    if (!atomic_compare_exchange_strong_explicit(&p->state, &s, freed, memory_order_release, memory_order_relaxed))
      return false;
    atomic_fetch_add_explicit(&h->skipped, 1u, memory_order_relaxed); /* a statistic */
    skip_abandoned_run(ep, v, hd, ep->unclaimed_tail[qi]);
  } else {
    ep->stuck_since[qi] = t; /* if the owner lives: look again after another interval */
    uint32_t pid = am_state_pid(s);
    /* relaxed: a locking claimer's start time is published by its release
     * store of CLAIMED (read above with acquire); a lock-free claimer's
     * reads 0 until it writes it after its claim CAS (0 while FREE,
     * am_segment.h), and the owner is then judged by its pid alone */
    if (!am_owner_dead(pid, atomic_load_explicit(&p->owner_start, memory_order_relaxed))) return false;
    bool has_bulk = SYNCQ_READ_ONCE(p->has_bulk) != 0; /* one load each: bpos is masked, then used */
    uint32_t bpos = SYNCQ_READ_ONCE(p->bulk_pos);
    /* relaxed: published by the release CAS below (0 while FREE,
     * am_segment.h); nobody else writes it while the dead claim stands */
    atomic_store_explicit(&p->owner_start, 0u, memory_order_relaxed);
    /* release: pairs with the next claimer's acquire of FREE */
    if (!atomic_compare_exchange_strong_explicit(&p->state, &s, freed, memory_order_release, memory_order_relaxed))
      return false;
    if (has_bulk) { /* its block, if the dead sender still holds it */
      am_bulk_slot *bs = am_slot_at(v, bpos);
      /* relaxed: published by the release CAS below; where that CAS fails
       * (the block is no longer the dead sender's), a 0 in a live claim's
       * word only has it judged by its pid alone */
      atomic_store_explicit(&bs->owner_start, 0u, memory_order_relaxed);
      uint64_t bs_expect = am_state(bpos, pid, AM_CLAIMED);
      /* release: as above */
      if (!atomic_compare_exchange_strong_explicit(&bs->state, &bs_expect, am_state(bpos + v->blocks, 0, AM_FREE),
                                                   memory_order_release, memory_order_relaxed)) {
        /* or READY: it died after copying, before committing its packet
         * (found by the crash matrix: the block leaked for good) */
        bs_expect = am_state(bpos, pid, AM_READY);
        (void)atomic_compare_exchange_strong_explicit(&bs->state, &bs_expect, am_state(bpos + v->blocks, 0, AM_FREE),
                                                      memory_order_release, memory_order_relaxed); /* as above */
      }
    }
    atomic_fetch_add_explicit(&h->lost, 1u, memory_order_relaxed); /* a statistic */
  }
  ep->stuck_since[qi] = 0;
  ep->unclaimed_since[qi] = 0;
  return true;
}

/* ---------------------------------------------------------------- a poll that never returned
 *
 * A handler that leaves its poll without returning (longjmp or
 * siglongjmp to a point before the poll) leaves the queue it was called
 * from taken: polling[qi] keeps its thread's mark, and every poll skips
 * the queue as one under way. Its own thread can tell: a poll still under
 * way on its stack lies above (is an ancestor of) every call its handlers
 * make, so a poll of the queue from a frame that is not below the frame
 * of the poll holding it (taken_frame, stored before each handler's
 * call: a poll that calls no handler runs none of the program's code and
 * cannot be left) cannot be nested in it: that frame was left for good,
 * and the thread takes the queue back (am_take_back), finishing the
 * message whose handler left (am_finish_abandoned). Stacks grow down on
 * every target the project builds for. Only on the thread's
 * own stack (pthread_getattr_np, read once per thread when first needed):
 * a postoffice fiber runs on a stack of its own, where two addresses say
 * nothing about nesting, so another fiber of the thread that finds the
 * mark skips the queue as before. A poll made again from a frame deeper
 * than the one left cannot tell the left poll from one up its stack and
 * skips the queue too; the next poll from that depth or above takes it
 * back. A thread that exits holding a queue leaves its mark for good (no
 * cheap test tells whether a pthread_t still runs): syncq/am.h says what
 * a handler must not do. */

/* The caller's stack pointer: where its frame ends, and below it every
 * call it makes. The register itself where we know its name (a frame
 * address would cost the poll a frame pointer, docs/reliability.md). */
static inline __attribute__((always_inline)) uintptr_t am_frame(void) {
#if defined(__GNUC__) && defined(__x86_64__)
  uintptr_t sp;
  __asm__("mov %%rsp, %0" : "=r"(sp));
  return sp;
#elif defined(__GNUC__) && defined(__aarch64__)
  uintptr_t sp;
  __asm__("mov %0, sp" : "=r"(sp));
  return sp;
#elif defined(__GNUC__)
  return (uintptr_t)__builtin_frame_address(0);
#else
  return 0; /* no frame address: no take-back (0 is on no stack) */
#endif
}

static _Thread_local bool am_stack_read;                 /* am_stack_lo and am_stack_hi are set */
static _Thread_local uintptr_t am_stack_lo, am_stack_hi; /* this thread's own stack; both 0: unknown */

/* Address a lies on the calling thread's own stack (not a fiber's). */
static bool am_own_stack(uintptr_t a) {
  if (!am_stack_read) {
    am_stack_read = true;
    pthread_attr_t at;
    if (pthread_getattr_np(pthread_self(), &at) == 0) {
      void *lo = NULL;
      size_t size = 0;
      if (pthread_attr_getstack(&at, &lo, &size) == 0) {
        am_stack_lo = (uintptr_t)lo;
        am_stack_hi = am_stack_lo + size;
      }
      (void)pthread_attr_destroy(&at);
    }
  }
  return a >= am_stack_lo && a < am_stack_hi;
}

/* A queue taken back (am_take_back): the poll that left it was in the
 * handler of its head packet (a poll runs no other code of the program
 * while it holds the queue, and moves the head only once the handler
 * has returned), which is still READY for the head. Free that packet and
 * its block as the handler's return would have, and step the head over
 * it: it is not run again (a handler that left by longjmp would most
 * likely leave again). Counted as delivered when a handler is registered
 * for its index, as a return would have counted it. */
static void am_finish_abandoned(syncq_am_endpoint *ep, int qi) {
  am_qview v; /* from the validated geometry, as the poll's */
  am_qview_of(ep->base, &ep->geo, qi, &v);
  /* relaxed: only this thread has written the head since its mark went in */
  uint32_t hd = atomic_load_explicit(&v.q->head, memory_order_relaxed);
  am_packet *p = am_pkt_at(&v, hd);
  /* acquire: as am_poll_queue's load of the head packet (pairs with the
   * sender's release store of READY) */
  uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
  unsigned type = am_state_type(s);
  if (am_state_pos(s) != hd || (type != AM_READY && type != AM_READY_BULK)) return; /* overwritten: poll on */
  unsigned idx = SYNCQ_READ_ONCE(p->handler); /* one load: checked, then an index */
  if (idx < SYNCQ_AM_MAX_HANDLERS && ep->handlers[idx].fn != NULL)
    atomic_fetch_add_explicit(&((am_header *)ep->base)->delivered, 1u, memory_order_relaxed); /* a statistic */
  am_free_delivered(&v, p, hd, type == AM_READY_BULK, SYNCQ_READ_ONCE(p->bulk_pos));
  /* relaxed: as am_poll_queue's store of the head */
  atomic_store_explicit(&v.q->head, hd + 1u, memory_order_relaxed);
}

/* The caller's own mark is on queue qi: take the queue back if the poll
 * that took it is no longer on this stack (see above). Out of line: only
 * a nested poll (or one after a longjmp) comes here. */
__attribute__((noinline)) static bool am_take_back(syncq_am_endpoint *ep, int qi, uintptr_t frame) {
  uintptr_t taken = ep->taken_frame[qi]; /* written by this thread, before the handler it left */
  if (frame < taken || !am_own_stack(taken) || !am_own_stack(frame)) return false; /* nested, or cannot tell */
  am_finish_abandoned(ep, qi);
  return true;
}

/* Take queue qi of ep for one poll from the frame `frame` (or take it
 * back from a poll of this thread's that a handler left, see above):
 * false when a poll of it is under way, further up this thread's stack
 * (a handler that polls: 000's handlers must not re-enter the queue they
 * were called from) or on another thread of this process (a second
 * polling thread, a send stalled on a full queue). One uncontended CAS
 * per queue per poll; a queue found busy costs a load (a stalled sender
 * retries every few microseconds and must not pull the line from the
 * poller with a failing CAS each time). */
static inline bool am_queue_take(syncq_am_endpoint *ep, int qi, uintptr_t frame) {
  /* relaxed: a hint where it is another thread's or 0 (the CAS below
   * decides); our own mark was stored by this thread, and no other
   * thread writes the word while it is there */
  uintptr_t mark = atomic_load_explicit(&ep->polling[qi], memory_order_relaxed);
  if (mark != 0u) return mark == am_poller_self() && am_take_back(ep, qi, frame);
  uintptr_t idle = 0;
  /* acquire: pairs with the release store in am_poll_queue of the poll
   * before ours, on whatever thread (its head store, its recovery state
   * and its handlers' writes happen before our reads); relaxed on
   * failure: we touch nothing of the queue then */
  return atomic_compare_exchange_strong_explicit(&ep->polling[qi], &idle, am_poller_self(), memory_order_acquire,
                                                 memory_order_relaxed);
}

/* Poll one queue of ep; budget messages at most. */
static unsigned am_poll_queue(syncq_am_endpoint *ep, int qi, unsigned budget, bool paused) {
  const uintptr_t frame = am_frame();
  if (!am_queue_take(ep, qi, frame)) return 0; /* polled further up this stack or on another thread */
  /* tests: hold a poll with its queue taken while another thread polls */
  SYNCQ_RACE_POINT(qi == AM_Q_REQUEST ? "am.poll.taken.request" : "am.poll.taken.reply");
  am_qview v; /* from the geometry validated at creation, never the segment's copy */
  am_qview_of(ep->base, &ep->geo, qi, &v);
  am_queue *q = v.q;
  /* relaxed: only this process writes the head, and the last poll's store
   * is ordered before this load by polling[qi] (am_queue_take) */
  uint32_t hd = atomic_load_explicit(&q->head, memory_order_relaxed);
  unsigned done = 0;
  bool recovering = false;
  while (done < budget) {
    am_packet *p = am_pkt_at(&v, hd);
    /* acquire: pairs with the sender's release store of READY */
    uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
    unsigned type = am_state_type(s);
    if (am_state_pos(s) == hd && (type == AM_READY || type == AM_READY_BULK)) {
      SYNCQ_RACE_POINT("am.poll.ready"); /* tests: a poll that found its head packet ready */
      ep->stuck_since[qi] = 0;
      ep->taken_frame[qi] = frame; /* before the handler's call: am_take_back */
      deliver(ep, qi, &v, p, s, hd);
      done++;
      recovering = false;
    } else if (ep->claim->assigns && am_state_pos(s) == hd + v.packets && type <= AM_READY_BULK) {
      /* hd was skipped ahead of the head (skip_abandoned_run); the slot
       * already serves the next lap. Exactly one lap: an overwritten head
       * or state cannot walk the head on for more than the n slots. */
    } else if (unstick(ep, qi, &v, p, s, hd, recovering, paused)) {
      recovering = true;
    } else {
      break;
    }
    hd++;
    /* relaxed: read by this process only (diagnostics elsewhere), and by
     * the next poll after polling[qi]'s release and acquire */
    atomic_store_explicit(&q->head, hd, memory_order_relaxed);
  }
  /* release: pairs with the acquire CAS in am_queue_take of the next poll
   * of this queue, on whatever thread */
  atomic_store_explicit(&ep->polling[qi], 0u, memory_order_release);
  return done;
}

/* syncq_am_poll with a transport attached: the node-local queues and the
 * transport take the first go in turn, one call each. Local queues first
 * on every call starved the transport of a rank whose local traffic
 * filled each budget: it received nothing from its MPI peers and sent
 * them no heartbeat, so they found it dead. The budget is still shared:
 * whichever goes second gets what the first left. Alternating per call
 * (rather than reserving a share) keeps a budget of 1 meaningful and
 * holds both ways, also against a transport that fills every budget.
 * Every call flips the turn, nested ones included (a handler that polls),
 * so of any two calls entered one after the other, one polls the
 * transport first. Not inlined: the poll of an endpoint without a
 * transport keeps its former code (no register more to save). */
__attribute__((noinline)) static int am_poll_shared(syncq_am_endpoint *ep, unsigned budget, unsigned *handled,
                                                    bool paused) {
  const am_transport *tp = ep->tp;
  bool tp_first = ep->tp_first;
  ep->tp_first = !tp_first;
  unsigned n = tp_first ? tp->poll(tp->ctx, budget) : 0;
  if (n < budget) n += am_poll_queue(ep, AM_Q_REPLY, budget - n, paused);
  if (n < budget) n += am_poll_queue(ep, AM_Q_REQUEST, budget - n, paused);
  if (n < budget && !tp_first) n += tp->poll(tp->ctx, budget - n);
  if (handled) *handled = n;
  return SYNCQ_OK;
}

/* syncq_am_poll; `paused`: the caller paused since its last poll (unstick). */
static int am_poll_ep(syncq_am_endpoint *ep, unsigned budget, unsigned *handled, bool paused) {
  if (ep == NULL || budget == 0 || !own(ep)) return SYNCQ_EINVAL;
  /* Every offset and size the poll follows comes from the header and the
   * queues' fixed fields: refuse a segment whose copy of them was
   * overwritten (by a crashed or hostile process) since creation. */
  if (!am_geometry_same(ep->base, ep->size, &ep->geo)) return SYNCQ_EINVAL;
  if (ep->tp != NULL) return am_poll_shared(ep, budget, handled, paused);
  unsigned n = am_poll_queue(ep, AM_Q_REPLY, budget, paused);
  if (n < budget) n += am_poll_queue(ep, AM_Q_REQUEST, budget - n, paused);
  if (handled) *handled = n;
  return SYNCQ_OK;
}

int syncq_am_poll(syncq_am_endpoint *ep, unsigned budget, unsigned *handled) {
  return am_poll_ep(ep, budget, handled, false);
}

int syncq_am_wait(syncq_am_endpoint *ep, unsigned budget, uint64_t timeout_ns, unsigned *handled) {
  if (handled) *handled = 0;
  uint64_t start = 0;
  bool paused = false; /* the last turn yielded or slept: time passed that the poll's pace cannot see */
  for (;;) {
    unsigned n = 0;
    int r = am_poll_ep(ep, budget, &n, paused); /* checks ep, budget, owner and segment each time */
    if (r != SYNCQ_OK) return r;
    if (n > 0) {
      if (handled) *handled = n;
      return SYNCQ_OK;
    }
    uint64_t now = syncq_now_ns();
    if (start == 0) start = now;
    uint64_t waited = now - start;
    if (waited >= timeout_ns) return SYNCQ_ETIMEDOUT;
    uint64_t left = timeout_ns - waited;
    /* with a transport attached, its messages ring no bell: keep yielding */
    if (waited >= ep->sleep_after_ns && ep->tp == NULL &&
        am_sleep(ep, left < ep->sleep_slice_ns ? left : ep->sleep_slice_ns)) {
      paused = true;
      continue;
    }
    paused = waited >= SYNCQ_AM_WAIT_SPIN_NS;
    if (!paused) {
      syncq_pr_relax();
    } else {
      SYNCQ_RACE_POINT("am.wait.yield"); /* tests: count the yields */
      sched_yield();                     /* the sender of the head packet may be waiting for this processor */
    }
  }
}
