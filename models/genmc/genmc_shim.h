/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * genmc_shim.h — what GenMC needs around syncq's real code, and nothing
 * more. Every driver in models/genmc includes this first, then the
 * library's own headers or sources (docs/reliability.md, "Weak memory:
 * GenMC").
 *
 * GenMC (v0.10.3) interprets the program's LLVM IR: it runs no assembly
 * (inline assembly is skipped with a warning, so pr.h's `lock cmpxchg16b`
 * would silently do nothing), has no lowering for x86's `pause` intrinsic
 * (a fatal error), its values are at most 64 bits wide (no 16-byte CAS),
 * and it has no clock (backoff delays). Three shims, each replacing one
 * function by name, so the rest of pr.h and every algorithm file is the
 * library's text:
 *
 *   syncq_pr_relax      nothing (a spin hint; no memory effect).
 *   syncq_pr_dwcas      the 16-byte CAS on pr.h's two 64-bit halves: the
 *                       compare and both stores under a lock (one of 8,
 *                       chosen by address: CASes of one location are
 *                       totally ordered, as the hardware's are; a
 *                       collision only adds order), all accesses seq_cst
 *                       as cmpxchg16b/CASPAL are. The high half is
 *                       stored first: a reader that loads low then high
 *                       with acquire (syncq_pr_dw_load) and sees the new
 *                       low half then sees the new high half too, as
 *                       with a single-copy-atomic 16-byte store; the
 *                       tears a real reader can see (old low, new high)
 *                       it can see here. More than those: a reader
 *                       that loads high then low may see the new high
 *                       half with the old low one (its acquire load
 *                       synchronizes with the high store, not with the
 *                       low store after it), which one 16-byte write
 *                       does not allow; NBLFQ2's reads then loop in
 *                       some executions (docs/reliability.md, why it
 *                       needs -unroll). What the lock cannot model: a
 *                       plain 64-bit store to one half landing between
 *                       the compare and the stores (ms.c resets next.lo
 *                       of a node it owns, whose stale CASes the count
 *                       half rejects either way).
 *   syncq_backoff_exp_wait  the step without the delay (a delay has no
 *                       memory effect; GenMC explores every interleaving
 *                       a delay could produce anyway).
 *
 * and two library functions the included sources call out of line:
 * syncq_pr_dwcas_available (true) and syncq_alloc_aligned
 * (aligned_alloc).
 *
 * GENMC_SEED_BUG (the control, models/genmc/run): drivers weaken
 * one release of their own to relaxed under it; never the library.
 * GENMC_SEED_DWCAS_HI (a control for the double-width drivers): the
 * 16-byte CAS compares the high half alone (NBLFQ2: the counter; SCQ2:
 * the entry word).
 */
#ifndef SYNCQ_GENMC_SHIM_H
#define SYNCQ_GENMC_SHIM_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* pr.h's own bodies of the two replaced functions are compiled under
 * other names and never called. */
#define syncq_pr_relax syncq_pr_relax_asm_
#define syncq_pr_dwcas syncq_pr_dwcas_asm_
#include "syncq/pr.h"
#undef syncq_pr_relax
#undef syncq_pr_dwcas

#include "syncq/backoff.h"
#include "syncq/platform.h"

static inline void syncq_pr_relax(void) {}

#define GENMC_DWCAS_LOCKS 8
static pthread_mutex_t genmc_dwcas_locks[GENMC_DWCAS_LOCKS] = {
  PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
  PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
};

static inline bool syncq_pr_dwcas(syncq_pr_dw_atomic *p, syncq_pr_dw *expected, syncq_pr_dw desired) {
  pthread_mutex_t *l = &genmc_dwcas_locks[((uintptr_t)p >> 4) % GENMC_DWCAS_LOCKS];
  pthread_mutex_lock(l);
  uint64_t lo = atomic_load(&p->lo);
  uint64_t hi = atomic_load(&p->hi);
#if defined(GENMC_SEED_DWCAS_HI)
  bool ok = hi == expected->hi; /* the control: the high half alone compared (see above) */
#else
  bool ok = lo == expected->lo && hi == expected->hi;
#endif
  if (ok) {
    atomic_store(&p->hi, desired.hi); /* high first: see above */
    atomic_store(&p->lo, desired.lo);
  } else {
    expected->lo = lo;
    expected->hi = hi;
  }
  pthread_mutex_unlock(l);
  return ok;
}

bool syncq_pr_dwcas_available(void) { return true; }

uint32_t syncq_backoff_exp_wait(syncq_backoff_exp *b) { return syncq_backoff_exp_step(b); }

void *syncq_alloc_aligned(size_t size, size_t align) {
  return aligned_alloc(align, (size + align - 1) / align * align);
}

/* A driver's threads: start n, join them all (GenMC explores every
 * interleaving of what runs between). */
static inline void genmc_run(void *(*fn[])(void *), int n) {
  pthread_t t[8];
  for (int i = 0; i < n; i++)
    if (pthread_create(&t[i], NULL, fn[i], NULL) != 0) abort();
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
}

#endif
