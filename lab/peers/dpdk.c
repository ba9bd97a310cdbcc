/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dpdk.c — DPDK's rte_ring (libdpdk-dev) behind the queue ops table,
 * without the EAL: rte_ring_init() on memory the adapter allocates, no
 * hugepages, no devices, no rte_eal_init().
 *
 * Contract (of the adapter; the algorithm is DPDK's, unchanged)
 *   Source:      DPDK 22.11 librte_ring (Debian libdpdk-dev): rte_ring.h,
 *                rte_ring_init(), rte_ring_enqueue(), rte_ring_dequeue(),
 *                which dispatch on the ring's sync mode.
 *   Entries:     "dpdk:ring_mpmc" (the classic multi-producer /
 *                multi-consumer mode: CAS on the head, then wait for earlier
 *                claimers to move the tail), "dpdk:ring_rts" (relaxed tail
 *                sync: head/tail counters, the last one out moves the tail),
 *                "dpdk:ring_hts" (head/tail sync: one operation in flight per
 *                side, serialised).
 *   Linearizable: HTS yes; MP/MC except at FULL; RTS no, at EMPTY and
 *                FULL (see the entries below).
 *   Progress:    blocking (every mode waits for other threads' claimed
 *                slots; HTS serialises each side).
 *   Atomics:     MP/MC: 1 CAS + 1 store per operation uncontended; RTS:
 *                2 CAS (head, tail); HTS: 1 64-bit CAS + 1 store.
 *   Memory:      RING_F_EXACT_SZ: the ring holds exactly `capacity` items
 *                (DPDK rounds its slot array up to the next power of two
 *                above it); allocated at init, freed at destroy.
 *   Signal-safe: no. Process-shared: no (not promised by this adapter).
 *   Limits:      capacity a power of two >= 2, at most PEER_MAX_CAPACITY
 *                (DPDK's limit, RTE_RING_SZ_MASK, is far above).
 */
#include <errno.h>
#include <rte_ring.h>
#include <stdio.h>
#include <stdlib.h>

#include "peer_adapter.h"
#include "syncq/platform.h"
#include "syncq/queue.h"

#define DPDK_SOURCE "DPDK 22.11 rte_ring (libdpdk-dev), without EAL"

typedef struct dpdk_box {
  uint64_t magic;
  struct rte_ring *ring;
} dpdk_box;

static int box_bytes(size_t c, size_t *b) {
  if (b == NULL || !peer_pow2(c) || c > PEER_MAX_CAPACITY) return SYNCQ_EINVAL;
  *b = sizeof(dpdk_box);
  return SYNCQ_OK;
}

static int box_init(dpdk_box *d, size_t c, unsigned flags) {
  if (d == NULL || (uintptr_t)d % _Alignof(dpdk_box) != 0 || !peer_pow2(c) || c > PEER_MAX_CAPACITY)
    return SYNCQ_EINVAL;
  /* EXACT_SZ: DPDK sizes the slot array to the power of two above c */
  ssize_t bytes = rte_ring_get_memsize(rte_align32pow2((uint32_t)c + 1));
  if (bytes < 0) return SYNCQ_EINVAL;
  struct rte_ring *r = syncq_alloc_aligned((size_t)bytes, RTE_CACHE_LINE_SIZE);
  if (r == NULL) return SYNCQ_ENOMEM;
  if (rte_ring_init(r, "syncq-peer", (unsigned)c, flags | RING_F_EXACT_SZ) != 0) {
    free(r);
    return SYNCQ_ENOTSUP;
  }
  d->ring = r;
  d->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int init_mpmc(dpdk_box *d, size_t c) { return box_init(d, c, 0); }
static int init_rts(dpdk_box *d, size_t c) { return box_init(d, c, RING_F_MP_RTS_ENQ | RING_F_MC_RTS_DEQ); }
static int init_hts(dpdk_box *d, size_t c) { return box_init(d, c, RING_F_MP_HTS_ENQ | RING_F_MC_HTS_DEQ); }

static int box_destroy(dpdk_box *d) {
  if (d == NULL || d->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  d->magic = 0;
  free(d->ring);
  return SYNCQ_OK;
}

static int box_enqueue(dpdk_box *d, void *item) {
  if (d == NULL || item == NULL) return SYNCQ_EINVAL;
  return rte_ring_enqueue(d->ring, item) == 0 ? SYNCQ_OK : SYNCQ_FULL;
}

static int box_dequeue(dpdk_box *d, void **item) {
  if (d == NULL || item == NULL) return SYNCQ_EINVAL;
  return rte_ring_dequeue(d->ring, item) == 0 ? SYNCQ_OK : SYNCQ_EMPTY;
}

/* SYNCQ_PROP_SPINS_ON_PREEMPTED on every mode (rte_ring_*_pvt.h), each
 * waiting with rte_pause(), never yielding:
 *   MP/MC: after its CAS on the head, an operation waits
 *          (rte_wait_until_equal_32) for the tail to reach its old head,
 *          i.e. for every earlier claimer to finish;
 *   RTS:   __rte_ring_rts_head_wait spins while head - tail exceeds
 *          htd_max; the tail moves only when the last thread in flight
 *          finishes, so a preempted one stops it and the others spin;
 *   HTS:   __rte_ring_hts_head_wait spins until head == tail, i.e. until
 *          the one operation in flight on that side completes. */
#define DPDK_PROPS (SYNCQ_PROP_PEER | SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED | SYNCQ_PROP_SPINS_ON_PREEMPTED)

/* One entry per mode: only its init (the ring's flags) differs. */
#define DPDK_RING(mode, title, props)                                                                           \
  SYNCQ_QUEUE_REGISTER_FNS(dpdk_ring_##mode, "dpdk:ring_" #mode, title, DPDK_SOURCE, BLOCKING, props, dpdk_box, \
                           box_bytes, init_##mode, box_destroy, box_enqueue, box_dequeue)

/* MP/MC: linearizable except at FULL, so not SYNCQ_PROP_LINEARIZABLE
 * (tests/support/test_queue_contract.h: checked on runs that cannot
 * fill it). Each side has a head (claims) and a tail (publications,
 * in claim order): __rte_ring_move_prod_head counts free room as
 * capacity + cons.tail - prod.head, __rte_ring_move_cons_head counts
 * entries as prod.tail - cons.head. A producer that has claimed a slot
 * (prod.head) but not yet moved prod.tail takes room other producers
 * see as used while consumers do not see its item (so, capacity 1: an
 * enqueue answers FULL, then a dequeue answers EMPTY, both while that
 * producer is in flight: no order of the three explains both); a
 * consumer between cons.head and cons.tail does the same from the
 * other side. Taking an enqueue at its prod.tail store and a dequeue at
 * its cons.head CAS, every OK and every EMPTY is linearizable (the
 * entries count is read against exactly those two counters, and a
 * producer's slot is written before its tail moves); FULL alone reads
 * the other two. The linearizability runs saw it on a 16-PU machine
 * (1 of 1,250 histories at capacity 2 or 4). */
DPDK_RING(mpmc, "DPDK rte_ring, multi-producer/multi-consumer", DPDK_PROPS);
/* RTS moves the tail only when the last of the concurrent producers
 * (consumers) is done, so a completed enqueue can stay invisible to a
 * dequeue that then answers EMPTY on a non-empty ring (the driver's
 * prefilled run saw it): not linearizable at EMPTY and FULL. */
DPDK_RING(rts, "DPDK rte_ring, relaxed tail sync (RTS)", DPDK_PROPS);
/* HTS: linearizable. __rte_ring_hts_move_{prod,cons}_head first wait
 * for head == tail on their side, so at most one operation per side is
 * between claim and publication, and the side that counts its room or
 * its entries is never in flight itself: FULL reads prod.head ==
 * prod.tail against cons.tail, EMPTY reads cons.head == cons.tail
 * against prod.tail; taking each operation at its tail store, both
 * read exactly the abstract queue [cons.tail, prod.tail). */
DPDK_RING(hts, "DPDK rte_ring, head/tail sync (HTS)", DPDK_PROPS | SYNCQ_PROP_LINEARIZABLE);

static const syncq_algo *const dpdk_algos[] = {
  &syncq_queue_dpdk_ring_mpmc_algo,
  &syncq_queue_dpdk_ring_rts_algo,
  &syncq_queue_dpdk_ring_hts_algo,
};

int lab_peer_dpdk_register(unsigned flags, char *why, size_t len) {
  (void)flags;
  /* can rte_ring run here without the EAL? one round trip per mode */
  for (size_t i = 0; i < sizeof dpdk_algos / sizeof dpdk_algos[0]; i++) {
    const syncq_queue_ops *ops = dpdk_algos[i]->ops;
    dpdk_box b;
    void *out = NULL;
    int st = ops->init(&b, 4);
    if (st != SYNCQ_OK) {
      snprintf(why, len, "rte_ring_init() without EAL failed for %s: %s", dpdk_algos[i]->name, syncq_strerror(st));
      return 0;
    }
    int ok = ops->enqueue(&b, &b) == SYNCQ_OK && ops->dequeue(&b, &out) == SYNCQ_OK && out == &b;
    ops->destroy(&b);
    if (!ok) {
      snprintf(why, len, "rte_ring without EAL: a round trip through %s failed", dpdk_algos[i]->name);
      return 0;
    }
  }
  int n = 0, st = SYNCQ_OK;
  for (size_t i = 0; i < sizeof dpdk_algos / sizeof dpdk_algos[0]; i++) n += peer_add(dpdk_algos[i], &st);
  if (n == 0) snprintf(why, len, "registry refused: %s", syncq_strerror(st));
  return n;
}
