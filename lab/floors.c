/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * floors.c — the cross-core copy and cross-process round-trip floors: see
 * floors.h for the contract.
 */
#include "floors.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_team.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

/* Spins between two looks at the clock (and the abort flag) in a wait. */
#define LAB_FLOOR_SPINS_PER_CHECK 1024u
#define NS_PER_S 1e9

/* ---------------------------------------------------------------- sizes */

/* The largest cache hwloc reports, or 0: looked up once per process
 * (loading a topology costs milliseconds). */
static size_t largest_cache;
static pthread_once_t largest_cache_once = PTHREAD_ONCE_INIT;

static void find_largest_cache(void) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  size_t best = 0;
  if (hwloc_topology_load(topo) == 0) {
    for (hwloc_obj_type_t ty = HWLOC_OBJ_L1CACHE; ty <= HWLOC_OBJ_L5CACHE; ty++) {
      int n = hwloc_get_nbobjs_by_type(topo, ty);
      for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, ty, (unsigned)i);
        if (o != NULL && o->attr != NULL && o->attr->cache.size > best) best = (size_t)o->attr->cache.size;
      }
    }
  }
  hwloc_topology_destroy(topo);
  largest_cache = best;
}

static size_t largest_cache_bytes(void) {
  (void)pthread_once(&largest_cache_once, find_largest_cache);
  return largest_cache;
}

size_t lab_floor_copy_bytes(lab_size size) {
  if (size <= LAB_SIZE_QUICK) return LAB_FLOOR_COPY_QUICK_BYTES;
  size_t llc = largest_cache_bytes();
  size_t want = llc * LAB_FLOOR_COPY_LLC_FACTOR;
  if (want > LAB_FLOOR_COPY_MAX_BYTES) want = LAB_FLOOR_COPY_MAX_BYTES;
  return want > LAB_FLOOR_COPY_QUICK_BYTES ? want : LAB_FLOOR_COPY_QUICK_BYTES;
}

const char *lab_floor_slots(const lab_topo *topo, int *slot_a, int *slot_b) {
  *slot_a = 0;
  *slot_b = 1;
  if (topo == NULL) return "pinning is off: the two sides may share a core";
  if (lab_topo_cores(topo) < 2) {
    return lab_topo_pus(topo) < 2 ? "one processing unit: the two sides share it"
                                  : "one core: the two sides are hardware threads of the same core";
  }
  return NULL;
}

/* ------------------------------------------------------ cross-core copy */

typedef struct copy_run {
  lab_topo *topo;
  int slot[2];
  unsigned char *src, *dst;
  size_t bytes;
  unsigned rounds;
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) written; /* rounds the writer finished */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) copied;  /* rounds the copier finished */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) abort;   /* a side gave up */
  uint64_t copy_ns;                                  /* the copier's memcpy, every round */
  uint64_t write_ns;                                 /* the writer's memset, every round */
  bool wrong;
} copy_run;

typedef struct copy_side {
  copy_run *run;
  int id; /* 0 writes, 1 copies */
} copy_side;

/* Wait until *w == want; false (and abort raised) after LAB_FLOOR_WAIT_NS
 * or when the other side aborted. */
static bool copy_wait(copy_run *r, _Atomic(uint32_t) *w, uint32_t want) {
  uint64_t deadline = syncq_now_ns() + LAB_FLOOR_WAIT_NS;
  unsigned spins = 0;
  /* acquire: pairs with the other side's release store of *w (the buffer
   * it wrote or finished reading) */
  while (atomic_load_explicit(w, memory_order_acquire) != want) {
    if (++spins % LAB_FLOOR_SPINS_PER_CHECK == 0) {
      /* relaxed: abort is a flag; nothing is published with it */
      if (atomic_load_explicit(&r->abort, memory_order_relaxed) != 0u) return false;
      if (syncq_now_ns() > deadline) {
        atomic_store_explicit(&r->abort, 1u, memory_order_relaxed);
        return false;
      }
    }
    syncq_pr_relax();
  }
  return true;
}

static unsigned char round_pattern(uint32_t r) { return (unsigned char)(r * 37u + 1u); }

static void *copy_side_main(void *p) {
  copy_side *s = p;
  copy_run *r = s->run;
  lab_proc_pin(r->topo, r->slot[s->id]);
  if (s->id == 0) {
    memset(r->src, 0, r->bytes); /* first touch here, not in the timed writes */
    for (uint32_t k = 1; k <= r->rounds; k++) {
      if (!copy_wait(r, &r->copied, k - 1)) return NULL;
      uint64_t t0 = syncq_now_ns();
      memset(r->src, round_pattern(k), r->bytes);
      uint64_t t1 = syncq_now_ns();
      /* from the second round on, when the lines are in the copier's
       * cache: the first round's stores find them in the writer's own */
      if (k > 1) r->write_ns += t1 - t0;                           /* read by the caller after the join */
      atomic_store_explicit(&r->written, k, memory_order_release); /* pairs with the copier's acquire */
    }
  } else {
    memset(r->dst, 0, r->bytes); /* first touch here, not in the timed copy */
    for (uint32_t k = 1; k <= r->rounds; k++) {
      if (!copy_wait(r, &r->written, k)) return NULL;
      uint64_t t0 = syncq_now_ns();
      memcpy(r->dst, r->src, r->bytes);
      uint64_t t1 = syncq_now_ns();
      r->copy_ns += t1 - t0;
      unsigned char want = round_pattern(k);
      if (r->dst[0] != want || r->dst[r->bytes / 2] != want || r->dst[r->bytes - 1] != want) r->wrong = true;
      atomic_store_explicit(&r->copied, k, memory_order_release); /* pairs with the writer's acquire */
    }
  }
  return NULL;
}

int lab_floor_cross_core_copy(lab_topo *topo, int slot_a, int slot_b, size_t bytes, unsigned rounds, double *gb_per_s,
                              double *transfer_gb_per_s, char *why, size_t len) {
  unsigned min_rounds = transfer_gb_per_s != NULL ? 2u : 1u; /* the transfer times the writes of rounds 2.. */
  if (gb_per_s == NULL || bytes < LAB_FLOOR_COPY_MIN_BYTES || rounds < min_rounds || slot_a < 0 || slot_b < 0) {
    snprintf(why, len, "cross-core copy: bad input (bytes %zu: at least %u; rounds %u: at least %u; slots %d, %d)",
             bytes, LAB_FLOOR_COPY_MIN_BYTES, rounds, min_rounds, slot_a, slot_b);
    return -1;
  }
  copy_run *r = syncq_alloc_aligned(sizeof *r, SYNCQ_CACHELINE);
  if (r == NULL) {
    snprintf(why, len, "cross-core copy: out of memory");
    return -1;
  }
  memset(r, 0, sizeof *r);
  *r = (copy_run){.topo = topo, .slot = {slot_a, slot_b}, .bytes = bytes, .rounds = rounds};
  r->src = syncq_alloc_aligned(bytes, SYNCQ_CACHELINE);
  r->dst = syncq_alloc_aligned(bytes, SYNCQ_CACHELINE);
  int rc = -1;
  if (r->src == NULL || r->dst == NULL) {
    snprintf(why, len, "cross-core copy: out of memory for two buffers of %zu bytes", bytes);
  } else {
    copy_side sides[2] = {{r, 0}, {r, 1}};
    pthread_t tid[2];
    int started = 0;
    for (; started < 2; started++)
      if (pthread_create(&tid[started], NULL, copy_side_main, &sides[started]) != 0) break;
    if (started < 2) atomic_store_explicit(&r->abort, 1u, memory_order_relaxed); /* a flag: the started side gives up */
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    if (started < 2) {
      snprintf(why, len, "cross-core copy: could not start its threads");
    } else if (atomic_load(&r->copied) != rounds) {
      snprintf(why, len, "cross-core copy: a side stalled for %llu s",
               (unsigned long long)(LAB_FLOOR_WAIT_NS / 1000000000ull));
    } else if (r->wrong) {
      snprintf(why, len, "cross-core copy: the copy does not hold what was written");
    } else {
      double total = (double)bytes * (double)rounds;
      *gb_per_s = total / ((double)(r->copy_ns ? r->copy_ns : 1) / NS_PER_S) / 1e9;
      if (transfer_gb_per_s != NULL) {
        /* per round, the slower half: a stream through reused buffers
         * overlaps one buffer's writes with another's copy, so its best
         * rate is the slower side's, not the two halves in turn */
        double write_round = (double)r->write_ns / (double)(rounds - 1u), copy_round = (double)r->copy_ns / rounds;
        double slower_ns = write_round > copy_round ? write_round : copy_round;
        *transfer_gb_per_s = (double)bytes / ((slower_ns > 0 ? slower_ns : 1) / NS_PER_S) / 1e9;
      }
      rc = 0;
    }
  }
  free(r->src);
  free(r->dst);
  free(r);
  return rc;
}

/* ------------------------------------------------ cross-process round trip */

/* Wait until the line holds want; false after LAB_FLOOR_WAIT_NS or when
 * the parent raised stop. */
static bool line_wait(lab_proc_team *t, uint64_t want) {
  uint64_t deadline = syncq_now_ns() + LAB_FLOOR_WAIT_NS;
  unsigned spins = 0;
  /* acquire: pairs with the other process's release store of the line */
  while (atomic_load_explicit(&t->ctl->line, memory_order_acquire) != want) {
    if (++spins % LAB_FLOOR_SPINS_PER_CHECK == 0 && (lab_proc_child_should_stop(t) || syncq_now_ns() > deadline))
      return false;
    syncq_pr_relax();
  }
  return true;
}

int lab_floor_cross_process_rtt(lab_topo *topo, int slot_a, int slot_b, uint64_t n, double *ns, char *why, size_t len) {
  if (ns == NULL || n < 1 || slot_a < 0 || slot_b < 0) {
    snprintf(why, len, "cross-process round trip: bad input (n %llu: at least 1; slots %d, %d)", (unsigned long long)n,
             slot_a, slot_b);
    return -1;
  }
  lab_proc_team team;
  if (lab_proc_team_init(&team, topo, 1, 0, why, len) != 0) return -1;
  pid_t pid = lab_proc_team_fork(&team);
  if (pid == 0) {
    lab_proc_pin(topo, slot_b);
    lab_proc_child_ready(&team);
    for (uint64_t i = 0; i < n; i++) {
      if (!line_wait(&team, 2 * i + 1)) _exit(1);
      atomic_store_explicit(&team.ctl->line, 2 * i + 2, memory_order_release); /* pairs with the parent's acquire */
    }
    _exit(0);
  }
  int rc = -1;
  if (pid < 0) {
    snprintf(why, len, "cross-process round trip: fork failed");
  } else if (lab_proc_team_wait_ready(&team, 1, why, len)) {
    lab_proc_pin(topo, slot_a);
    uint64_t t0 = syncq_now_ns(), i = 0;
    for (; i < n; i++) {
      atomic_store_explicit(&team.ctl->line, 2 * i + 1, memory_order_release); /* pairs with the child's acquire */
      if (!line_wait(&team, 2 * i + 2)) break;
    }
    uint64_t t1 = syncq_now_ns();
    lab_proc_unpin(topo);
    if (i == n) {
      *ns = (double)(t1 - t0) / (double)n;
      rc = 0;
    } else {
      snprintf(why, len, "cross-process round trip: the child stalled for %llu s",
               (unsigned long long)(LAB_FLOOR_WAIT_NS / 1000000000ull));
    }
  }
  lab_proc_team_stop(&team, rc != 0);
  lab_proc_team_destroy(&team);
  return rc;
}
