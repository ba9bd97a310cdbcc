/*
 * central.c — the sense-reversing centralized barrier, CAS and FAA forms.
 *
 * Contract
 *   Source:      003 §3.3 (each arrival increments a shared counter
 *                atomically and spins on a sense variable; the last one
 *                resets the counter and toggles the sense), with LL-SC (here
 *                a CAS loop: "central-cas") or a fetchop (here one
 *                fetch-and-add: "central-faa"); Mellor-Crummey & Scott 1991
 *                §3.1. The thread reads the sense before it arrives, so the
 *                barrier keeps no per-thread local sense.
 *   Progress:    blocking.
 *   Atomics:     per arrival: 1 load + 1 fetch-and-add (or 1 load + CAS
 *                loop); the last also 2 stores.
 *   Memory:      caller's storage, two cache lines; never allocates.
 *   Signal-safe: no (a barrier waits for other threads).
 *   Process-shared: yes (no pointers; shared futex when blocking).
 *   Waiting:     SPIN (default) pauses on the sense; YIELD, BLOCK,
 *                COMPETITIVE (spin limit x threads not yet arrived) via
 *                syncq/wait.h.
 *   Limits:      threads <= SYNCQ_BARRIER_MAX_THREADS.
 *   Stats:       cas_attempts, cas_failures (central-cas), yields, blocks.
 */
#include "syncq/barrier/central.h"

#include "../stats_internal.h"
#include "barrier_internal.h"

int syncq_barrier_central_init(syncq_barrier_central *b, const syncq_barrier_config *cfg) {
  if (b == NULL) return SYNCQ_EINVAL;
  int wait, ps;
  int r = barrier_parse_config(cfg, SYNCQ_WAIT_SPIN, BAR_WAIT_ALL, 1, &wait, &ps);
  if (r != SYNCQ_OK) return r;
  atomic_init(&b->count, 0u);
  atomic_init(&b->sense, 0u);
  atomic_init(&b->sleepers, 0u);
  b->threads = cfg->threads;
  b->wait = wait;
  b->process_shared = ps != 0;
  return SYNCQ_OK;
}

int syncq_barrier_central_destroy(syncq_barrier_central *b) {
  if (b == NULL) return SYNCQ_EINVAL;
  return atomic_load(&b->count) != 0u ? SYNCQ_EBUSY : SYNCQ_OK;
}

/* After arriving as the `arrived`-th thread of the episode whose sense
 * was `s`. */
static int finish(syncq_barrier_central *b, uint32_t s, uint32_t arrived) {
  if (arrived == b->threads) {
    /* relaxed: the next episode's arrivals read it only after they see the
     * new sense (the release/seq_cst store below) */
    atomic_store_explicit(&b->count, 0u, memory_order_relaxed);
    barrier_signal(&b->sense, s ^ 1u, b->wait, b->process_shared, &b->sleepers);
    return SYNCQ_OK;
  }
  barrier_await_change(&b->sense, s, b->wait, b->process_shared, barrier_spin_limit(b->wait, b->threads - arrived),
                       &b->sleepers);
  return SYNCQ_OK;
}

int syncq_barrier_central_faa_wait(syncq_barrier_central *b, unsigned id) {
  if (b == NULL || id >= b->threads) return SYNCQ_EINVAL;
  /* acquire: pairs with the last arrival's sense store of the previous
   * episode; read before arriving, so it is this episode's sense */
  uint32_t s = atomic_load_explicit(&b->sense, memory_order_acquire);
  /* acq_rel: release publishes our work before the barrier to the last
   * arrival; acquire gives the last arrival everyone's (it then releases
   * it to all through the sense) */
  uint32_t arrived = atomic_fetch_add_explicit(&b->count, 1u, memory_order_acq_rel) + 1u;
  return finish(b, s, arrived);
}

int syncq_barrier_central_cas_wait(syncq_barrier_central *b, unsigned id) {
  if (b == NULL || id >= b->threads) return SYNCQ_EINVAL;
  uint32_t s = atomic_load_explicit(&b->sense, memory_order_acquire); /* as in the FAA form */
  /* relaxed: a guess that the CAS validates */
  uint32_t c = atomic_load_explicit(&b->count, memory_order_relaxed);
  SYNCQ_STAT_INC(cas_attempts);
  /* acq_rel on success: as the FAA form; relaxed on failure (retry) */
  while (!atomic_compare_exchange_weak_explicit(&b->count, &c, c + 1u, memory_order_acq_rel, memory_order_relaxed)) {
    SYNCQ_STAT_INC(cas_failures);
    SYNCQ_STAT_INC(cas_attempts);
  }
  return finish(b, s, c + 1u);
}

static int o_init(void *b, const syncq_barrier_config *c) { return syncq_barrier_central_init(b, c); }
static int o_destroy(void *b) { return syncq_barrier_central_destroy(b); }
static int o_faa(void *b, unsigned id) { return syncq_barrier_central_faa_wait(b, id); }
static int o_cas(void *b, unsigned id) { return syncq_barrier_central_cas_wait(b, id); }

static const syncq_barrier_ops faa_ops = {
  sizeof(syncq_barrier_central), _Alignof(syncq_barrier_central), o_init, o_destroy, o_faa,
};
static const syncq_barrier_ops cas_ops = {
  sizeof(syncq_barrier_central), _Alignof(syncq_barrier_central), o_init, o_destroy, o_cas,
};

const syncq_algo syncq_barrier_central_faa_algo = {
  SYNCQ_FAMILY_BARRIER, "central-faa", "sense-reversing centralized barrier, fetch-and-add arrival",
  "003 §3.3; MCS91 §3.1", SYNCQ_PROGRESS_BLOCKING, SYNCQ_PROP_PROCESS_SHARED, &faa_ops,
};
const syncq_algo syncq_barrier_central_cas_algo = {
  SYNCQ_FAMILY_BARRIER, "central-cas", "sense-reversing centralized barrier, CAS-loop arrival",
  "003 §3.3; MCS91 §3.1", SYNCQ_PROGRESS_BLOCKING, SYNCQ_PROP_PROCESS_SHARED, &cas_ops,
};
