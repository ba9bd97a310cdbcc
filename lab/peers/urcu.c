/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * urcu.c — Userspace RCU's concurrent data structures (liburcu-dev)
 * behind syncq's ops tables.
 *
 * Contract (of the adapters; the algorithms are liburcu's, unchanged)
 *   Source:      liburcu 0.13 (Desnoyers et al.), Debian liburcu-dev, the
 *                inline (_LGPL_SOURCE) forms: urcu/wfcqueue.h,
 *                urcu/rculfqueue.h with the default (memb) RCU flavour,
 *                urcu/lfstack.h.
 *   Entries:     queue "urcu:wfcqueue" (wait-free enqueue, dequeue under
 *                the queue's internal mutex: cds_wfcq_dequeue_blocking),
 *                queue "urcu:rculfqueue" (lock-free Michael & Scott queue,
 *                nodes reclaimed by RCU), stack "urcu:lfstack" (wait-free
 *                push, pop under the stack's internal mutex:
 *                cds_lfs_pop_blocking).
 *   Progress:    wfcqueue and lfstack: blocking (the dequeue/pop mutex);
 *                rculfqueue: lock-free.
 *   Memory:      one malloc'd node per item (SYNCQ_PROP_ALLOCATES), freed
 *                at dequeue (wfcqueue, lfstack: the mutex makes that safe)
 *                or after a grace period by call_rcu (rculfqueue).
 *   Threads:     rculfqueue needs every calling thread registered with
 *                RCU: the adapter registers a thread on its first call and
 *                unregisters it when the thread exits (a pthread key).
 *   Signal-safe: no. Process-shared: no.
 *   Limits:      items non-NULL; unbounded (capacity is a sizing hint).
 */
#define _LGPL_SOURCE 1
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>
#include <urcu/lfstack.h>
#include <urcu/rculfqueue.h>
#include <urcu/wfcqueue.h>

#include "peer_adapter.h"
#include "syncq/queue.h"
#include "syncq/stack.h"

#define URCU_SOURCE "liburcu 0.13 (liburcu-dev)"

/* ================================================================ wfcqueue */

typedef struct wfcq_node {
  struct cds_wfcq_node node;
  void *item;
} wfcq_node;

typedef struct wfcq_box {
  struct cds_wfcq_head head; /* with the dequeuers' mutex */
  struct cds_wfcq_tail tail;
  uint64_t magic;
} wfcq_box;

static int wfcq_bytes(size_t c, size_t *b) {
  (void)c;
  if (b == NULL) return SYNCQ_EINVAL;
  *b = sizeof(wfcq_box);
  return SYNCQ_OK;
}

static int wfcq_init(wfcq_box *w, size_t c) {
  (void)c;
  if (w == NULL || (uintptr_t)w % _Alignof(wfcq_box) != 0) return SYNCQ_EINVAL;
  cds_wfcq_init(&w->head, &w->tail);
  w->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int wfcq_dequeue(wfcq_box *w, void **item);

static int wfcq_destroy(wfcq_box *w) {
  if (w == NULL || w->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  void *x;
  while (wfcq_dequeue(w, &x) == SYNCQ_OK) {
  }
  w->magic = 0;
  cds_wfcq_destroy(&w->head, &w->tail);
  return SYNCQ_OK;
}

static int wfcq_enqueue(wfcq_box *w, void *item) {
  if (w == NULL || item == NULL) return SYNCQ_EINVAL;
  wfcq_node *n = malloc(sizeof *n);
  if (n == NULL) return SYNCQ_ENOMEM;
  cds_wfcq_node_init(&n->node);
  n->item = item;
  cds_wfcq_enqueue(&w->head, &w->tail, &n->node);
  return SYNCQ_OK;
}

static int wfcq_dequeue(wfcq_box *w, void **item) {
  if (w == NULL || item == NULL) return SYNCQ_EINVAL;
  struct cds_wfcq_node *n = cds_wfcq_dequeue_blocking(&w->head, &w->tail);
  if (n == NULL) return SYNCQ_EMPTY;
  wfcq_node *wn = caa_container_of(n, wfcq_node, node);
  *item = wn->item;
  free(wn);
  return SYNCQ_OK;
}

/* Not SYNCQ_PROP_SPINS_ON_PREEMPTED: a dequeue that finds an enqueuer's
 * node not yet linked (___cds_wfcq_node_sync_next) spins WFCQ_ADAPT_ATTEMPTS
 * times, then sleeps (poll) until it is; the dequeuers' mutex sleeps. */
SYNCQ_QUEUE_REGISTER_FNS(urcu_wfcq, "urcu:wfcqueue", "liburcu wait-free concurrent queue (dequeue under a mutex)",
                         URCU_SOURCE, BLOCKING,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, wfcq_box,
                         wfcq_bytes, wfcq_init, wfcq_destroy, wfcq_enqueue, wfcq_dequeue);

/* ================================================================ rculfqueue */

static pthread_key_t rcu_key;
static pthread_once_t rcu_once = PTHREAD_ONCE_INIT;
static int rcu_key_ok;

static void rcu_thread_exit(void *p) {
  (void)p;
  rcu_unregister_thread();
}

static void rcu_key_make(void) { rcu_key_ok = pthread_key_create(&rcu_key, rcu_thread_exit) == 0; }

/* Register the calling thread with RCU once (unregistered at its exit). */
static int rcu_me(void) {
  static __thread int registered;
  if (registered) return SYNCQ_OK;
  pthread_once(&rcu_once, rcu_key_make);
  if (!rcu_key_ok) return SYNCQ_ESYS;
  rcu_register_thread();
  /* any non-NULL value makes the destructor run at thread exit */
  if (pthread_setspecific(rcu_key, &registered) != 0) {
    rcu_unregister_thread();
    return SYNCQ_ESYS;
  }
  registered = 1;
  return SYNCQ_OK;
}

typedef struct lfq_node {
  struct cds_lfq_node_rcu node;
  struct rcu_head rcu;
  void *item;
} lfq_node;

typedef struct lfq_box {
  struct cds_lfq_queue_rcu q;
  uint64_t magic;
} lfq_box;

static void lfq_free(struct rcu_head *h) { free(caa_container_of(h, lfq_node, rcu)); }

static int lfq_bytes(size_t c, size_t *b) {
  (void)c;
  if (b == NULL) return SYNCQ_EINVAL;
  *b = sizeof(lfq_box);
  return SYNCQ_OK;
}

static int lfq_init(lfq_box *l, size_t c) {
  (void)c;
  if (l == NULL || (uintptr_t)l % _Alignof(lfq_box) != 0) return SYNCQ_EINVAL;
  int r = rcu_me();
  if (r != SYNCQ_OK) return r;
  cds_lfq_init_rcu(&l->q, call_rcu);
  l->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int lfq_dequeue(lfq_box *l, void **item);

static int lfq_destroy(lfq_box *l) {
  if (l == NULL || l->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  void *x;
  while (lfq_dequeue(l, &x) == SYNCQ_OK) {
  }
  l->magic = 0;
  if (cds_lfq_destroy_rcu(&l->q) != 0) return SYNCQ_EBUSY;
  /* the queue's own dummy and the freed nodes go through call_rcu: wait
   * for them before the caller frees the storage */
  rcu_barrier();
  return SYNCQ_OK;
}

static int lfq_enqueue(lfq_box *l, void *item) {
  if (l == NULL || item == NULL) return SYNCQ_EINVAL;
  int r = rcu_me();
  if (r != SYNCQ_OK) return r;
  lfq_node *n = malloc(sizeof *n);
  if (n == NULL) return SYNCQ_ENOMEM;
  cds_lfq_node_init_rcu(&n->node);
  n->item = item;
  rcu_read_lock(); /* liburcu: enqueue and dequeue inside a read-side section */
  cds_lfq_enqueue_rcu(&l->q, &n->node);
  rcu_read_unlock();
  return SYNCQ_OK;
}

static int lfq_dequeue(lfq_box *l, void **item) {
  if (l == NULL || item == NULL) return SYNCQ_EINVAL;
  int r = rcu_me();
  if (r != SYNCQ_OK) return r;
  rcu_read_lock();
  struct cds_lfq_node_rcu *n = cds_lfq_dequeue_rcu(&l->q);
  rcu_read_unlock();
  if (n == NULL) return SYNCQ_EMPTY;
  lfq_node *ln = caa_container_of(n, lfq_node, node);
  *item = ln->item;
  call_rcu(&ln->rcu, lfq_free); /* other dequeuers may still read it */
  return SYNCQ_OK;
}

SYNCQ_QUEUE_REGISTER_FNS(urcu_lfq, "urcu:rculfqueue", "liburcu RCU lock-free queue (Michael & Scott, RCU reclamation)",
                         URCU_SOURCE, LOCK_FREE,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES, lfq_box,
                         lfq_bytes, lfq_init, lfq_destroy, lfq_enqueue, lfq_dequeue);

/* ================================================================ lfstack */

typedef struct lfs_node {
  struct cds_lfs_node node;
  void *item;
} lfs_node;

typedef struct lfs_box {
  struct cds_lfs_stack s; /* with the poppers' mutex */
  uint64_t magic;
} lfs_box;

static int lfs_init(lfs_box *b, const syncq_stack_config *cfg) {
  if (b == NULL || (uintptr_t)b % _Alignof(lfs_box) != 0) return SYNCQ_EINVAL;
  if (cfg && (cfg->capacity > SYNCQ_STACK_MAX_CAPACITY || cfg->max_threads > SYNCQ_STACK_MAX_THREADS))
    return SYNCQ_EINVAL;
  cds_lfs_init(&b->s);
  b->magic = PEER_MAGIC_LIVE;
  return SYNCQ_OK;
}

static int lfs_pop(lfs_box *b, void **item);

static int lfs_destroy(lfs_box *b) {
  if (b == NULL || b->magic != PEER_MAGIC_LIVE) return SYNCQ_EINVAL;
  void *x;
  while (lfs_pop(b, &x) == SYNCQ_OK) {
  }
  b->magic = 0;
  cds_lfs_destroy(&b->s);
  return SYNCQ_OK;
}

static int lfs_push(lfs_box *b, void *item) {
  if (b == NULL || item == NULL) return SYNCQ_EINVAL;
  lfs_node *n = malloc(sizeof *n);
  if (n == NULL) return SYNCQ_ENOMEM;
  cds_lfs_node_init(&n->node);
  n->item = item;
  cds_lfs_push(&b->s, &n->node);
  return SYNCQ_OK;
}

static int lfs_pop(lfs_box *b, void **item) {
  if (b == NULL || item == NULL) return SYNCQ_EINVAL;
  struct cds_lfs_node *n = cds_lfs_pop_blocking(&b->s);
  if (n == NULL) return SYNCQ_EMPTY;
  lfs_node *ln = caa_container_of(n, lfs_node, node);
  *item = ln->item;
  free(ln); /* pops are serialised by the mutex; pushes never read nodes */
  return SYNCQ_OK;
}

SYNCQ_STACK_REGISTER_FNS(urcu_lfs, "urcu:lfstack", "liburcu lock-free stack (pop under a mutex)", URCU_SOURCE, BLOCKING,
                         SYNCQ_PROP_PEER | SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_ALLOCATES, lfs_box, lfs_init,
                         lfs_destroy, lfs_push, lfs_pop);

/* A forked child has no call_rcu thread (fork copies only the caller), so
 * its first rcu_barrier() (lfq_destroy) would wait forever for callbacks
 * nobody runs; liburcu's fork protocol pauses the threads around the fork
 * and gives the child a new one (liburcu's README, "Interaction with
 * fork()"). Nothing to do where call_rcu was never used. */
void lab_peer_urcu_before_fork(void) { call_rcu_before_fork(); }
void lab_peer_urcu_after_fork_parent(void) { call_rcu_after_fork_parent(); }
void lab_peer_urcu_after_fork_child(void) { call_rcu_after_fork_child(); }

int lab_peer_urcu_register(unsigned flags, char *why, size_t len) {
  (void)flags;
  int n = 0, st = SYNCQ_OK;
  n += peer_add(&syncq_queue_urcu_wfcq_algo, &st);
  n += peer_add(&syncq_queue_urcu_lfq_algo, &st);
  n += peer_add(&syncq_stack_urcu_lfs_algo, &st);
  if (n == 0) snprintf(why, len, "registry refused: %s", syncq_strerror(st));
  return n;
}
