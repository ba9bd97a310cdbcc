/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mcs.c — the MCS list-based queue lock.
 *
 * Contract
 *   Source:      Mellor-Crummey & Scott 1991, Figure 5 (acquire: swap self
 *                into tail, link behind the predecessor, spin on own flag;
 *                release: CAS tail back to nil if no successor, else wait
 *                for the link and clear the successor's flag); 003 §3.1
 *                (the linked-list queue lock, "costly atomic operations,
 *                namely compare-and-swap and fetch-and-store").
 *   Progress:    blocking; starvation-free (FIFO).
 *   Atomics:     uncontended lock: 1 swap; unlock: 2 loads + 1 CAS (the
 *                CAS is skipped when tail already names another node: a
 *                successor has swapped in, as in Concurrency Kit). A
 *                hand-over to a successor: 1 release store (BLOCK /
 *                COMPETITIVE: 1 release exchange, which reads the mark).
 *                No seq_cst store and no fence: on x86 the swap and the
 *                CAS are the only locked instructions, and nothing is
 *                stored between the statistics' counting and them. The
 *                waiting and the hand-over to a late-linking successor are
 *                out of line (the uncontended path keeps no stack frame).
 *   Memory:      the caller's syncq_lock_node per acquisition (it must stay
 *                untouched until unlock returns); never allocates.
 *   Signal-safe: trylock and unlock yes; lock with SPIN or YIELD yes.
 *   Process-shared: no (the queue links nodes by address): SYNCQ_ENOTSUP.
 *   Waiting:     SPIN (default): pause on the own node's flag; YIELD, BLOCK,
 *                COMPETITIVE via syncq/wait.h. A waiter that will sleep
 *                marks its own flag (1 -> 2 by CAS) and sleeps on it; the
 *                hand-over exchanges 0 in and wakes it only when it read 2.
 *   Destroy:     the next holder may destroy and free the lock as soon as
 *                it holds it: after the hand-over (or the CAS of tail to
 *                nil) an unlock touches nothing of the lock or of the
 *                successor's node but a futex wake on the node's flag. The releaser's short wait
 *                for a successor's link spins (SPIN) or yields every 64
 *                pauses (other disciplines: the linker may be preempted).
 *   Limits:      none.
 *   Stats:       cas_attempts, cas_failures (release), yields, blocks.
 *   Inline:      lock, trylock and unlock are static inline in
 *                syncq/static/lock/mcs.h; this file exports them and
 *                builds the ops table from them (SYNCQ_LOCK_REGISTER_FNS).
 */
#include "syncq/lock/mcs.h"

#include "../stats_internal.h"
#include "lock_internal.h"
#include "syncq/platform.h"
#include "syncq/static/lock/mcs.h"

_Static_assert(sizeof(syncq_lock_mcs_qnode) <= sizeof(syncq_lock_node), "an MCS node fits in syncq_lock_node");

int syncq_lock_mcs_init(syncq_lock_mcs *l, const syncq_lock_config *cfg) {
  if (l == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = lock_parse_config(cfg, SYNCQ_WAIT_SPIN, LOCK_WAIT_ALL, 0, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&l->tail, NULL);
  l->wait = wait;
  if (wait == SYNCQ_WAIT_COMPETITIVE) (void)syncq_wait_calibrate();
  return SYNCQ_OK;
}

int syncq_lock_mcs_destroy(syncq_lock_mcs *l) {
  if (l == NULL) return SYNCQ_EINVAL;
  return atomic_load(&l->tail) != NULL ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* The exported functions and the ops table are the static inline bodies
 * of syncq/static/lock/mcs.h (the algorithm is there). */
int syncq_lock_mcs_lock(syncq_lock_mcs *l, syncq_lock_node *node) { return syncq_lock_mcs_lock_inline(l, node); }
int syncq_lock_mcs_trylock(syncq_lock_mcs *l, syncq_lock_node *node) { return syncq_lock_mcs_trylock_inline(l, node); }
int syncq_lock_mcs_unlock(syncq_lock_mcs *l, syncq_lock_node *node) { return syncq_lock_mcs_unlock_inline(l, node); }

SYNCQ_LOCK_REGISTER_FNS(mcs, "mcs", "MCS list-based queue lock", "MCS91 Figure 5; 003 §3.1", BLOCKING,
                        SYNCQ_PROP_FIFO | SYNCQ_PROP_SIGNAL_SAFE | SYNCQ_PROP_USES_NODE, syncq_lock_mcs,
                        syncq_lock_mcs_init, syncq_lock_mcs_destroy, syncq_lock_mcs_lock_inline,
                        syncq_lock_mcs_trylock_inline, syncq_lock_mcs_unlock_inline);
