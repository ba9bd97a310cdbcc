/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * clh_nodes.h — the node accounting that the CLH drivers (clh.c,
 * clh_tp.c) check after their threads: both locks keep their nodes in
 * the lock, and once every thread has left, each node has one role: the
 * released tail, the spare its last holder left in it (set, and not the
 * tail itself), or a node on the pool's free list. A node lost or given
 * two roles fails an assertion here. Included by a driver after the
 * lock's source and src/reclaim/freelist.c; its loop is left whole
 * (models/genmc/run passes -no-unroll=clh_nodes_accounted).
 */
#ifndef SYNCQ_MODELS_GENMC_CLH_NODES_H
#define SYNCQ_MODELS_GENMC_CLH_NODES_H

/* tail: the lock's tail word; spare: the spare field of tail's node;
 * pool: the lock's free list; nodes: how many nodes the lock has. Drains
 * the pool (the lock is unusable afterwards). */
static void clh_nodes_accounted(uint64_t tail, uint64_t spare, syncq_freelist *pool, unsigned nodes) {
  assert(spare != 0 && (spare & 0xffu) != (tail & 0xffu));
  unsigned pooled = 0;
  syncq_fl_link *link;
  while (syncq_freelist_pop(pool, &link) == SYNCQ_OK) pooled++;
  assert(pooled == nodes - 2u);
}

#endif
