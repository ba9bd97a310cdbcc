/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/am_mpi.h — active messages between the ranks of an MPI job, under
 * the API of syncq/am.h (the way GASNet's AMMPI / mpi-conduit carry
 * GASNet's AM over MPI).
 *
 * Each rank owns one syncq_am_endpoint (a queue block in shared memory).
 * Peers on the same node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) are
 * reached through their queue blocks, exactly as in syncq/am.h; the other
 * ranks through MPI on a private duplicate of the job's communicator, with
 * pre-posted receives, non-blocking sends, credit-based flow control and
 * polling with a budget inside syncq_am_poll. Handlers, tokens, replies,
 * bulk limits and status codes are those of syncq/am.h on both paths.
 *
 * Use:
 *     MPI_Init(...);
 *     syncq_am_mpi *job;
 *     syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job);        collective
 *     syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job);
 *     syncq_am_register(ep, 1, "ping", on_ping, ctx);         same table on every rank
 *     syncq_am_mpi_start(job);                                 collective: checks the tables
 *     syncq_am_peer *p; syncq_am_mpi_peer(job, rank, &p);
 *     syncq_am_request(p, 1, args, n, 0);  syncq_am_poll(ep, 64, NULL);
 *     syncq_am_mpi_destroy(job);                               collective (bounded)
 *     MPI_Finalize();
 *
 * Threading rule: MPI_THREAD_FUNNELED is enough. Every call on a job and
 * on its endpoint and peers (sends, polls, handlers) must come from the
 * thread that initialised MPI; syncq_am_mpi_create refuses another thread.
 * (A forked child must not use the job.)
 *
 * Progress: messages through MPI move only inside syncq_am_poll (and so
 * syncq_am_wait) and the send calls of this process. A rank must enter one of them at least once
 * every dead_timeout_ns / 4: a silent rank is declared dead by the others.
 *
 * Faults (ULFM-free; what MPI itself allows is documented in
 * docs/am-mpi.md): every rank sends a heartbeat to each MPI peer it has
 * not sent to for dead_timeout_ns / 4; a peer heard from for none of
 * dead_timeout_ns, one whose MPI operation failed (MPI_ERRORS_RETURN) on
 * this rank or on the peer (which then says so: syncq_am_mpi_why, and
 * for each peer syncq_am_mpi_peer_why), or
 * one that left with syncq_am_mpi_destroy is dead: sends to it return
 * SYNCQ_EDEAD and polls never wait for it. Peers through shared memory
 * keep syncq/am.h's rules (SYNCQ_EDEAD once the endpoint is closed or its
 * creator is found dead), and syncq_am_mpi_peer_dead and
 * syncq_am_mpi_peer_why report them lost by the same signs.
 *
 * Not async-signal-safe. Process-shared: the node-local queue blocks are.
 */
#ifndef SYNCQ_AM_MPI_H
#define SYNCQ_AM_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "syncq/am.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCQ_AM_MPI_DEFAULT_CREDITS 16u /* requests in flight to one MPI peer (replies: as many again) */
#define SYNCQ_AM_MPI_MAX_CREDITS 1024u
#define SYNCQ_AM_MPI_DEFAULT_DEAD_NS 5000000000ull  /* 5 s of silence: the peer is dead */
#define SYNCQ_AM_MPI_MIN_DEAD_NS 100000000ull       /* 100 ms at least */
#define SYNCQ_AM_MPI_FORCE_ENV "SYNCQ_AM_FORCE_MPI" /* "1" in the environment: as force_mpi */
#define SYNCQ_AM_MPI_WHY_MAX 256u

/* Options; NULL means all defaults, a zero field its default. */
typedef struct syncq_am_mpi_config {
  syncq_am_config shm;      /* this rank's endpoint (claim, queue sizes, bulk size) */
  bool force_mpi;           /* every peer through MPI, node-local ones and itself too */
  uint32_t credits;         /* per MPI peer, 1..SYNCQ_AM_MPI_MAX_CREDITS */
  uint64_t dead_timeout_ns; /* >= SYNCQ_AM_MPI_MIN_DEAD_NS */
  /* false (the default): this rank's endpoint loses its name (syncq_am_name)
   * once the create has connected every node-local rank, so a rank killed
   * later leaves nothing in /dev/shm, and nothing outside the job can
   * connect to it by name; true: it keeps the name until the destroy, for
   * syncq_am_connect from outside the job (docs/am-mpi.md, "What a killed
   * rank leaves in /dev/shm") */
  bool keep_name;
} syncq_am_mpi_config;

typedef struct syncq_am_mpi syncq_am_mpi;

/* Start active messages between the ranks of comm (collective). It
 * duplicates comm, creates this rank's endpoint, finds the node-local ranks,
 * pre-posts the receives and connects to the node-local endpoints.
 * Fails together: a rank whose own step fails (its arguments, an
 * allocation, its endpoint, its rings, a connection) still takes part in
 * the collective calls, every rank learns of the failure before the next
 * one, frees what it made and returns; no rank waits for one that left.
 * The failing rank returns its own error, every other rank
 * SYNCQ_EBROKEN; *out is left as it was on every rank.
 * SYNCQ_EINVAL: MPI is not initialised or already finalised, the caller is
 * not the thread that initialised MPI, or comm is MPI_COMM_NULL (this rank
 * returns at once and takes no part, so every rank of comm must see the
 * same); out is NULL, credits is above SYNCQ_AM_MPI_MAX_CREDITS, or
 * dead_timeout_ns (not 0) is below SYNCQ_AM_MPI_MIN_DEAD_NS (agreed: the
 * other ranks return SYNCQ_EBROKEN); or, on every rank, the ranks'
 * endpoints have different bulk sizes (shm.bulk_size: a larger sender's
 * bulk message would overflow a smaller receiver's buffers):
 * syncq_am_mpi_why(NULL) names this rank's size and the job's smallest
 * and largest.
 * SYNCQ_ENOMEM: this rank's tables or rings could not be allocated or
 * faulted in.
 * SYNCQ_EBROKEN: another rank of comm failed a step of its own; nothing of
 * the job is left on this rank.
 * SYNCQ_ESYS: an MPI call failed on this rank, which holds nothing of the
 * job. Not agreed when the call was collective (MPI promises nothing of
 * the communicator after it): the other ranks may return SYNCQ_ESYS, wait
 * in the create's next collective call for ever, or (the last agreement)
 * return SYNCQ_OK; end the job (MPI_Abort). The MPI_Comm_dup of comm and
 * the MPI_Comm_set_errhandler of the duplicate run under comm's error
 * handler (the default one ends the job there), every later call under
 * MPI_ERRORS_RETURN on the private duplicate: never an abort. A local MPI
 * call that fails (the handler's setting, the duplicate's rank or size,
 * the node's size or freeing, a receive of the rings) is agreed like the
 * other local steps: this rank SYNCQ_ESYS, the others SYNCQ_EBROKEN
 * (docs/am-mpi.md, "Faults").
 * The errors of syncq_am_create: this rank's endpoint (cfg->shm) could not
 * be created; the errors of syncq_am_connect: a node-local endpoint could
 * not be reached.
 * Thread safety: collective over comm: every rank calls it; from the
 * thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: blocking: collective MPI calls (it returns once every rank of
 * comm has joined).
 * Memory: per peer through MPI, two rings of 2C + 8 buffers (C: credits)
 * of 48 bytes + shm.bulk_size, 648 KiB at the defaults, faulted in here so
 * a new job's first messages take no page fault; SYNCQ_ENOMEM when they
 * cannot be had.
 * Example: `syncq_am_mpi *job;` `int r = syncq_am_mpi_create(MPI_COMM_WORLD, NULL, &job);`
 *   `if (r != SYNCQ_OK) MPI_Abort(MPI_COMM_WORLD, 1);`
 *   `work(); syncq_am_mpi_destroy(job);` */
int syncq_am_mpi_create(MPI_Comm comm, const syncq_am_mpi_config *cfg, syncq_am_mpi **out);
/* This rank's endpoint: register handlers on it before syncq_am_mpi_start,
 * poll it with syncq_am_poll or wait on it with syncq_am_wait. NULL for
 * NULL.
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: wait-free.
 * Example: `syncq_am_endpoint *ep = syncq_am_mpi_endpoint(job); unsigned handled; syncq_am_poll(ep, 64, &handled);` */
syncq_am_endpoint *syncq_am_mpi_endpoint(const syncq_am_mpi *job);
/* Check that every rank registered the same handlers, and open the job for
 * sends: collective, it compares every rank's handler table (index and name
 * of each registered handler).
 * SYNCQ_EINVAL: job is NULL, it was started already, the caller is not the
 * thread that initialised MPI, or (on every rank) a handler table differs:
 * syncq_am_mpi_why names the first index and ranks.
 * SYNCQ_ENOMEM: the buffer for every rank's table could not be allocated.
 * SYNCQ_ESYS: an MPI call (MPI_Allgather) failed: the job is not started
 * (destroy it; the other ranks' outcome is unknown, as for a collective
 * call failing in the create).
 * Thread safety: collective: every rank calls it once, after registering
 * its handlers; from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: blocking: collective (it waits for every rank's table).
 * Example: `if (syncq_am_mpi_start(job) != SYNCQ_OK) fprintf(stderr, "%s\n", syncq_am_mpi_why(job));` */
int syncq_am_mpi_start(syncq_am_mpi *job);
/* The peer through which this rank sends to `rank`, into *out (owned by
 * the job: do not disconnect it).
 * SYNCQ_EINVAL: job or out is NULL, rank is out of range (not in
 * [0, syncq_am_mpi_size)), or no start has succeeded yet.
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: wait-free.
 * Example: `syncq_am_peer *next; int me = syncq_am_mpi_rank(job), n = syncq_am_mpi_size(job);`
 *   `if (syncq_am_mpi_peer(job, (me + 1) % n, &next) == SYNCQ_OK) syncq_am_request(next, 1, NULL, 0, 0);` */
int syncq_am_mpi_peer(syncq_am_mpi *job, int rank, syncq_am_peer **out);
/* This process's rank in the job's communicator (-1 for NULL).
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: wait-free. */
int syncq_am_mpi_rank(const syncq_am_mpi *job);
/* The number of ranks in the job's communicator (-1 for NULL).
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: wait-free. */
int syncq_am_mpi_size(const syncq_am_mpi *job);
/* How `rank` is reached from this rank: "shm" (a node-local queue block) or
 * "mpi"; NULL for bad input.
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: wait-free. */
const char *syncq_am_mpi_path(const syncq_am_mpi *job, int rank);
/* True when `rank` is known dead (or left); false for bad input (job
 * NULL, rank out of range) and for this rank itself, which is never a
 * peer it can lose (also with force_mpi, where its own messages go
 * through MPI). A peer through MPI: what polls and sends last learnt. A
 * node-local peer (syncq_am_mpi_path "shm") is asked of its queue block,
 * by the signs a send to it goes by: its endpoint closed (a load from
 * the shared mapping, at every call) or the process that created it dead
 * (a read of /proc, at most once per dead_timeout_ns / 16 per peer, so a
 * death is reported within that much of asking); once found lost it
 * stays lost. Sends are untouched by it.
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: bounded: no MPI call (only polls and sends move MPI
 * messages); for a node-local peer a clock read and, at most once per
 * dead_timeout_ns / 16 per peer, one open, read and close of /proc.
 * Example: `if (syncq_am_mpi_peer_dead(job, 3)) fprintf(stderr, "rank 3: %s\n", syncq_am_mpi_peer_why(job, 3));` */
bool syncq_am_mpi_peer_dead(const syncq_am_mpi *job, int rank);
/* Why `rank` is known dead (or left), as this rank learnt it, and when
 * (milliseconds after this rank's syncq_am_mpi_start): the first reason
 * found stays, whatever later errors syncq_am_mpi_why names. One of
 *   "silent for S ms, longer than the dead timeout of D ms: found dead T ms after the start"
 *     (S and D to the microsecond, as 1000.001: S rounded up, D down)
 *   "left the job: its BYE came T ms after the start"
 *   "failed by this rank (CALL here, on its messages) T ms after the start"
 *   "failed this rank (CALL there): its FAILED message came T ms after the start"
 * for a peer through MPI, where CALL is "MPI_Isend failed", "MPI_Irecv
 * failed", "an MPI send failed" (a send's MPI_Test), "an MPI receive
 * failed" (a receive's MPI_Test or MPI_Testsome) or, for a FAILED
 * message naming no call known here, "an MPI call failed"; for a
 * node-local peer (asked of its queue block as by syncq_am_mpi_peer_dead)
 *   "left the job: its endpoint said leaving (its destroy began), found T ms after the start"
 *   "its endpoint was closed: found T ms after the start"
 *   "its process died (pid N): found T ms after the start"
 * where T is when this rank first found it so (this call,
 * syncq_am_mpi_peer_dead, or the destroy: the queue block keeps no time
 * of its end). "" for a peer not known dead. NULL for bad input: job
 * NULL, rank out of range (not in [0, syncq_am_mpi_size)), or rank this
 * rank's own (not a peer it can lose: syncq_am_mpi_peer_dead is false
 * for it); errno is left alone. The text lives in the job:
 * valid until the next syncq_am_mpi_peer_why on the job or its destroy.
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: bounded, as syncq_am_mpi_peer_dead (no MPI call; a node-local
 * peer's /proc read at most once per dead_timeout_ns / 16).
 * Memory: a code and two times per peer, written out here into one buffer
 * of SYNCQ_AM_MPI_WHY_MAX bytes per job: nothing allocated, and no text
 * per peer written, when a peer is found lost.
 * Example: `for (int r = 0; r < syncq_am_mpi_size(job); r++)`
 *   `if (syncq_am_mpi_peer_dead(job, r)) fprintf(stderr, "rank %d: %s\n", r, syncq_am_mpi_peer_why(job, r));` */
const char *syncq_am_mpi_peer_why(const syncq_am_mpi *job, int rank);
/* The last error's explanation ("" if none): a later one replaces it (a
 * peer's own reason stays: syncq_am_mpi_peer_why). For NULL: why this
 * process's last syncq_am_mpi_create failed, whose job is gone ("" when it
 * succeeded or gave no reason).
 * Thread safety: from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: wait-free. */
const char *syncq_am_mpi_why(const syncq_am_mpi *job);
/* Leave the job and free it: collective and bounded, it tells every MPI
 * peer this rank leaves, keeps handling messages until each peer has said
 * the same or is found dead (silent for dead_timeout_ns; at most 10 dead
 * timeouts in all), then a job-wide barrier (handling messages, skipped when
 * a rank left early or died, a node-local one looked at here as by
 * syncq_am_mpi_peer_dead) so node-local peers are done too, then frees
 * everything and destroys the endpoint. From its start this rank's
 * endpoint says it is leaving: a node-local peer's send to it fails as
 * to a closed endpoint, as an MPI peer's does once the BYE is in, and the
 * peer finds it lost (what was queued before is still handled). When a peer died (or an MPI call
 * of this rank on it failed, before or during the destroy) every MPI
 * request of the job, its rings and its communicator are left to
 * MPI_Finalize (or the process's exit): MPI without ULFM cannot cancel
 * requests on a dead peer.
 * SYNCQ_EINVAL: job is NULL, or the caller is not the thread that
 * initialised MPI (or MPI_Is_thread_main failed): nothing is freed.
 * Each posted receive is cancelled and the cancel completed (MPI may
 * write into a cancelled receive's buffer until then) before its ring's
 * buffers go, for a quarter of a dead timeout at most.
 * SYNCQ_ESYS (before SYNCQ_ETIMEDOUT): an MPI call of this rank failed
 * during the destroy; everything syncq holds is freed but what MPI keeps:
 * a barrier's request that MPI_Ibarrier made and MPI_Test failed on (a
 * nonblocking collective's request can be neither cancelled nor freed), a
 * receive that MPI_Cancel, or the MPI_Testall completing its cancel,
 * failed on (with its ring's
 * buffers, which MPI may still write), and then the communicator too (a
 * freed one's context could serve a later communicator, whose messages
 * the request would take); a send or receive on a peer that fails makes
 * it a failed peer, whose objects stay with MPI as a dead peer's; when
 * MPI_Ibarrier failed, the other ranks'
 * barrier ends at their deadline (SYNCQ_ETIMEDOUT there).
 * SYNCQ_ETIMEDOUT: some peer neither left nor was found dead in time, or
 * the job-wide barrier did not complete in time (everything is freed but
 * that barrier's request and the communicator, which stay with MPI), or
 * a cancelled receive did not complete in time (it stays with MPI, with
 * its ring's buffers and the communicator).
 * Thread safety: collective: every rank calls it once, when done with the
 * job's peers and endpoint; from the thread that initialised MPI only (the job's threading rule:
 * MPI_THREAD_FUNNELED is enough, and every call on the job, its endpoint
 * and peers comes from that thread), and never in a forked child; not from
 * a signal handler.
 * Progress: blocking but bounded: it handles messages until every MPI peer
 * has left or is found dead (at most 10 dead timeouts), then a job-wide
 * barrier (SYNCQ_ETIMEDOUT when some peer neither left nor died in time).
 * Example: `syncq_am_mpi_destroy(job); MPI_Finalize();` */
int syncq_am_mpi_destroy(syncq_am_mpi *job);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_AM_MPI_H */
