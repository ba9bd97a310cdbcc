/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/am.h — shared-memory active messages between processes (000,
 * Lumetta & Culler).
 *
 * An endpoint owns a queue block in a named POSIX shared-memory segment:
 * a request queue and a reply queue, each a packet queue (one cache line
 * per packet: state, handler index, up to SYNCQ_AM_MAX_ARGS 32-bit words,
 * bulk position) and a shorter bulk queue of cache-aligned blocks of up to
 * SYNCQ_AM_BULK_MAX bytes. Tail fields are written only by senders, head
 * fields only by the receiver (000 §2, Figure 1). The segment holds
 * offsets and counters, never pointers, so every process may map it at a
 * different address.
 *
 * Use, in the shape of GASNet-EX:
 *   - the receiving process creates its endpoint by name
 *     (syncq_am_create), registers handlers by index (syncq_am_register)
 *     and polls (syncq_am_poll) or waits for messages (syncq_am_wait);
 *   - a sending process connects to an endpoint by name (syncq_am_connect),
 *     optionally naming its own endpoint so that handlers can reply, and
 *     sends short (syncq_am_request) or bulk (syncq_am_request_bulk)
 *     requests; a request handler may send at most one reply
 *     (syncq_am_reply / syncq_am_reply_bulk);
 *   - a child made by fork() inherits the parent's endpoints and peers and
 *     may send through them; only the creating process polls an endpoint.
 *
 * The algorithm that arbitrates concurrent senders (the "claim") is chosen
 * per endpoint at creation: test-and-set, TTAS, ticket, Anderson, a robust
 * process-shared POSIX mutex, or 000's lock-free claim (Figure 3). A sender
 * that finds the queue full backs off and polls its own endpoint, so cyclic
 * requests cannot deadlock, or returns SYNCQ_FULL with SYNCQ_AM_NOWAIT.
 *
 * More processes than processors: a sender waiting on a full queue and a
 * receiver in syncq_am_wait spin for a few microseconds, then yield the
 * processor at every further try, so the process they wait for (the
 * receiver, or a sender preempted between its claim and its commit) gets
 * to run. A receiver that loops on syncq_am_poll instead holds its
 * processor for a whole time slice whenever the message at the head of
 * its queue belongs to a sender waiting for that processor. A receiver
 * whose queues stay empty sleeps in syncq_am_wait (a futex in the
 * segment, which every send rings when the receiver sleeps).
 *
 * Robustness: a claimed packet records its owner (pid and process start
 * time); a claim whose owner has died is reclaimed by the receiver after
 * the endpoint's stale-claim timeout and counted as lost. A message for an
 * unregistered handler goes to the default handler, which counts it (and
 * calls the user's default handler if one is set). A sender asks whether
 * the endpoint behind a peer lives with syncq_am_peer_check (one /proc
 * read), a server asks after its clients with syncq_am_sender_check.
 * Nothing here aborts or prints.
 *
 * A hostile or corrupted segment: every process computes addresses from
 * the layout it validated itself (the creator at creation, a sender at
 * connect), never from what the segment says later; a send or poll that
 * finds the segment's fixed fields changed, or a slot or lock word in a
 * state no process writes, returns SYNCQ_EINVAL. A claim lock that never
 * frees (its holder stopped, or a live foreign pid written into it) costs
 * a NOWAIT send nothing (SYNCQ_EBUSY) and a plain send at most
 * the bound of SYNCQ_AM_LOCK_WAIT_STALE (SYNCQ_ETIMEDOUT).
 *
 * Not async-signal-safe (the POSIX claim and shm_open are not).
 */
#ifndef SYNCQ_AM_H
#define SYNCQ_AM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCQ_AM_MAX_ARGS 8u           /* 32-bit words per message (GASNet's gex_AM_Arg_t) */
#define SYNCQ_AM_BULK_MAX 8192u        /* bytes of one bulk block (000 §2: 8 kB) */
#define SYNCQ_AM_MAX_HANDLERS 256u     /* handler indexes 0..255 */
#define SYNCQ_AM_NAME_MAX 48u          /* endpoint name, without the leading '/', NUL excluded */
#define SYNCQ_AM_MAX_PEERS 64u         /* distinct sender endpoints that can be replied to */
#define SYNCQ_AM_MAX_PACKETS 65536u    /* packets per queue at most */
#define SYNCQ_AM_MAX_BULK_BLOCKS 1024u /* bulk blocks per queue at most */

/* Defaults of a zero config: 000's sizes (a packet queue much longer than
 * the bulk queue). */
#define SYNCQ_AM_DEFAULT_PACKETS 256u
#define SYNCQ_AM_DEFAULT_BULK_BLOCKS 16u
#define SYNCQ_AM_DEFAULT_STALE_NS 20000000ull /* 20 ms before a dead owner's claim is taken back */
/* A plain (not NOWAIT) send waits on a claim lock that shows no progress
 * (its holder is alive but never lets go: stopped by SIGSTOP or a
 * debugger, or a foreign process named in an overwritten lock word) for
 * SYNCQ_AM_LOCK_WAIT_STALE stale intervals (stale_claim_ns), and at least
 * SYNCQ_AM_LOCK_WAIT_MIN_NS (a live holder preempted on a loaded machine
 * is not one that never lets go), then returns SYNCQ_ETIMEDOUT. With the
 * default interval: 1 s. */
#define SYNCQ_AM_LOCK_WAIT_STALE 16u
#define SYNCQ_AM_LOCK_WAIT_MIN_NS 1000000000ull

/* The claim algorithms (000 §3). */
typedef enum syncq_am_claim {
  SYNCQ_AM_CLAIM_TAS = 0,  /* "tas": Figure 2 under syncq/lock/tas.h */
  SYNCQ_AM_CLAIM_TTAS,     /* "ttas": Figure 2 under the TTAS lock */
  SYNCQ_AM_CLAIM_TICKET,   /* "ticket": Figure 2 under syncq/lock/ticket.h */
  SYNCQ_AM_CLAIM_ANDERSON, /* "anderson": Figure 2 under syncq/lock/anderson.h */
  SYNCQ_AM_CLAIM_POSIX,    /* "posix-mutex": Figure 2 under a robust process-shared pthread mutex */
  SYNCQ_AM_CLAIM_LOCKFREE, /* "lock-free": Figure 3, CAS to assign, CAS to claim */
  SYNCQ_AM_CLAIM_COUNT     /* number of algorithms, not one */
} syncq_am_claim;

/* The registry name of a claim ("tas", ..., "lock-free"); NULL if out of
 * range.
 * Thread safety: any thread, any time, from a signal handler too (a
 * constant table).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_am_claim_name(int claim);
/* The claim of a name, into *out.
 * SYNCQ_EINVAL: name or out is NULL.
 * SYNCQ_ENOENT: name is no claim's ("tas", "ttas", "ticket", "anderson",
 * "posix-mutex", "lock-free").
 * Thread safety: any thread, any time, from a signal handler too (string
 * compares; it writes only *out).
 * Progress: wait-free. */
SYNCQ_API int syncq_am_claim_find(const char *name, syncq_am_claim *out);

/* Options of an endpoint at creation; NULL means all defaults, and a zero
 * field means its default. */
typedef struct syncq_am_config {
  int claim;               /* a syncq_am_claim (0: test-and-set) */
  uint32_t packets;        /* per queue, a power of two in 2..SYNCQ_AM_MAX_PACKETS */
  uint32_t bulk_blocks;    /* per queue, a power of two in 1..SYNCQ_AM_MAX_BULK_BLOCKS */
  uint32_t bulk_size;      /* bytes per block, a multiple of 64 up to SYNCQ_AM_BULK_MAX */
  uint64_t stale_claim_ns; /* how long a dead owner's claim may block the head */
} syncq_am_config;

/* An endpoint's sizes, as created (syncq_am_limits). */
typedef struct syncq_am_limits {
  int claim;
  uint32_t packets, bulk_blocks, bulk_size;
  uint32_t max_args, max_handlers, max_peers;
  uint64_t stale_claim_ns;
  size_t segment_bytes;
} syncq_am_limits;

/* Counters of an endpoint (in the segment: every process sees them). */
typedef struct syncq_am_counters {
  uint64_t delivered;      /* messages handled by a registered handler */
  uint64_t unhandled;      /* messages for an unregistered handler index */
  uint32_t last_unhandled; /* the index of the last such message */
  uint64_t lost;           /* claims taken back from dead owners (messages lost) */
  uint64_t skipped;        /* lock-free: assigned packets never claimed, skipped after the timeout */
} syncq_am_counters;

typedef struct syncq_am_endpoint syncq_am_endpoint; /* an endpoint this process created */
typedef struct syncq_am_peer syncq_am_peer;         /* a connection to an endpoint, for sending */
typedef struct syncq_am_token syncq_am_token;       /* the message a handler runs for */

/* A handler: args[0..nargs) are the message's words; data/len the bulk
 * block (NULL/0 for a short message), valid only during the call.
 * A handler returns to the poll that called it. While it runs, the queue
 * it was called from (requests for a request handler, replies for a
 * reply handler) is taken by its thread, and every other poll of that
 * queue skips it (syncq_am_poll).
 *   - Left by longjmp or siglongjmp to a point before the poll: the
 *     queue stays taken until the same thread polls the endpoint again
 *     from a stack frame no deeper than the poll it left (a loop that
 *     calls setjmp, then syncq_am_poll or syncq_am_wait, does). That
 *     poll takes the queue back and frees the message whose handler
 *     left, without running it again (counted in `delivered` if a
 *     handler was registered for it), then delivers the next ones.
 *     Until then, polls on other threads, and deeper ones on this
 *     thread, skip the queue. On a stack other than the thread's own (a
 *     postoffice fiber's) nothing is taken back: the queue stays taken.
 *   - Suspended (a switch to another context) only onto another stack:
 *     a context that runs on the thread's own stack where the suspended
 *     poll was (a coroutine that shares the thread's stack) and polls
 *     the endpoint would take the queue from under the suspended poll.
 *   - Never returning at all (its thread exits: pthread_exit, a
 *     cancellation, or it blocks for ever): the queue stays taken for
 *     good. Nothing tells a thread that is gone from one that is
 *     polling, so every poll of the endpoint skips that queue, its
 *     messages wait there, and once it is full sends to it find it full
 *     (SYNCQ_FULL with SYNCQ_AM_NOWAIT; a plain send waits). A program
 *     can tell: `delivered` (syncq_am_counters_of) stops growing while
 *     its sends report SYNCQ_FULL. The other queue is still delivered. */
typedef void (*syncq_am_handler)(syncq_am_token *token, const uint32_t *args, unsigned nargs, const void *data,
                                 size_t len, void *ctx);

/* Flags of the send calls. */
#define SYNCQ_AM_NOWAIT 1u /* never wait: SYNCQ_FULL when the queue is full, SYNCQ_EBUSY when the claim lock is held */

/* Create the endpoint `name` (1..SYNCQ_AM_NAME_MAX of [A-Za-z0-9._-]).
 * SYNCQ_EINVAL: NULL out or name, malformed name, bad config (a claim out
 * of range, packets not a power of two in 2..SYNCQ_AM_MAX_PACKETS,
 * bulk_blocks not a power of two up to SYNCQ_AM_MAX_BULK_BLOCKS,
 * bulk_size not a multiple of 64 up to SYNCQ_AM_BULK_MAX).
 * SYNCQ_EEXIST: a segment of that name exists (see syncq_am_unlink).
 * SYNCQ_ESYS: shm_open, ftruncate or mmap failed, or the "posix-mutex"
 * claim's mutex could not be made; errno holds why.
 * SYNCQ_ENOMEM: out of memory, or /dev/shm cannot hold the segment (found
 * here, where the segment is faulted in: see Memory).
 * SYNCQ_ENOTSUP: the "posix-mutex" claim needs a robust process-shared
 * mutex, which this system does not support.
 * Thread safety: any thread of any process (each endpoint name can be
 * created once: SYNCQ_EEXIST otherwise). Not from a signal handler
 * (syncq/am.h is not async-signal-safe).
 * Progress: not a concurrent operation on the new endpoint: it makes system
 * calls (shm_open, ftruncate, mmap) and allocates.
 * Memory: the whole segment (its packets and bulk blocks) is faulted in
 * here (madvise MADV_POPULATE_WRITE, Linux 5.14 and later), so the first
 * sends and polls take no page fault and a full /dev/shm is
 * SYNCQ_ENOMEM here rather than a SIGBUS at a page's first use; connect
 * does the same for its own mapping. On older kernels the pages are
 * faulted in at their first use.
 * Example: A name of this process's own (its pid in it), so that two
 * programs, or two copies of one, never meet at one name:
 *   `char server[SYNCQ_AM_NAME_MAX + 1];`
 *   `snprintf(server, sizeof server, "syncq-example-%ld-server", (long)getpid());`
 *   `syncq_am_endpoint *ep; int r = syncq_am_create(server, NULL, &ep);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "%s: %s\n", server, syncq_strerror(r));`
 *   `else { work(); syncq_am_destroy(ep); }` */
SYNCQ_API int syncq_am_create(const char *name, const syncq_am_config *cfg, syncq_am_endpoint **out);
/* Orderly shutdown: mark the endpoint closed (senders' calls then find it
 * dead: syncq_am_request),
 * unmap and remove the segment, free the handle. Only in the creating
 * process.
 * SYNCQ_EINVAL: ep is NULL, or this process did not create it (a forked
 * child); nothing is done.
 * SYNCQ_ESYS: shm_unlink failed other than for a segment already gone
 * (errno holds why); the endpoint is closed, unmapped and freed all the
 * same, and the segment's name may remain (syncq_am_unlink removes it).
 * Thread safety: in the creating process, by one thread, once no thread of
 * it polls the endpoint, runs one of its handlers or sends through a peer
 * connected with it as self (disconnect those first); other processes'
 * senders may still be sending: they get SYNCQ_EDEAD. Not from a signal
 * handler (syncq/am.h is not async-signal-safe).
 * Progress: not a concurrent operation on the handle: system calls (munmap,
 * shm_unlink); it never waits for another process. */
SYNCQ_API int syncq_am_destroy(syncq_am_endpoint *ep);
/* Remove the stale segment `name` left by a crashed run. Any segment of
 * that name but a live endpoint (not an endpoint, half-made, shut down,
 * or its creator dead) is removed.
 * SYNCQ_ENOENT: there is no segment of that name.
 * SYNCQ_EBUSY: it is an endpoint whose creator is alive; it is left.
 * SYNCQ_EINVAL: name is NULL or malformed.
 * SYNCQ_ESYS: shm_open or shm_unlink failed otherwise; errno holds why.
 * Thread safety: any thread of any process; meant for a name whose creator
 * has died (SYNCQ_EBUSY while it lives). Not from a signal handler
 * (syncq/am.h is not async-signal-safe).
 * Progress: system calls only; it never waits for another process. */
SYNCQ_API int syncq_am_unlink(const char *name);

/* Register handler `index` (< SYNCQ_AM_MAX_HANDLERS) under `name` (may be
 * NULL); fn NULL unregisters. Handlers are per process.
 * SYNCQ_EINVAL: ep is NULL, index is SYNCQ_AM_MAX_HANDLERS or more, or
 * name is longer than SYNCQ_AM_NAME_MAX; nothing is registered.
 * Thread safety: in the creating process, before any thread polls the
 * endpoint or sends through a peer connected with it as self, or from a
 * handler while no other thread does: the handler table is plain memory
 * that a poll reads without synchronisation. Handlers are per process. Not from a signal handler (syncq/am.h is not
 * async-signal-safe).
 * Progress: wait-free (a few stores).
 * Example: `syncq_am_register(ep, 1, "ping", on_ping, NULL);` */
SYNCQ_API int syncq_am_register(syncq_am_endpoint *ep, unsigned index, const char *name, syncq_am_handler fn,
                                void *ctx);
/* The name a handler was registered with (NULL if none or bad input).
 * Thread safety: in the creating process, before any thread polls the
 * endpoint or sends through a peer connected with it as self, or from a
 * handler while no other thread does: the handler table is plain memory
 * that a poll reads without synchronisation. Handlers are per process. Not from a signal handler (syncq/am.h is not
 * async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_am_handler_name(const syncq_am_endpoint *ep, unsigned index);
/* Set the handler called (after counting) for messages to unregistered
 * indexes; fn NULL: count only.
 * SYNCQ_EINVAL: ep is NULL.
 * Thread safety: in the creating process, before any thread polls the
 * endpoint or sends through a peer connected with it as self, or from a
 * handler while no other thread does: the handler table is plain memory
 * that a poll reads without synchronisation. Handlers are per process. Not from a signal handler (syncq/am.h is not
 * async-signal-safe).
 * Progress: wait-free (two stores). */
SYNCQ_API int syncq_am_set_default_handler(syncq_am_endpoint *ep, syncq_am_handler fn, void *ctx);

/* Run handlers for at most `budget` ready messages (replies first, then
 * requests); *handled (may be NULL) gets how many. On an endpoint with a
 * transport attached (syncq/am_mpi.h), the transport's messages share the
 * budget: every second call runs them first and the queues with what is
 * left, the others run the queues first, so neither kind of traffic can
 * keep the other from its turn. Also takes back stale
 * claims of dead senders at the queue heads: a claim whose sender is dead
 * is taken back within stale_claim_ns, plus a 16th of it and one gap
 * between polls, of the first poll that found it at the head; when the
 * polls slow down meanwhile, at most 64 of the slow polls later (the poll
 * reads the clock at a pace that follows its rate: at every poll when
 * they come a 16th of the interval apart or more, at every 64th in a
 * loop; syncq_am_wait's polls after a yield or sleep read it anyway). An
 * empty lock-free queue looks for a position assigned to a sender that
 * died before claiming it at the same kind of pace (every poll when they
 * come a 16th of the interval apart or more, every 1,024th in a loop) and
 * skips it two intervals after the first poll that found it, plus a 16th
 * of an interval and one gap between polls; when the polls slow down
 * meanwhile (a loop of empty polls, then polls far apart), at most 1,024
 * of the slow polls later.
 * Returns SYNCQ_OK, even with nothing to do. A queue that another poll is
 * in, further up this thread's stack (a handler that
 * polls) or on another thread of the process, is skipped: this poll
 * handles nothing from it, whatever it holds, and goes on to the other
 * queue (it never waits for the other poll). A queue still taken by a
 * poll of this thread that a handler left by longjmp is taken back
 * (syncq_am_handler says when).
 * SYNCQ_EINVAL: ep is NULL, budget is 0, this process did not create ep,
 * or the segment's fixed fields (header and queue offsets) were
 * overwritten since creation: nothing is followed then.
 * Thread safety: only in the creating process (SYNCQ_EINVAL elsewhere), by
 * any of its threads at once: each queue is polled by one thread at a time
 * (taken with one CAS per queue per poll, given back with a release
 * store), whether the others call syncq_am_poll or syncq_am_wait or are
 * sends stalled on a full queue through peers connected with this
 * endpoint as self, so every message is delivered once. The handlers of
 * one queue run one at a time, each seeing the writes of those before it;
 * a request handler and a reply handler may run at once on two threads.
 * A thread that polls in a loop may find a queue busy for a while and
 * handle nothing from it; what is left there goes to whichever poll
 * takes the queue next. An endpoint with a transport attached
 * (syncq/am_mpi.h) keeps one polling thread, the one its threading rule
 * names: the transport's poll is not guarded between threads, and sends
 * through peers connected with that endpoint as self belong to that
 * thread too. Senders of any process and thread run concurrently with
 * the polls. Not from a signal handler (syncq/am.h is not async-signal-safe). From a
 * postoffice fiber: yes (it never waits for a sender or another poll).
 * Progress: it never waits for a sender: a head packet that is not ready
 * ends the poll; it runs at most budget handlers, whose own time it adds;
 * taking back a dead sender's claim is bounded by the queue's length.
 * Example: `unsigned n; while (running) syncq_am_poll(ep, 64, &n);` */
SYNCQ_API int syncq_am_poll(syncq_am_endpoint *ep, unsigned budget, unsigned *handled);

/* syncq_am_wait's timeout_ns for no limit. */
#define SYNCQ_AM_WAIT_FOREVER UINT64_MAX
/* How long syncq_am_wait polls with pauses only before it yields the
 * processor between polls. */
#define SYNCQ_AM_WAIT_SPIN_NS 4000u
/* How long syncq_am_wait polls (pausing, then yielding) before it sleeps
 * in the kernel between polls. */
#define SYNCQ_AM_WAIT_YIELD_NS 50000u
/* The longest one sleep of syncq_am_wait lasts before it polls again: the
 * bound on what a lost wake-up costs (10 ms). */
#define SYNCQ_AM_WAIT_SLEEP_SLICE_NS 10000000u

/* Poll as syncq_am_poll does until it has handled at least one message or
 * timeout_ns has passed (0: poll once; SYNCQ_AM_WAIT_FOREVER: no limit).
 * Between polls that handle nothing it pauses (a few nanoseconds) for the
 * first SYNCQ_AM_WAIT_SPIN_NS, then yields the processor (sched_yield) at
 * every poll: on a machine with more processes than processors the sender
 * whose message is at the head of the queue may be waiting for this
 * processor. Once it has waited SYNCQ_AM_WAIT_YIELD_NS it sleeps in the
 * kernel between polls: a futex wait on a word of the endpoint's segment
 * (a shared futex: senders are other processes), so an idle receiver uses
 * no processor.
 * When it sleeps: only when both queues are empty, with nothing assigned
 * beyond what was delivered (the tail is the head and the head packet is
 * free). While a sender is between its claim and its commit, while a dead
 * sender's claim or an abandoned lock-free position waits at the head to
 * be taken back, or while its segment's tail was overwritten, it keeps
 * yielding instead. It never sleeps on an endpoint with a transport
 * attached (syncq/am_mpi.h): messages through the transport wake no one,
 * so it yields at every poll there as before.
 * The wake-up: a sender (a request, or a reply to this endpoint), after
 * committing its message, looks (after a full fence) at the count of the
 * receiver's sleeping threads in the segment and, if it is nonzero,
 * bumps the futex word and wakes every thread waiting on it; a waiting
 * thread adds itself to the count, fences, and looks at its queues once
 * more before it sleeps, and takes itself off the count when it wakes
 * (Dekker's protocol), so a message committed while it goes to sleep is
 * seen by one side or the other.
 * The bound on a lost wake-up: each sleep lasts at most
 * SYNCQ_AM_WAIT_SLEEP_SLICE_NS (10 ms), then the wait polls again. A
 * wake-up is lost only when another process overwrites the doorbell words
 * or a sender dies between its commit and its wake; either delays the
 * wait by at most one slice. A sender that dies holding a claim rings
 * nothing either: the wait sees the claim after its slice, stays awake
 * and takes it back as syncq_am_poll does (stale_claim_ns). Any value in those words is safe: a sender
 * takes any nonzero count for "maybe asleep" and wakes, and the receiver
 * keeps its own count (the segment's is a copy it rewrites at the start
 * and end of every sleep, never reads back).
 * When the receiving process dies in its sleep, the segment's count of
 * sleepers stays nonzero: each send that commits to the dead endpoint
 * then makes a futex wake-up system call no one needs, until its queue
 * is full (at most its packets' number of sends; after that a send
 * commits nothing and rings nothing, and answers that the endpoint is
 * dead once it finds the creator gone: at once with SYNCQ_AM_NOWAIT). The
 * same count written by another process costs every send that wake-up
 * until this endpoint's next sleep starts or ends and rewrites it.
 * It cannot tell that the senders it waits for are gone: it does not know
 * who would send (any process may connect and send, and a peer this
 * process sends through says nothing of who replies), so when the only
 * process that would send is dead (a client waiting for the reply of a
 * server that was killed) it runs to its timeout and answers
 * SYNCQ_ETIMEDOUT, or with SYNCQ_AM_WAIT_FOREVER waits for ever (asleep,
 * a slice at a time). Where senders may exit or die, give a timeout and,
 * when it runs out, ask syncq_am_peer_check of the peer you wait on (a
 * server: syncq_am_sender_check of its clients).
 * From a handler of ep, the queue being polled further up is skipped as in
 * syncq_am_poll: a nested wait for a message that only that queue can
 * bring (a request handler waiting for a request) lasts its whole timeout
 * (for ever with SYNCQ_AM_WAIT_FOREVER), asleep for most of it (a message
 * to the skipped queue wakes it, and it sleeps again); a request handler
 * may wait for a reply, and sleeps until it comes.
 * *handled (may be NULL) gets the number handled by the poll that ended
 * the wait (at most budget). Returns SYNCQ_OK when that is at least one.
 * SYNCQ_ETIMEDOUT: nothing arrived within timeout_ns (*handled 0).
 * SYNCQ_EINVAL: as syncq_am_poll's: ep is NULL, budget is 0, this process
 * did not create ep, or the segment was overwritten (*handled 0).
 * Thread safety: as syncq_am_poll: any thread of the creating process,
 * several at once (each message is delivered once). A queue that another
 * thread is polling (syncq_am_poll, a stalled send through a peer with
 * this endpoint as self) is looked at as any other: while it holds a
 * message the wait yields instead of sleeping, until that poll has
 * delivered it. Several threads may sleep at once: each counts itself
 * among the sleepers while it sleeps, and a sender wakes them all, so one
 * that wakes and leaves (its message, its timeout) leaves the others
 * counted and woken by the next message. A message that another thread's
 * poll delivers does not end this wait (it ends on what it handled
 * itself): where other threads poll the endpoint, a wait for one
 * particular message (a request handler's wait for its reply) may see it
 * handled elsewhere and run to its timeout, so give one and check what
 * the handler recorded rather than use SYNCQ_AM_WAIT_FOREVER. Not from a
 * signal handler; not from a postoffice fiber (it yields and sleeps the
 * thread, not the fiber: poll there instead).
 * Progress: blocking by design (it waits for senders), bounded by
 * timeout_ns plus its first poll and its last yield and poll (a yield on
 * a loaded processor may last a time slice).
 * Example: `while (acks < sent) if (syncq_am_wait(ep, 64, 1000000000, NULL) != SYNCQ_OK) break;` */
SYNCQ_API int syncq_am_wait(syncq_am_endpoint *ep, unsigned budget, uint64_t timeout_ns, unsigned *handled);

/* The endpoint's limits (the sizes it was created with) into *out.
 * SYNCQ_EINVAL: ep or out is NULL.
 * Thread safety: any thread of the creating process, concurrently with
 * polls and with every process's sends (the counters are atomic loads, not
 * one snapshot). Not from a signal handler (syncq/am.h is not
 * async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API int syncq_am_limits_of(const syncq_am_endpoint *ep, syncq_am_limits *out);
/* The endpoint's counters (messages delivered and unhandled, claims taken
 * back from dead senders, lock-free packets skipped) into *out.
 * SYNCQ_EINVAL: ep or out is NULL.
 * Thread safety: any thread of the creating process, concurrently with
 * polls and with every process's sends (each counter is one atomic load:
 * the copy is not one snapshot). Not from a signal handler (syncq/am.h is
 * not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API int syncq_am_counters_of(const syncq_am_endpoint *ep, syncq_am_counters *out);
/* The endpoint's name (NULL for NULL).
 * Thread safety: any thread, any time the handle exists. Not from a signal
 * handler (syncq/am.h is not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_am_name(const syncq_am_endpoint *ep);

/* Connect to the endpoint `name` for sending. `self` (may be NULL) is the
 * caller's own endpoint: it is polled while a send is stalled, and it is
 * where replies to these requests go; it must outlive the connection
 * (disconnect first, then destroy self).
 * SYNCQ_EINVAL: name is NULL or malformed, out is NULL, or the segment of
 * that name is not an endpoint (no endpoint's mark within the wait for a
 * creator still making it, or sizes no endpoint has).
 * SYNCQ_ENOENT: there is no segment of that name.
 * SYNCQ_EDEAD: the endpoint was shut down, or its creating process, the
 * only one that polls it, has exited without destroying it.
 * SYNCQ_ELIMIT: self is not NULL and the endpoint's table of repliable
 * peers (SYNCQ_AM_MAX_PEERS names) is full.
 * SYNCQ_ENOMEM: the connection's handle could not be allocated.
 * SYNCQ_ESYS: shm_open, fstat or mmap failed; errno holds why.
 * Thread safety: any thread of any process, concurrently with the
 * endpoint's polls and other processes' connects and sends (the
 * repliable-peer table is claimed by CAS). One self may serve many peers
 * and the threads sending through them, and those threads may poll self
 * too (syncq_am_poll, syncq_am_request). Not from a signal handler
 * (syncq/am.h is not async-signal-safe).
 * Progress: system calls (shm_open, mmap, madvise: the segment is faulted
 * in, as at create) and an allocation; the peer-table claim is lock-free;
 * it never waits for the endpoint's process.
 * Example: A client its server forked, connecting to the endpoint the
 * server named after its own pid (syncq_am_create's example):
 *   `char server[SYNCQ_AM_NAME_MAX + 1];`
 *   `snprintf(server, sizeof server, "syncq-example-%ld-server", (long)getppid());`
 *   `syncq_am_peer *p; int r = syncq_am_connect(my_ep, server, &p);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "%s: %s\n", server, syncq_strerror(r));`
 *   `else { work(); syncq_am_disconnect(p); }` */
SYNCQ_API int syncq_am_connect(syncq_am_endpoint *self, const char *name, syncq_am_peer **out);
/* Unmap and free a connection.
 * SYNCQ_EINVAL: peer is NULL.
 * Thread safety: once no thread sends through the peer, by one thread. Not
 * from a signal handler (syncq/am.h is not async-signal-safe).
 * Progress: not a concurrent operation on the handle: munmap and free. */
SYNCQ_API int syncq_am_disconnect(syncq_am_peer *peer);
/* The limits a peer sends within into *out: the endpoint's sizes as
 * validated at connect (a peer through a transport such as MPI: the
 * transport's words, handlers and bulk size, claim -1).
 * SYNCQ_EINVAL: peer or out is NULL.
 * Thread safety: any thread, any time the peer exists (it reads what
 * connect validated). Not from a signal handler (syncq/am.h is not
 * async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API int syncq_am_peer_limits(const syncq_am_peer *peer, syncq_am_limits *out);
/* syncq_am_peer_check's text is at most this long, its NUL included. */
#define SYNCQ_AM_WHY_MAX 64u
/* Is the endpoint behind a peer alive? Looked at now, without a send:
 * the endpoint's `closed` word (one load from the mapping), then the
 * process that created it, the only one that polls it, by its pid and
 * start time as validated at connect (one open/read/close of /proc; the
 * pid and start time the segment says now are never used: another
 * process may have written them).
 * SYNCQ_OK: alive (why gets "").
 * SYNCQ_EDEAD: the endpoint was closed (syncq_am_destroy), its owner
 * began to leave (a transport's destroy, syncq/am_mpi.h), or its creator
 * has exited, is a zombie, or its pid names another process now. A death
 * found here is final for the peer: every send through it from then on
 * answers SYNCQ_EDEAD at once (without this check a send finds it by
 * syncq_am_request's schedule, up to a stale interval later).
 * SYNCQ_EINVAL: peer is NULL, or its segment's fixed fields were
 * overwritten (as a send finds them: SYNCQ_EINVAL there too).
 * SYNCQ_ENOTSUP: a peer through a transport (syncq_am_mpi_peer): the
 * transport judges it (syncq_am_mpi_peer_dead).
 * why (may be NULL; why_size bytes, SYNCQ_AM_WHY_MAX is enough) gets
 * the reason, cut to fit and always NUL-terminated when why_size > 0:
 * "" (alive), "its process died (pid N)", "its endpoint was closed",
 * "its endpoint said leaving (its destroy began)", "its segment was
 * overwritten", "a peer through a transport: ask the transport".
 * Thread safety: any thread of any process holding the peer (a forked
 * child included), concurrently with sends through it and other checks
 * (it writes only the peer's schedule of looks, an atomic word the sends
 * share). Not from a signal handler (syncq/am.h is not async-signal-safe).
 * Progress: one open/read/close of /proc (none for a closed endpoint;
 * its cost: docs/am.md); it never waits for the endpoint's process.
 * Example: A client waiting for a reply asks whether its server is still
 * there when the wait runs out (syncq_am_wait cannot tell):
 *   `char why[SYNCQ_AM_WHY_MAX];`
 *   `int r = syncq_am_wait(my_ep, 64, 100000000, NULL);`
 *   `if (r == SYNCQ_ETIMEDOUT && syncq_am_peer_check(peer, why, sizeof why) == SYNCQ_EDEAD)`
 *   `  fprintf(stderr, "server: %s\n", why);` */
SYNCQ_API int syncq_am_peer_check(syncq_am_peer *peer, char *why, size_t why_size);
/* The server's side: is the client in slot `slot` (0..SYNCQ_AM_MAX_PEERS
 * - 1) of ep's table of repliable peers alive? A client that connected
 * with an endpoint of its own (syncq_am_connect's self) holds a slot,
 * under that endpoint's name, for the endpoint's life (a disconnect
 * frees none); one that connected with self NULL holds none and cannot
 * be asked after. The client is looked at by its endpoint's name, now:
 * its segment's header mapped (shm_open, fstat, mmap of one page,
 * munmap), then its creator by the pid and start time that header
 * says (one read of /proc).
 * A name is judged as it is now: a client that died and whose name a
 * new process created again is the new one, alive.
 * SYNCQ_OK: the client's endpoint is open and its creator alive.
 * SYNCQ_EDEAD: it is not: why says "its endpoint is gone" (destroyed,
 * or removed by syncq_am_unlink), "its endpoint was closed", "its
 * endpoint said leaving (its destroy began)", "its process died (pid N)"
 * or "its name holds no endpoint".
 * SYNCQ_ENOENT: the slot holds no client (yet).
 * SYNCQ_EINVAL: ep is NULL, or slot is SYNCQ_AM_MAX_PEERS or more; or
 * the slot's name was overwritten (it is no endpoint name: why says "its
 * slot was overwritten").
 * SYNCQ_ESYS: shm_open, fstat or mmap failed otherwise; errno holds why.
 * name (may be NULL; SYNCQ_AM_NAME_MAX + 1 bytes) gets the client's
 * endpoint name with SYNCQ_OK and SYNCQ_EDEAD, "" otherwise; why (may be
 * NULL; why_size bytes, SYNCQ_AM_WHY_MAX is enough) the reason, "" with
 * SYNCQ_OK, cut to fit and NUL-terminated when why_size > 0.
 * Every word read from the segments (the slot's state and name, the
 * client header's mark, closed word, pid and start time) is compared,
 * copied within bounds or checked as a name before use: a process that
 * writes them changes only the answer about that slot.
 * Thread safety: any thread of the process holding ep, concurrently with
 * polls, sends and connects of any process (it reads the table, writes
 * nothing shared). Not from a signal handler (syncq/am.h is not
 * async-signal-safe).
 * Progress: system calls (shm_open, fstat, mmap and munmap of one page,
 * a /proc read); it never waits for another process.
 * Example: The clients that are gone, named:
 *   `char who[SYNCQ_AM_NAME_MAX + 1], why[SYNCQ_AM_WHY_MAX];`
 *   `for (unsigned i = 0; i < SYNCQ_AM_MAX_PEERS; i++)`
 *   `  if (syncq_am_sender_check(ep, i, who, why, sizeof why) == SYNCQ_EDEAD) fprintf(stderr, "%s: %s\n", who, why);` */
SYNCQ_API int syncq_am_sender_check(const syncq_am_endpoint *ep, unsigned slot, char *name, char *why, size_t why_size);

/* Send a short request: handler index, nargs (<= SYNCQ_AM_MAX_ARGS) words.
 * Returns SYNCQ_OK once the message is in the endpoint's request queue.
 * Without SYNCQ_AM_NOWAIT a send waits while the queue is full, for as
 * long as it takes (polling its own endpoint, 000 §3.1), or until it
 * finds the creator gone (SYNCQ_EDEAD). A peer through a transport
 * (syncq/am_mpi.h) answers SYNCQ_FULL (no credit or send buffer, with
 * SYNCQ_AM_NOWAIT), SYNCQ_EINVAL (the checks of its words and flags) or
 * SYNCQ_EDEAD (the rank is found dead) only.
 * SYNCQ_FULL: the queue is full (only with SYNCQ_AM_NOWAIT).
 * SYNCQ_EBUSY: the claim lock is held by another sender, tried for a few
 *   microseconds (only with SYNCQ_AM_NOWAIT, and a locking claim).
 * SYNCQ_ETIMEDOUT: the claim lock showed no progress for the bound of
 *   SYNCQ_AM_LOCK_WAIT_STALE: a holder that is alive but never lets go
 *   (stopped, or a foreign pid in the lock); plain sends with a locking
 *   claim only.
 * SYNCQ_EINVAL: NULL peer, args NULL with nargs > 0, index out of range,
 *   too many words, unknown flag; or the segment was overwritten (its
 *   fixed fields differ from those validated at connect, or a slot or
 *   lock word is in a state no process writes): nothing is sent.
 * SYNCQ_ESYS: the "posix-mutex" claim's mutex call failed otherwise;
 *   errno holds why.
 * SYNCQ_EDEAD: the endpoint was shut down (its `closed` word: one load
 *   at every send), or its creator (the only process that polls it) is
 *   found gone. The creator is looked at (one open/read/close of
 *   /proc/<pid>/task/<pid>/stat, as syncq_am_peer_check) at connect, then by
 *   a send once the peer's next look is due, one stale interval
 *   (stale_claim_ns) after its last: the first send within an interval
 *   of the connect does not look again. A send with room compares the
 *   due time with its thread's clock, which it reads (clock_gettime) at
 *   a pace that follows the thread's rate of sends to any peer: at every
 *   send when they come a 16th of the shortest stale interval apart or
 *   more, at every 64th in a fast stream, so a due look comes at most 64
 *   sends late (a stream that slows down between two reads: at most 64
 *   of the slow sends); the pace is the thread's own, so the senders
 *   sharing a peer write no word of it. A NOWAIT send that finds the
 *   queue full looks at once when due; a plain send waiting on a full
 *   queue, once per interval of its wait. So a peer costs one /proc read
 *   per stale interval at most, and every other send a relaxed load and
 *   a compare. Once a look (or syncq_am_peer_check) has found the
 *   creator dead, every later send through that peer answers SYNCQ_EDEAD
 *   without looking again (a death is final). After the creator's death
 *   the sends commit (SYNCQ_OK, nothing delivered) for at most one stale
 *   interval and the thread's next clock read (up to 64 sends of a fast
 *   stream), then answer SYNCQ_EDEAD; none waits for ever.
 *   syncq_am_peer_check asks at once, without a send.
 * Thread safety: any thread of any process holding a peer (a forked child
 * included), concurrently with every other sender to the same endpoint: the
 * endpoint's claim algorithm arbitrates them, whichever processes they run
 * in. A peer connected with its own endpoint (self) polls self while the
 * send is stalled, in the creating process only (not in a forked child),
 * skipping a queue of self that another thread is polling
 * (syncq_am_poll): any thread of the creating process may send through
 * it, several at once, beside the threads that poll self; on a self with
 * a transport attached (syncq/am_mpi.h), only self's one polling thread.
 * A peer connected with self NULL polls nothing.
 * Not from a signal handler (syncq/am.h is not async-signal-safe). From a
 * postoffice fiber: with SYNCQ_AM_NOWAIT yes; a plain send that waits holds
 * the fiber's scheduler thread.
 * Progress: blocking: without SYNCQ_AM_NOWAIT it waits while the queue is
 * full, for as long as it takes (backing off, yielding and polling its own
 * endpoint, 000 §3.1) or until the creator is found gone (SYNCQ_EDEAD,
 * within about a stale interval of its death), and on a claim lock for
 * at most the bound of SYNCQ_AM_LOCK_WAIT_STALE (SYNCQ_ETIMEDOUT). With SYNCQ_AM_NOWAIT it never
 * waits on a full queue (SYNCQ_FULL) and tries a held claim lock for a few
 * microseconds (SYNCQ_EBUSY); with the lock-free claim
 * (SYNCQ_AM_CLAIM_LOCKFREE) a NOWAIT send is lock-free. Plain sends
 * waiting on a full queue are not served in the order they came: with the
 * lock-free claim a freed packet goes to whichever waiting sender takes it
 * first, so one sender can lose it to the others every time while they
 * keep sending (lock-free, not starvation-free).
 * Example: `uint32_t args[2] = {7, 42}; syncq_am_request(p, 1, args, 2, SYNCQ_AM_NOWAIT);` */
SYNCQ_API int syncq_am_request(syncq_am_peer *peer, unsigned handler, const uint32_t *args, unsigned nargs,
                               unsigned flags);
/* A bulk request: len (<= the endpoint's bulk_size) bytes copied into a
 * bulk block, plus words, sent as syncq_am_request sends (its page says
 * when the creator's death is found).
 * SYNCQ_FULL: the queue or its bulk blocks are full (only with
 * SYNCQ_AM_NOWAIT).
 * SYNCQ_EBUSY: the claim lock is held by another sender, tried for a few
 * microseconds (only with SYNCQ_AM_NOWAIT, and a locking claim).
 * SYNCQ_ETIMEDOUT: the claim lock showed no progress for the bound of
 * SYNCQ_AM_LOCK_WAIT_STALE (plain sends with a locking claim only).
 * SYNCQ_EINVAL: as syncq_am_request's (NULL peer, bad handler, words or
 * flags, an overwritten segment), or len is above the bulk size, or data
 * is NULL with len > 0: nothing is sent.
 * SYNCQ_ESYS: the "posix-mutex" claim's mutex call failed otherwise;
 * errno holds why.
 * SYNCQ_EDEAD: the endpoint was shut down, or its creator is gone.
 * Thread safety: any thread of any process holding a peer (a forked child
 * included), concurrently with every other sender to the same endpoint: the
 * endpoint's claim algorithm arbitrates them, whichever processes they run
 * in. A peer connected with its own endpoint (self) polls self while the
 * send is stalled, in the creating process only (not in a forked child),
 * skipping a queue of self that another thread is polling
 * (syncq_am_poll): any thread of the creating process may send through
 * it, several at once, beside the threads that poll self; on a self with
 * a transport attached (syncq/am_mpi.h), only self's one polling thread.
 * A peer connected with self NULL polls nothing.
 * Not from a signal handler (syncq/am.h is not async-signal-safe). From a
 * postoffice fiber: with SYNCQ_AM_NOWAIT yes; a plain send that waits holds
 * the fiber's scheduler thread.
 * Progress: blocking: without SYNCQ_AM_NOWAIT it waits while the queue is
 * full, for as long as it takes (backing off, yielding and polling its own
 * endpoint, 000 §3.1) or until the creator is found gone (SYNCQ_EDEAD,
 * within about a stale interval of its death), and on a claim lock for
 * at most the bound of SYNCQ_AM_LOCK_WAIT_STALE (SYNCQ_ETIMEDOUT). With SYNCQ_AM_NOWAIT it never
 * waits on a full queue (SYNCQ_FULL) and tries a held claim lock for a few
 * microseconds (SYNCQ_EBUSY); with the lock-free claim
 * (SYNCQ_AM_CLAIM_LOCKFREE) a NOWAIT send is lock-free. */
SYNCQ_API int syncq_am_request_bulk(syncq_am_peer *peer, unsigned handler, const void *data, size_t len,
                                    const uint32_t *args, unsigned nargs, unsigned flags);
/* From a request handler, at most once: a reply to the requester's own
 * endpoint, sent as a request is (syncq_am_request). While the
 * requester's reply queue is full the replier polls its own reply queue.
 * SYNCQ_FULL: the requester's reply queue is full (only with
 * SYNCQ_AM_NOWAIT).
 * SYNCQ_EBUSY: the claim lock is held by another sender, tried for a few
 * microseconds (only with SYNCQ_AM_NOWAIT, and a locking claim).
 * SYNCQ_ETIMEDOUT: the claim lock showed no progress for the bound of
 * SYNCQ_AM_LOCK_WAIT_STALE (plain sends with a locking claim only).
 * SYNCQ_EINVAL: NULL token, a reply handler's token, a second reply, a
 * bad handler, words or flags, or the requester's peer-table entry or
 * segment was overwritten: nothing is sent.
 * SYNCQ_ENOENT: the request came from a peer connected without its own
 * endpoint (self NULL): there is nowhere to reply.
 * SYNCQ_EDEAD: the requester's endpoint is gone (shut down, removed, or
 * its creator dead).
 * SYNCQ_ENOMEM: the first reply to this requester could not allocate its
 * connection.
 * SYNCQ_ESYS: mapping the requester's segment failed, or the
 * "posix-mutex" claim's mutex call failed; errno holds why.
 * Thread safety: from a request handler, with its token, on the thread
 * running that handler, at most once per request. Not from a signal handler (syncq/am.h is not async-signal-safe).
 * Progress: as a request's: it waits while the requester's reply queue is
 * full (polling its own reply queue meanwhile) unless SYNCQ_AM_NOWAIT; the
 * first reply to a requester maps its segment (system calls). */
SYNCQ_API int syncq_am_reply(syncq_am_token *token, unsigned handler, const uint32_t *args, unsigned nargs,
                             unsigned flags);
/* Reply with a bulk block: as syncq_am_reply, plus len bytes of data
 * (within the bulk size, as syncq_am_request_bulk) copied into a bulk
 * block of the requester's reply queue.
 * SYNCQ_FULL: the requester's reply queue or its bulk blocks are full
 * (only with SYNCQ_AM_NOWAIT).
 * SYNCQ_EBUSY: the claim lock is held by another sender, tried for a few
 * microseconds (only with SYNCQ_AM_NOWAIT, and a locking claim).
 * SYNCQ_ETIMEDOUT: the claim lock showed no progress for the bound of
 * SYNCQ_AM_LOCK_WAIT_STALE (plain sends with a locking claim only).
 * SYNCQ_EINVAL: as syncq_am_reply's, or len is above the bulk size, or
 * data is NULL with len > 0: nothing is sent.
 * SYNCQ_ENOENT: the request came from a peer connected without its own
 * endpoint (self NULL): there is nowhere to reply.
 * SYNCQ_EDEAD: the requester's endpoint is gone (shut down, removed, or
 * its creator dead).
 * SYNCQ_ENOMEM: the first reply to this requester could not allocate its
 * connection.
 * SYNCQ_ESYS: mapping the requester's segment failed, or the
 * "posix-mutex" claim's mutex call failed; errno holds why.
 * Thread safety: from a request handler, with its token, on the thread
 * running that handler, at most once per request. Not from a signal handler (syncq/am.h is not async-signal-safe).
 * Progress: as a request's: it waits while the requester's reply queue is
 * full (polling its own reply queue meanwhile) unless SYNCQ_AM_NOWAIT; the
 * first reply to a requester maps its segment (system calls). */
SYNCQ_API int syncq_am_reply_bulk(syncq_am_token *token, unsigned handler, const void *data, size_t len,
                                  const uint32_t *args, unsigned nargs, unsigned flags);
/* True when the token is a request's (a reply is allowed).
 * Thread safety: from the handler that received the token, during its call
 * (a token is valid only then). Not from a signal handler (syncq/am.h is
 * not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API bool syncq_am_token_is_request(const syncq_am_token *token);
/* The endpoint whose handler runs (NULL for NULL).
 * Thread safety: from the handler that received the token, during its call
 * (a token is valid only then). Not from a signal handler (syncq/am.h is
 * not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API syncq_am_endpoint *syncq_am_token_endpoint(const syncq_am_token *token);
/* The slot of a request's sender in the endpoint's table of repliable
 * peers (0..SYNCQ_AM_MAX_PEERS - 1): what syncq_am_sender_check asks
 * after. -1 when there is none: a sender connected with self NULL, a
 * reply's token, a message through a transport (syncq/am_mpi.h), a slot
 * number out of range (the packet was overwritten), or token NULL.
 * Thread safety: from the handler that received the token, during its call
 * (a token is valid only then). Not from a signal handler (syncq/am.h is
 * not async-signal-safe).
 * Progress: wait-free.
 * Example: A handler that says which client a request came from:
 *   `int slot = syncq_am_token_sender(token);`
 *   `if (slot >= 0) fprintf(stderr, "a request from the client in slot %d\n", slot);` */
SYNCQ_API int syncq_am_token_sender(const syncq_am_token *token);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_AM_H */
