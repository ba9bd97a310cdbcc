/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_internal.h — the process-local handles of active messages (endpoint,
 * peer, token), the transport table, and the segment's life (endpoint.c):
 * layer 4 of src/am (the order is at the top of am_segment.h).
 */
#ifndef SYNCQ_AM_INTERNAL_H
#define SYNCQ_AM_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "am_claim.h"
#include "am_segment.h"
#include "syncq/am.h"

/* ---- transports ----
 * A peer, a token or an endpoint may route through a transport other than
 * the queue block (src/am/mpi/: MPI between the ranks of a job). The core
 * library holds only this table; it never depends on the transport. */
typedef struct am_transport {
  /* Send a message to rank `dest` (qi: AM_Q_REQUEST or AM_Q_REPLY); the
   * arguments are already checked. The statuses of syncq_am_request. */
  int (*send)(void *ctx, int dest, int qi, unsigned handler, const void *data, size_t len, bool bulk,
              const uint32_t *args, unsigned nargs, unsigned flags);
  /* Run handlers of at most `budget` messages that came through the
   * transport; returns how many. */
  unsigned (*poll)(void *ctx, unsigned budget);
  /* Bytes of one bulk message through the transport. */
  uint32_t bulk_size;
  void *ctx;
} am_transport;

/* ---- process-local handles ---- */
/* A clock read spread over the polls of a stuck head, or of an empty
 * lock-free queue (am.c, "the clock in a stream of events"): read every `every`-th poll, `every` set from
 * the rate the last reads measured. Relaxed atomics: written by the
 * thread holding the queue (polling[qi] orders them between threads). */
typedef struct am_pace {
  _Atomic(uint32_t) left;    /* events to let pass before the next read (0: read at the next) */
  _Atomic(uint32_t) every;   /* events from the last read to the next */
  _Atomic(uint64_t) last_ns; /* the last read (0: none yet) */
} am_pace;

typedef struct am_handler_entry {
  syncq_am_handler fn;
  void *ctx;
  char name[SYNCQ_AM_NAME_MAX + 1];
} am_handler_entry;

/* syncq_am_peer's dead_check_ns once its creator was found dead (by a
 * send's look or syncq_am_peer_check): final, every send answers
 * SYNCQ_EDEAD without looking again. */
#define AM_PEER_DEAD 1u
struct syncq_am_peer {
  /* a send looks at the destination's creator again from this time on
   * (am.c, am_creator_gone): one that finds the queue full (NOWAIT), and
   * one with room once its thread's paced clock (am_send_now) has passed
   * it. Read by every send, written once a stale interval: on the line of
   * base, which every send reads anyway. */
  _Atomic(uint64_t) dead_check_ns;
  void *base;          /* the mapping of the destination's segment */
  uint64_t connect_ns; /* the connect's look at the creator (am_peer_make); set once, read by the first send */
  size_t size;
  am_geometry geo;           /* validated at connect; every send computes its addresses from it */
  const am_claim_ops *claim; /* the claim geo names, chosen at connect */
  syncq_am_endpoint *self;   /* polled while stalled; replies come here (may be NULL) */
  uint16_t src_index;        /* self's index in the destination's peer table, AM_NO_PEER */
  char name[SYNCQ_AM_NAME_MAX + 1];
  const am_transport *tp; /* non-NULL: a peer reached through a transport (base unused) */
  int trank;              /* its rank in the transport */
};

struct syncq_am_endpoint {
  void *base;
  size_t size;
  am_geometry geo;           /* as created; a poll refuses a segment that no longer says so */
  const am_claim_ops *claim; /* the claim geo names, chosen at creation */
  pid_t owner;               /* the creating process: the only one that polls and destroys */
  char name[SYNCQ_AM_NAME_MAX + 1];
  am_handler_entry handlers[SYNCQ_AM_MAX_HANDLERS];
  syncq_am_handler default_fn;
  void *default_ctx;
  syncq_am_peer *reply_peer[SYNCQ_AM_MAX_PEERS]; /* connected on the first reply */
  /* Nonzero while a poll of that queue is under way: the mark of the
   * thread polling it (am.c, am_poller_self), further up its stack (a
   * handler that polls) or on another thread of this process (a second
   * polling thread, a send stalled on a full queue). Taken with a CAS
   * and given back with a release store by am_poll_queue, so one thread
   * at a time reads and writes the queue's head and the recovery state
   * below (their plain accesses are ordered by it). On a line of its
   * own: threads that find a queue busy read it (a stalled sender every
   * few microseconds) while the holder writes the state below for every
   * message; process-local, so the segment's layout is untouched. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uintptr_t) polling[AM_NQUEUES];
  /* The stack pointer of the poll holding the queue, stored before each
   * handler's call (am.c, "a poll that never returned"), read only by
   * the thread whose mark is in polling[qi]: a mark of its own with no
   * poll of that frame left on its stack is one a handler left by never
   * returning (longjmp), and that thread takes the queue back. On the
   * line after polling's, with the rest of the holder's state. */
  SYNCQ_CACHELINE_ALIGNED uintptr_t taken_frame[AM_NQUEUES];
  uint32_t stuck_pos[AM_NQUEUES];       /* head position the receiver is waiting at */
  uint64_t stuck_since[AM_NQUEUES];     /* since when (0: not waiting) */
  am_pace stuck_pace[AM_NQUEUES];       /* the clock of the polls at a CLAIMED head (am.c, unstick) */
  am_pace idle_pace[AM_NQUEUES];        /* lock-free: the clock of the polls of an empty queue (am.c, unstick) */
  uint64_t unclaimed_since[AM_NQUEUES]; /* lock-free: head assigned but not claimed since */
  uint32_t unclaimed_tail[AM_NQUEUES];  /* lock-free: the tail then (positions before it were assigned) */
  const am_transport *tp;               /* also polled by syncq_am_poll (may be NULL) */
  bool tp_first;                        /* the next syncq_am_poll runs tp's messages first */
  /* syncq_am_wait (am.c, "Sleeping"): SYNCQ_AM_WAIT_YIELD_NS and
   * SYNCQ_AM_WAIT_SLEEP_SLICE_NS; tests change them (am_test.c: a wait
   * that sleeps at once, a slice longer than the wait's timeout, so that
   * a lost wake-up fails instead of costing one slice). */
  uint64_t sleep_after_ns; /* a wait sleeps between polls once it has waited this long */
  uint64_t sleep_slice_ns; /* the longest one futex wait lasts */
  /* The threads of this process in syncq_am_wait's sleep (am.c,
   * am_sleep), with a lock bit while one of them changes the count and
   * writes it to the segment's `asleep`: the count lives here, where no
   * other process writes, and the segment holds a copy for senders. */
  _Atomic(uint32_t) waiters;
};

struct syncq_am_token {
  syncq_am_endpoint *ep;
  int queue;
  uint16_t src;
  bool replied;
  const am_transport *tp; /* non-NULL: the message came through a transport; replies go back through it */
  int trank;              /* the requester's rank there */
};

/* ---- segments (endpoint.c) ---- */
bool am_name_ok(const char *name);
/* Map the endpoint segment `name` and validate its geometry (copied to
 * *geo): SYNCQ_OK, SYNCQ_ENOENT, SYNCQ_EINVAL (not an endpoint, or a
 * geometry no creation makes), SYNCQ_EDEAD (closed), SYNCQ_ESYS. */
int am_map(const char *name, void **base, size_t *size, am_geometry *geo);
/* Make a peer (connection) over a mapping; NULL self: no replies. */
int am_peer_make(syncq_am_endpoint *self, const char *name, syncq_am_peer **out);
/* A peer that sends through transport tp to rank `rank`; self is polled
 * while a send stalls (endpoint.c). */
int am_peer_transport(syncq_am_endpoint *self, const am_transport *tp, int rank, syncq_am_peer **out);
/* What a send to peer p would find of its destination's end, read and
 * never written (a transport, src/am/mpi/, reports its node-local peers
 * lost with it): AM_END_CLOSED when the destination's endpoint was closed
 * (syncq_am_destroy's `closed`: one load from the mapping, no system
 * call); else, with `look`, AM_END_DIED when the process that created it
 * is found dead (am_owner_dead: one read of /proc), its pid in *pid;
 * else AM_END_LEAVING when its owner has begun to leave
 * (am_endpoint_leave; a send finds it closed); else AM_END_LIVE. A peer
 * reached through a transport is AM_END_LIVE: the transport judges it.
 * The send's own schedule of looks at the creator (dead_check_ns) is left
 * alone. */
enum { AM_END_LIVE = 0, AM_END_CLOSED = 1, AM_END_DIED = 2, AM_END_LEAVING = 3 };
int am_peer_end(const syncq_am_peer *p, bool look, uint32_t *pid);
/* The owner of ep begins to leave (a transport's destroy, src/am/mpi/):
 * its `closed` word says AM_LEAVING, so every send to it from then on
 * returns SYNCQ_EDEAD as to a closed endpoint and a connect is refused,
 * while the owner may still poll what is already queued; syncq_am_destroy
 * closes it later. No effect on a closed endpoint, or with ep NULL. */
void am_endpoint_leave(syncq_am_endpoint *ep);

#endif /* SYNCQ_AM_INTERNAL_H */
