/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sched_internal.h — the thread record of src/mp/sched.c and its
 * no-preemption request as static inline bodies, for the library's own
 * preemption-safe locks (src/lock/ttas_ps.c): there the request costs its
 * loads and stores, not two calls and a thread-local look-up in another
 * file. syncq_mp_nopreempt_begin / _end (syncq/mp/sched.h) are these same
 * bodies; src/mp/sched.c's header comment holds the hand-shake with the
 * preemption handler that they are one side of.
 *
 * What a thread pays that is not registered with a scheduler (none
 * created, or not registered): one thread-local load of its record
 * pointer (initial-exec: never a __tls_get_addr call; one %fs-relative
 * load in a program linked with the static library, that load after a
 * load of the variable's offset from the GOT in the shared library) and
 * one branch, on each side.
 */
#ifndef SYNCQ_MP_SCHED_INTERNAL_H
#define SYNCQ_MP_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/mp/sched.h"
#include "syncq/platform.h"
#include "syncq/pr.h"

enum { SYNCQ_MP_GATE_GO = 0u, SYNCQ_MP_GATE_STOP = 1u, SYNCQ_MP_GATE_FORCE = 2u };
enum { SYNCQ_MP_STATE_RUNNING = 0u, SYNCQ_MP_STATE_PREEMPTED = 1u };

struct syncq_mp_thread {
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) gate; /* SYNCQ_MP_GATE_*: the scheduler's decision */
  _Atomic(uint32_t) state;                        /* SYNCQ_MP_STATE_*: set by the thread itself */
  _Atomic(uint64_t) stops;                        /* times stopped */
  /* Written by the thread on every request: a line of its own, so that
   * the request does not take the line other threads read state from
   * (syncq_mp_is_preempted) and the scheduler the gate. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) nopreempt; /* depth of requests; the thread alone writes it */
  _Atomic(uint32_t) deferred;                          /* the handler deferred the current preemption */
  struct syncq_mp_sched *sched;
  pthread_t tid;
  unsigned app, proc;
  bool used;               /* slot taken (under sched->mu) */
  uint64_t defer_deadline; /* scheduler only: forced preemption time, 0: none */
};

/* The calling thread's record, NULL when it is not registered. Set at
 * registration, before any signal can target the thread. Initial-exec:
 * the variable lives in the static TLS block, so neither the handler nor
 * a lock ever calls __tls_get_addr (which may allocate on first use) to
 * reach it. Hidden: the library's own, not part of its API. */
extern _Thread_local syncq_mp_thread *syncq_mp_self_tls_
  __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* The outermost end found the gate closed: give up the processor (out of
 * line: taken once per deferred preemption, not per request). */
__attribute__((visibility("hidden"), cold, noinline)) void syncq_mp_end_stop_(syncq_mp_thread *t);

static inline void syncq_mp_nopreempt_begin_inline(void) {
  syncq_mp_thread *t = syncq_mp_self_tls_;
  if (t == NULL) return;
  /* relaxed (both): only this thread writes its depth and only its own
   * handler reads it (src/mp/sched.c, the interleavings) */
  uint32_t d = atomic_load_explicit(&t->nopreempt, memory_order_relaxed);
  atomic_store_explicit(&t->nopreempt, d + 1u, memory_order_relaxed);
  /* the request stands before anything the caller does next (the lock's
   * exchange): pairs with the handler's load of the depth */
  atomic_signal_fence(memory_order_seq_cst);
}

static inline void syncq_mp_nopreempt_end_inline(void) {
  syncq_mp_thread *t = syncq_mp_self_tls_;
  if (t == NULL) return;
  /* relaxed: only this thread writes its depth */
  uint32_t d = atomic_load_explicit(&t->nopreempt, memory_order_relaxed);
  if (d == 0u) return; /* an unmatched end is ignored */
  /* what the caller did in the request (the lock's release) stays inside
   * it: pairs with the handler's load of the depth */
  atomic_signal_fence(memory_order_seq_cst);
  /* relaxed: as begin's store */
  atomic_store_explicit(&t->nopreempt, d - 1u, memory_order_relaxed);
  if (d != 1u) return; /* still nested */
  /* the gate is read after the request is over: a signal in between finds
   * depth 0 and stops the thread; pairs with the handler's load */
  atomic_signal_fence(memory_order_seq_cst);
  /* relaxed: reads the STOP a deferring handler read on this thread, or a
   * later value (coherence); a STOP stored since and missed here is
   * followed by its signal, which finds depth 0 */
  if (atomic_load_explicit(&t->gate, memory_order_relaxed) != SYNCQ_MP_GATE_GO) syncq_mp_end_stop_(t);
}

#endif /* SYNCQ_MP_SCHED_INTERNAL_H */
