/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_segment.h — the queue block of an active-message endpoint as it lies
 * in shared memory (000 §2, Figure 1): its layout, its state words, the
 * checks of its offsets, and the identity of the processes that write it.
 * The bottom of src/am: every other file of src/am includes it, and it
 * includes nothing of src/am.
 *
 * Layers of src/am, bottom first. A file includes and calls only its own
 * layer and the layers below it, never one above (a layer above reaches
 * a lower one through a function pointer it was handed: the claim ops
 * table, a transport's table):
 *   1. am_segment.h   segment.c (layout, geometry checks), owner.c (process
 *                     identity: is a claim's owner dead)
 *   2. am_claim.h     claim_common.c: the claim interface (am_claim_ops, one
 *                     table per claim kind) and what the claims share
 *                     (Figure 2's critical section, repair, dead blocks)
 *   3. claim_lock.c, claim_posix.c, claim_lockfree.c: the claims, one ops
 *                     table each (none calls another)
 *   4. am_internal.h  endpoint.c: process-local handles (endpoint, peer,
 *                     token, transport table); the segment's life (create,
 *                     attach, connect), which picks the claim's ops table
 *   5. am_core.h      am.c: send, poll, dispatch
 *   6. mpi/transport_mpi.c (its own library, syncq_am_mpi)
 * Test hooks: SYNCQ_RACE_POINT (src/race_internal.h), compiled in only in the
 * test library syncq_race (tests/support/syncq_race.h lists the points).
 *
 * Everything in the segment is an offset or a number, never a pointer:
 * each process maps it at its own address (am_at turns offsets into
 * pointers of the mapping at hand).
 *
 * Packet and bulk-block states are one 64-bit word:
 *     bits 63..32  the queue position (a 32-bit counter, wrapping) this
 *                  state belongs to;
 *     bits 31..8   the pid of the sender that claimed it (0 when FREE);
 *     bits  7..0   the type: FREE, CLAIMED, READY, READY_BULK.
 * A slot is FREE *for a position*: the receiver frees position p by
 * storing FREE for p + n (n: slots in the queue), so a sender assigned
 * position p claims with one CAS from exactly FREE(p) and can never take a
 * slot meant for an earlier or later lap. 000's Figure 3 has only a FREE
 * flag; the position tag keeps per-sender FIFO order when a sender is
 * preempted for a whole lap (another sender assigned a lap later would
 * otherwise take the slot first), and lets the receiver skip an assigned
 * position whose sender died before claiming it.
 */
#ifndef SYNCQ_AM_SEGMENT_H
#define SYNCQ_AM_SEGMENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/am.h"
#include "syncq/pr.h"

#define AM_MAGIC 0x73796e6371414d31ull /* "syncqAM1" */
#define AM_CLOSED 1u                   /* am_header.closed: the endpoint is destroyed */
#define AM_LEAVING 2u /* am_header.closed: its owner is leaving (am_endpoint_leave), not yet destroyed */
#define AM_VERSION 2u /* 2: the doorbell (am_header.asleep, .bell) */

enum { AM_FREE = 0, AM_CLAIMED = 1, AM_READY = 2, AM_READY_BULK = 3 };
enum { AM_Q_REQUEST = 0, AM_Q_REPLY = 1, AM_NQUEUES = 2 };
enum { AM_PEER_FREE = 0, AM_PEER_WRITING = 1, AM_PEER_READY = 2 };

#define AM_PID_MASK 0xFFFFFFu /* Linux pids fit 22 bits (pid_max <= 2^22) */
#define AM_NO_PEER 0xFFFFu    /* a packet from a sender without an endpoint */
#define AM_NO_BULK 0xFFFFFFFFu

static inline uint64_t am_state(uint32_t pos, uint32_t pid, unsigned type) {
  return ((uint64_t)pos << 32) | ((uint64_t)(pid & AM_PID_MASK) << 8) | (uint64_t)type;
}
static inline uint32_t am_state_pos(uint64_t s) { return (uint32_t)(s >> 32); }
static inline uint32_t am_state_pid(uint64_t s) { return (uint32_t)(s >> 8) & AM_PID_MASK; }
static inline unsigned am_state_type(uint64_t s) { return (unsigned)(s & 0xFFu); }
/* Position a is later than b (modulo 2^32). */
static inline bool am_pos_after(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }

/* One packet: exactly one cache line (000 §2). */
typedef struct am_packet {
  _Atomic(uint64_t) state; /* see above */
  /* The claimer's process start time (clock ticks after boot). 0 while the
   * slot is FREE: every free clears it before the release store or CAS of
   * FREE, so a lock-free claimer, which can write it only after its claim
   * CAS, is read as 0 until it does (am_owner_dead: judged by its pid
   * alone), never as the previous claimer's start time. */
  _Atomic(uint64_t) owner_start;
  uint16_t handler;
  uint8_t nargs;
  uint8_t has_bulk;
  uint32_t bulk_pos; /* bulk-queue position of the block (when has_bulk) */
  uint32_t bulk_len;
  uint16_t src_peer; /* index in the receiver's peer table, AM_NO_PEER if none */
  uint16_t pad;
  uint32_t args[SYNCQ_AM_MAX_ARGS];
} am_packet;
_Static_assert(sizeof(am_packet) == 64, "one packet per cache line");

/* The "claimed flag" of a bulk block (000 §2), on its own cache line. */
typedef struct am_bulk_slot {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) state; /* same encoding; READY once its packet commits */
  _Atomic(uint64_t) owner_start;                   /* as the packet's: 0 while FREE */
} am_bulk_slot;

/* The spin-lock claims' locks, made recoverable (claim_lock.c): each word
 * that says who holds the lock carries the holder's pid (am_state
 * encoding), so a waiter can take back a lock whose holder died. */
#define AM_RLOCK_SLOTS 64u /* Anderson: spin slots (one cache line each) */
#define AM_RL_WAITERS 512u /* ticket, Anderson: waiter records (am_queue.waiter) */
typedef struct am_rlock_slot {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) word; /* am_state(position, holder pid, AM_RL_*) */
  _Atomic(uint64_t) start;                        /* holder's start time; 0: not yet written */
} am_rlock_slot;
typedef struct am_rlock {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) next; /* ticket, Anderson: the next position (fetch-and-add) */
  am_rlock_slot slot[AM_RLOCK_SLOTS];             /* TAS/TTAS, ticket: slot[0] only */
} am_rlock;

/* The lock of a locking claim: the recoverable spin lock or the robust
 * POSIX mutex (claim_posix.c). */
typedef union am_claim_lock {
  pthread_mutex_t mutex; /* posix-mutex claim (claim_posix.c) */
  am_rlock rlock;        /* tas, ttas, ticket, anderson claims (claim_lock.c) */
} am_claim_lock;

typedef struct am_queue {
  /* ---- tail information: written by senders only ---- */
  SYNCQ_CACHELINE_ALIGNED am_claim_lock lock;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) tail; /* next packet position to assign */
  _Atomic(uint32_t) bulk_tail;                    /* next bulk position to assign */
  /* ---- head information: written by the receiver only ---- */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) head; /* next packet position to deliver */
  /* ---- fixed at creation ---- */
  SYNCQ_CACHELINE_ALIGNED uint64_t packets_off; /* offsets from the segment base */
  uint64_t bulk_slots_off;
  uint64_t bulk_data_off;
  /* ---- ticket, Anderson: who waits at which position (claim_lock.c) ----
   * waiter[p mod AM_RL_WAITERS] = am_state(p, pid, 1), written by the
   * waiter at position p when it cannot enter at once, so a waiter that
   * finds a position never entered can tell the dead ones after it at a
   * glance instead of one stale interval each. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) waiter[AM_RL_WAITERS];
} am_queue;

typedef struct am_peer_slot {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) state;
  char name[SYNCQ_AM_NAME_MAX + 1];
} am_peer_slot;

typedef struct am_header {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) magic; /* stored last at creation (release) */
  uint32_t version;
  int32_t claim;
  uint32_t packets, packet_shift; /* packets = 1 << packet_shift */
  uint32_t bulk_blocks, bulk_size;
  uint64_t stale_ns;
  uint64_t size; /* bytes of the segment */
  int32_t creator_pid;
  uint32_t pad;
  uint64_t creator_start;
  uint64_t queue_off[AM_NQUEUES];
  uint64_t peers_off;
  char name[SYNCQ_AM_NAME_MAX + 1];
  /* Set by an orderly shutdown: AM_CLOSED by syncq_am_destroy, and before
   * it AM_LEAVING by a transport whose owner has begun to leave its job
   * (am_endpoint_leave: its destroy began, it takes no new message). A
   * sender reads any nonzero value as closed (SYNCQ_EDEAD), so a sender of
   * an older version reads "leaving" as "closed" too. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) closed;
  /* The doorbell of syncq_am_wait's sleep (am.c, "Sleeping"), on the line
   * every send reads for `closed` already: `asleep` is the number of the
   * receiver's threads in (or entering) their futex wait on `bell`, a copy
   * the receiver writes at each sleep's start and end from its own count
   * (the endpoint's `waiters`); a sender that finds it nonzero after its
   * commit bumps `bell` and wakes them all. A sender of version 2 reads
   * any nonzero value as "maybe asleep", so a count and the former flag
   * (1) mean the same to it. The receiver never reads `asleep` back, so
   * any value another process writes here costs a wake-up that was not
   * needed or a sleep cut off by its time slice, never an access nor a
   * count gone wrong: neither word is an offset, and the next sleep's
   * start or end rewrites `asleep`. */
  _Atomic(uint32_t) asleep; /* nonzero: a receiver's thread may be in (or entering) its futex wait */
  _Atomic(uint32_t) bell;   /* the futex word: bumped by a sender that found asleep nonzero */
  /* counters (syncq_am_counters) */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) delivered;
  _Atomic(uint64_t) unhandled;
  _Atomic(uint64_t) lost;
  _Atomic(uint64_t) skipped;
  _Atomic(uint32_t) last_unhandled;
} am_header;

static inline void *am_at(void *base, uint64_t off) { return (unsigned char *)base + off; }
/* Through the header's own offsets: only for a segment this process just
 * made or validated and nobody else can write yet (creation, the fuzzer's
 * pristine copy). Every other path goes through an am_qview. */
static inline am_queue *am_queue_of(void *base, int q) {
  return (am_queue *)am_at(base, ((am_header *)base)->queue_off[q]);
}
static inline am_packet *am_packets(void *base, am_queue *q) { return (am_packet *)am_at(base, q->packets_off); }
static inline am_bulk_slot *am_bulk_slots(void *base, am_queue *q) {
  return (am_bulk_slot *)am_at(base, q->bulk_slots_off);
}

/* Where everything lies in a segment of the given sizes (segment.c): the
 * only layout; creation follows it and every check compares with it. */
typedef struct am_layout {
  uint64_t peers_off, queue_off[AM_NQUEUES], packets_off[AM_NQUEUES], slots_off[AM_NQUEUES], data_off[AM_NQUEUES];
  uint64_t size; /* bytes, whole pages */
} am_layout;
void am_layout_of(uint32_t packets, uint32_t blocks, uint32_t bulk_size, am_layout *l);
static inline bool am_pow2(uint32_t x) { return x != 0 && (x & (x - 1u)) == 0; }

/* The fixed fields of a segment: what the header and the queues' fixed
 * fields say (am_geometry_read), checked against the layout those sizes
 * imply (am_geometry_valid) before any offset read from shared memory is
 * followed: a crashed or hostile peer may have written anything there.
 * Each process keeps the copy it validated (the endpoint at creation, a
 * peer at connect) and computes every address from that copy, never from
 * the segment again; the segment's copy is only compared with it (a poll
 * or a send that finds it changed returns SYNCQ_EINVAL). */
typedef struct am_geometry {
  int32_t claim;
  uint32_t version;
  uint32_t packets, packet_shift, bulk_blocks, bulk_size;
  uint64_t size, peers_off, stale_ns;
  int32_t creator_pid;
  uint32_t pad; /* zero: the struct is compared with memcmp */
  uint64_t creator_start;
  uint64_t queue_off[AM_NQUEUES], packets_off[AM_NQUEUES], slots_off[AM_NQUEUES], data_off[AM_NQUEUES];
} am_geometry;
/* Read the geometry from a mapping of `mapped` bytes (reads only the header,
 * and the queue fields when the header's offsets lie inside the mapping). */
void am_geometry_read(const void *base, size_t mapped, am_geometry *g);
/* True when g is a layout syncq_am_create makes, of exactly `mapped` bytes. */
bool am_geometry_valid(const am_geometry *g, size_t mapped);

/* The segment at base (a mapping of `mapped` bytes) still says what the
 * validated geometry g says: what am_geometry_read and a memcmp with g
 * would answer, field by field with an early exit and nothing copied
 * (every poll and send asks it). The queues' fields are read at g's
 * offsets, which g's validation put inside the mapping, once the
 * header's offsets are found equal to them. */
static inline bool am_geometry_same(const void *base, size_t mapped, const am_geometry *g) {
  if (mapped < sizeof(am_header)) return false;
  const am_header *h = base;
  if (h->version != g->version || h->claim != g->claim || h->packets != g->packets ||
      h->packet_shift != g->packet_shift || h->bulk_blocks != g->bulk_blocks || h->bulk_size != g->bulk_size ||
      h->stale_ns != g->stale_ns || h->size != g->size || h->creator_pid != g->creator_pid ||
      h->creator_start != g->creator_start || h->peers_off != g->peers_off)
    return false;
  for (int q = 0; q < AM_NQUEUES; q++) {
    if (h->queue_off[q] != g->queue_off[q]) return false;
    const am_queue *qq = (const am_queue *)((const unsigned char *)base + g->queue_off[q]);
    if (qq->packets_off != g->packets_off[q] || qq->bulk_slots_off != g->slots_off[q] ||
        qq->bulk_data_off != g->data_off[q])
      return false;
  }
  return true;
}

/* One queue of a mapping, every address computed from a validated
 * geometry: indexes read from the segment (positions, tails) are masked
 * with these sizes, so no value another process writes can move an access
 * outside the queue's own arrays. */
typedef struct am_qview {
  void *base;
  am_queue *q;
  am_packet *pk;
  am_bulk_slot *slots;
  unsigned char *data;
  uint32_t packets, blocks, bulk_size;
  uint64_t stale_ns;
} am_qview;
static inline void am_qview_of(void *base, const am_geometry *g, int qi, am_qview *v) {
  v->base = base;
  v->q = (am_queue *)am_at(base, g->queue_off[qi]);
  v->pk = (am_packet *)am_at(base, g->packets_off[qi]);
  v->slots = (am_bulk_slot *)am_at(base, g->slots_off[qi]);
  v->data = (unsigned char *)am_at(base, g->data_off[qi]);
  v->packets = g->packets;
  v->blocks = g->bulk_blocks;
  v->bulk_size = g->bulk_size;
  v->stale_ns = g->stale_ns;
}
static inline am_packet *am_pkt_at(const am_qview *v, uint32_t pos) { return &v->pk[pos & (v->packets - 1u)]; }
static inline am_bulk_slot *am_slot_at(const am_qview *v, uint32_t pos) { return &v->slots[pos & (v->blocks - 1u)]; }
static inline unsigned char *am_data_at(const am_qview *v, uint32_t pos) {
  return v->data + (size_t)(pos & (v->blocks - 1u)) * v->bulk_size;
}

/* ---- process identity (owner.c) ---- */
/* This process's pid and start time (recomputed after fork). */
void am_self_identity(uint32_t *pid, uint64_t *start);
/* True when the process pid (with start time `start`, 0: unknown) has
 * exited, is a zombie, or the pid now names another process. */
bool am_owner_dead(uint32_t pid, uint64_t start);

#endif /* SYNCQ_AM_SEGMENT_H */
