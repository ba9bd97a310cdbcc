/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_queue_contract.h — queues whose contract is "linearizable, except
 * at FULL", which the registry's properties cannot say: they are
 * registered without SYNCQ_PROP_LINEARIZABLE (a FULL answer may come while
 * the queue holds fewer than capacity items, with no completed operation
 * to account for it), and the drivers check them for linearizability on
 * runs that cannot fill them (queue_lincheck_test's histories of at most
 * 20 items in a capacity of 32; queue_test's prefilled run). Each entry
 * says where its contract is written.
 */
#ifndef SYNCQ_TEST_QUEUE_CONTRACT_H
#define SYNCQ_TEST_QUEUE_CONTRACT_H

#include <stdbool.h>
#include <string.h>

#include "syncq/registry.h"

static const char *const test_queues_linearizable_except_full[] = {
  "scq",            /* src/queue/scq.c: FULL counts indices taken from aq, not yet back in fq */
  "scq-remap",      /* the same code, with the cache remapping */
  "wcq",            /* src/queue/wcq.c: as scq (its two rings of indices) */
  "scq2",           /* src/queue/scq2.c: FULL counts items being enqueued, and taken but not yet consumed */
  "dpdk:ring_mpmc", /* lab/peers/dpdk.c: FULL counts claimed, unpublished slots */
  "ck:ring_mpmc",   /* lab/peers/ck.c: the same in ck_ring's MPMC enqueue */
  "boost:queue",    /* lab/peers/boost.cpp: FULL counts nodes in flight */
};

static inline bool test_queue_linearizable_except_full(const syncq_algo *a) {
  for (size_t k = 0; k < sizeof test_queues_linearizable_except_full / sizeof test_queues_linearizable_except_full[0];
       k++)
    if (strcmp(a->name, test_queues_linearizable_except_full[k]) == 0) return true;
  return false;
}

#endif /* SYNCQ_TEST_QUEUE_CONTRACT_H */
