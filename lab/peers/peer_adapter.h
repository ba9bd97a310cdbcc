/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peer_adapter.h — what the adapters in lab/peers/ share: their entry
 * points (called by peers.c) and the small helpers every adapter uses to
 * put a peer structure behind a syncq ops table. Each peer structure is
 * one statement of its family's registration macro
 * (SYNCQ_QUEUE_REGISTER_FNS and the others, in C and C++ alike) after its
 * typed operations; its register function hands the entries to
 * peer_add(). Not a public header.
 */
#ifndef LAB_PEER_ADAPTER_H
#define LAB_PEER_ADAPTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "syncq/registry.h"
#include "peers.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each adapter: register its structures (flags as lab_peers_register) with
 * peer_add(); return how many it added, or 0 after writing why into
 * why[len] (it cannot run here). */
int lab_peer_ck_register(unsigned flags, char *why, size_t len);
int lab_peer_urcu_register(unsigned flags, char *why, size_t len);
/* liburcu's call_rcu threads around a fork (lab_peers_before_fork). */
void lab_peer_urcu_before_fork(void);
void lab_peer_urcu_after_fork_parent(void);
void lab_peer_urcu_after_fork_child(void);
int lab_peer_dpdk_register(unsigned flags, char *why, size_t len);
int lab_peer_boost_register(unsigned flags, char *why, size_t len);
int lab_peer_tbb_register(unsigned flags, char *why, size_t len);
int lab_peer_moodycamel_register(unsigned flags, char *why, size_t len);
int lab_peer_crossbeam_register(unsigned flags, char *why, size_t len);

/* syncq_registry_add() that treats "already there" as success, so that
 * registering twice (tests, then the lab) is harmless. 1 when added or
 * present, 0 when refused (the status is left in *st). */
int peer_add(const syncq_algo *a, int *st);

/* A power of two >= 2 (the bounded queues' capacity rule, queue.h). */
static inline int peer_pow2(size_t c) { return c >= 2 && (c & (c - 1)) == 0; }

/* Largest capacity a peer ring accepts: 2^30 items keeps every size
 * computation (ring of 2 x capacity pointers) far from overflow. */
#define PEER_MAX_CAPACITY ((size_t)1 << 30)

/* Magic numbers marking an initialised adapter, so that destroy of
 * storage that is not (or no longer) a live structure is SYNCQ_EINVAL. */
#define PEER_MAGIC_LIVE UINT64_C(0x70656572206c6976) /* "peer liv" */

/* Storage of the adapters whose structure is a C++ or Rust object made on
 * the heap at init: the ops table's storage holds this box. */
typedef struct peer_box {
  uint64_t magic; /* PEER_MAGIC_LIVE while obj is live */
  void *obj;
  size_t capacity;
} peer_box;

#ifdef __cplusplus
}
#endif
#endif /* LAB_PEER_ADAPTER_H */
