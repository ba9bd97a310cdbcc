/*
 * syncq/lock.h — mutual-exclusion locks: the family's ops table and the
 * generic API.
 *
 * Every lock has init / destroy / lock / trylock / unlock. Queue locks
 * (MCS, CLH, Anderson, the array queue locks of 003) need a per-acquisition
 * record: the caller passes the same syncq_lock_node to lock() and to the
 * matching unlock() (one node per thread per held lock; it must stay alive
 * and untouched while the lock is held or being waited for). Locks that do
 * not need it ignore it, so code written against the ops table always
 * passes one.
 *
 * A lock takes its waiting discipline (busy-wait with backoff, yield,
 * immediate blocking, competitive spinning: syncq/wait.h) from its config
 * where the algorithm allows.
 */
#ifndef SYNCQ_LOCK_H
#define SYNCQ_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/registry.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-acquisition record of queue locks: two cache lines of opaque space. */
typedef struct syncq_lock_node {
  SYNCQ_CACHELINE_ALIGNED unsigned char opaque[2 * SYNCQ_CACHELINE];
} syncq_lock_node;

/* Options of a lock at init; a NULL config means the defaults. */
typedef struct syncq_lock_config {
  unsigned max_threads; /* Anderson / array locks: slots (0: default); beyond -> SYNCQ_ELIMIT */
  int wait;             /* a syncq_wait_discipline (syncq/wait.h); 0 = the algorithm's default */
  bool process_shared;  /* will live in memory shared between processes (SYNCQ_ENOTSUP if it cannot) */
} syncq_lock_config;

/* The lock family's ops table (syncq_algo.ops of a lock). Every function
 * returns a syncq_status and validates its pointers (SYNCQ_EINVAL). */
typedef struct syncq_lock_ops {
  size_t size;  /* bytes of one lock */
  size_t align; /* its alignment */
  int (*init)(void *lock, const syncq_lock_config *cfg);
  int (*destroy)(void *lock);
  int (*lock)(void *lock, syncq_lock_node *node);
  int (*trylock)(void *lock, syncq_lock_node *node); /* SYNCQ_OK or SYNCQ_EBUSY */
  int (*unlock)(void *lock, syncq_lock_node *node);
} syncq_lock_ops;

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_LOCK_H */
