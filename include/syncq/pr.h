/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/pr.h — atomic primitives: the one place where syncq touches the
 * machine's read-modify-write instructions.
 *
 * Thin, documented wrappers over C11 <stdatomic.h>: compare-and-swap (single
 * and double width), fetch-and-add, swap, test-and-set, tagged pointers,
 * cpu_relax, and the cache-line constant. The plain forms are seq_cst; the
 * _explicit forms take the orders, and every caller that passes an order
 * weaker than seq_cst says in a comment which access it pairs with.
 *
 * Language: C11, or C++23 (which provides <stdatomic.h>). Atomic types are
 * always written _Atomic(T) so the header reads the same in both.
 *
 * Double-width CAS: x86-64 uses inline `lock cmpxchg16b` (GCC and Clang call
 * libatomic for 16-byte builtins, a function call per CAS); AArch64 uses
 * inline CASPAL when built for LSE (-march=armv8.1-a or later) and an
 * LDAXP/STLXP loop otherwise (GCC 12's libatomic takes a lock for 16 bytes,
 * which lock-free loads of the halves would race with). ThreadSanitizer
 * builds (SYNCQ_TSAN, GCC or Clang: TSan cannot see inline assembly) use
 * the TSan runtime's 16-byte CAS (GCC's TSan makes the builtin that call;
 * under Clang it is called by name); builds defining SYNCQ_DWCAS_BUILTIN
 * and other machines use the compiler's 16-byte builtin and link
 * libatomic. Whether the running CPU has it is a run-time question:
 * syncq_pr_dwcas_available(). Structures built on it check at
 * initialisation and return SYNCQ_ENOTSUP where it is missing.
 */
#ifndef SYNCQ_PR_H
#define SYNCQ_PR_H

#include "syncq/export.h"

#include "syncq/atomic.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/status.h"

#if SYNCQ_TSAN && defined(__clang__)
/* __tsan_atomic128_compare_exchange_strong: syncq_pr_dwcas under Clang's
 * ThreadSanitizer. */
#include <sanitizer/tsan_interface_atomic.h>
#endif

#ifdef __cplusplus
extern "C" {
#define SYNCQ_ALIGNAS(n) alignas(n)
#else
#define SYNCQ_ALIGNAS(n) _Alignas(n)
#endif

/* ------------------------------------------------------------ cache lines */

/* Bytes in a cache line: the unit of false sharing that hot fields are
 * padded to. 64 on x86-64 and most AArch64 parts; override at build time
 * with -DSYNCQ_CACHELINE=128 for machines with 128-byte lines. */
#ifndef SYNCQ_CACHELINE
#define SYNCQ_CACHELINE 64
#endif

/* Aligns a struct member (or a whole object) to its own cache line. */
#define SYNCQ_CACHELINE_ALIGNED SYNCQ_ALIGNAS(SYNCQ_CACHELINE)

/* ------------------------------------------------------------ relax */

/* Tell the core we are spinning: x86 `pause`, AArch64 `yield`; elsewhere a
 * compiler barrier only. Use in every spin loop.
 * Thread safety: any thread, from a signal handler too (it touches no
 * memory).
 * Progress: wait-free (one instruction). */
static inline void syncq_pr_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* ------------------------------------------------------------ single width */

/* CAS: if *p == *expected, store desired and return true; otherwise load *p
 * into *expected and return false. Strong: never fails spuriously. seq_cst.
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free).
 * Example: `uint64_t seen = atomic_load(p); while (!syncq_pr_cas_u64(p, &seen, seen * 2)) {}` (double *p) */
static inline bool syncq_pr_cas_u64(_Atomic(uint64_t) *p, uint64_t *expected, uint64_t desired) {
  return atomic_compare_exchange_strong(p, expected, desired);
}
/* syncq_pr_cas_u64 with explicit orders: success for the read-modify-write,
 * failure (no stronger than success, C11 7.17.7.4) for the load on failure.
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free). */
static inline bool syncq_pr_cas_u64_explicit(_Atomic(uint64_t) *p, uint64_t *expected, uint64_t desired,
                                             memory_order success, memory_order failure) {
  return atomic_compare_exchange_strong_explicit(p, expected, desired, success, failure);
}
/* syncq_pr_cas_u64 on a pointer: if *p == *expected, store desired and
 * return true; otherwise load *p into *expected and return false. seq_cst.
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free). */
static inline bool syncq_pr_cas_ptr(_Atomic(void *) *p, void **expected, void *desired) {
  return atomic_compare_exchange_strong(p, expected, desired);
}

/* Fetch-and-add: add delta, return the value before. seq_cst.
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free). */
static inline uint64_t syncq_pr_faa_u64(_Atomic(uint64_t) *p, uint64_t delta) { return atomic_fetch_add(p, delta); }
/* Fetch-and-add with an explicit order: add delta, return the value before.
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free). */
static inline uint64_t syncq_pr_faa_u64_explicit(_Atomic(uint64_t) *p, uint64_t delta, memory_order order) {
  return atomic_fetch_add_explicit(p, delta, order);
}

/* Swap (fetch-and-store): store v, return the value before. seq_cst.
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free). */
static inline uint64_t syncq_pr_swap_u64(_Atomic(uint64_t) *p, uint64_t v) { return atomic_exchange(p, v); }
/* Swap on a pointer: store v, return the pointer before. seq_cst.
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free). */
static inline void *syncq_pr_swap_ptr(_Atomic(void *) *p, void *v) { return atomic_exchange(p, v); }

/* Test-and-set on a word (readable, unlike atomic_flag, so TTAS can spin on
 * a plain load): set to 1, return true if it was already set. Acquire: a
 * successful TAS begins a critical section; the release is
 * syncq_pr_tas_clear().
 * Thread safety: any thread, concurrently with every atomic access to *p,
 * from a signal handler too (a lock-free atomic on 64-bit machines), and on
 * memory shared between processes.
 * Progress: wait-free (one atomic instruction; on Armv8.0 without LSE a
 * load-exclusive/store-exclusive loop, lock-free). */
static inline bool syncq_pr_tas(_Atomic(uint32_t) *p) {
  return atomic_exchange_explicit(p, 1u, memory_order_acquire) != 0u;
}
/* Clear a test-and-set word (store 0 with release): ends the critical
 * section a successful syncq_pr_tas began.
 * Thread safety: by the holder, concurrently with every atomic access to
 * *p, from a signal handler too, and on memory shared between processes.
 * Progress: wait-free (one store). */
static inline void syncq_pr_tas_clear(_Atomic(uint32_t) *p) {
  /* release: pairs with the acquire exchange in syncq_pr_tas() */
  atomic_store_explicit(p, 0u, memory_order_release);
}

/* ------------------------------------------------------------ double width */

/* A 16-byte value, low word first (the layout cmpxchg16b and casp use). */
typedef struct syncq_pr_dw {
  uint64_t lo;
  uint64_t hi;
} syncq_pr_dw;

/* 16-byte storage for double-width CAS, 16-byte aligned as cmpxchg16b
 * requires. Each half is an atomic word so a reader may load the halves one
 * at a time (syncq_pr_dw_load) and validate them with a CAS. Writes to a
 * pair that others update with syncq_pr_dwcas go through syncq_pr_dwcas
 * too, never a single-width CAS, AND or store on one half: where the
 * double-width CAS is a lock around a read and a write (ThreadSanitizer's
 * runtime; libatomic on machines without a 16-byte CAS instruction), such
 * a write can land between the two and be overwritten. */
typedef struct syncq_pr_dw_atomic {
  SYNCQ_ALIGNAS(16) _Atomic(uint64_t) lo;
  _Atomic(uint64_t) hi;
} syncq_pr_dw_atomic;

/* True when the running CPU has a double-width CAS (x86-64: CPUID CX16).
 * Thread safety: any thread, any time, from a signal handler too (the
 * answer is cached in one atomic word; racing first calls both ask the
 * CPU).
 * Progress: wait-free. */
SYNCQ_API bool syncq_pr_dwcas_available(void);

/* Double-width CAS, seq_cst. Same contract as syncq_pr_cas_u64 on 16 bytes.
 * Callers must have checked syncq_pr_dwcas_available().
 * Thread safety: any thread, concurrently with every double-width CAS and
 * half load of *p (never with a single-width write of a half: see
 * syncq_pr_dw_atomic); from a signal handler and across processes where
 * it is an instruction (x86-64 cmpxchg16b, AArch64 CASP or LDAXP/STLXP),
 * not in ThreadSanitizer builds (SYNCQ_TSAN), where it is the TSan
 * runtime's (a lock), nor where it is the compiler's builtin (a lock in
 * libatomic).
 * Progress: wait-free where it is one instruction (cmpxchg16b, CASP);
 * lock-free as an LDAXP/STLXP loop (Armv8.0); blocking in ThreadSanitizer
 * builds and through libatomic (their locks). */
static inline bool syncq_pr_dwcas(syncq_pr_dw_atomic *p, syncq_pr_dw *expected, syncq_pr_dw desired) {
#if SYNCQ_TSAN && defined(__clang__) && __TSAN_HAS_INT128
  /* The TSan runtime's 16-byte CAS, called by name: Clang makes the
   * 16-byte builtin below a call to libatomic's generic
   * __atomic_compare_exchange unless the target has cmpxchg16b
   * (-mcx16), and TSan sees nothing of that call: every node handed over
   * by the CAS would be reported as a race. (GCC's TSan turns the builtin
   * into this same call itself.) */
  __tsan_atomic128 e = (__tsan_atomic128)(((unsigned __int128)expected->hi << 64) | expected->lo);
  __tsan_atomic128 d = (__tsan_atomic128)(((unsigned __int128)desired.hi << 64) | desired.lo);
  bool ok = __tsan_atomic128_compare_exchange_strong((volatile __tsan_atomic128 *)(void *)p, &e, d,
                                                     __tsan_memory_order_seq_cst, __tsan_memory_order_seq_cst) != 0;
  expected->lo = (uint64_t)(unsigned __int128)e;
  expected->hi = (uint64_t)((unsigned __int128)e >> 64);
  return ok;
#elif defined(__x86_64__) && !SYNCQ_TSAN && !defined(SYNCQ_DWCAS_BUILTIN)
  bool ok;
  /* lock-prefixed: a full barrier on x86-64, so seq_cst as documented. */
  __asm__ __volatile__("lock cmpxchg16b %1"
                       : "=@ccz"(ok), "+m"(*p), "+a"(expected->lo), "+d"(expected->hi)
                       : "b"(desired.lo), "c"(desired.hi)
                       : "memory");
  return ok;
#elif defined(__aarch64__) && defined(__ARM_FEATURE_ATOMICS) && !SYNCQ_TSAN && !defined(SYNCQ_DWCAS_BUILTIN)
  /* Armv8.1 LSE: CASPAL (acquire + release: seq_cst as the other paths).
   * Not libatomic's 16-byte CAS: GCC 12's libatomic implements it with a
   * lock, which the lock-free 64-bit loads of the halves
   * (syncq_pr_dw_load, NBLFQ2's cell reads) would race with. The pair
   * registers must be consecutive and even: x0/x1 and x2/x3. */
  register uint64_t c_lo __asm__("x0") = expected->lo;
  register uint64_t c_hi __asm__("x1") = expected->hi;
  register uint64_t d_lo __asm__("x2") = desired.lo;
  register uint64_t d_hi __asm__("x3") = desired.hi;
  const uint64_t e_lo = expected->lo, e_hi = expected->hi;
  __asm__ __volatile__("caspal %0, %1, %3, %4, %2"
                       : "+r"(c_lo), "+r"(c_hi), "+Q"(*p)
                       : "r"(d_lo), "r"(d_hi)
                       : "memory");
  bool ok = c_lo == e_lo && c_hi == e_hi;
  expected->lo = c_lo;
  expected->hi = c_hi;
  return ok;
#elif defined(__aarch64__) && !SYNCQ_TSAN && !defined(SYNCQ_DWCAS_BUILTIN)
  /* Armv8.0: LDAXP/STLXP loop (acquire + release exclusives: seq_cst). On
   * a mismatch the loaded pair is stored back, because LDAXP alone is not
   * a single-copy-atomic 128-bit read until a store-exclusive succeeds.
   * Not libatomic: see the LSE path above. */
  uint64_t o_lo, o_hi;
  uint32_t failed;
  __asm__ __volatile__(
    "1: ldaxp %0, %1, %3\n"
    "   cmp %0, %4\n"
    "   ccmp %1, %5, #0, eq\n"
    "   b.ne 2f\n"
    "   stlxp %w2, %6, %7, %3\n"
    "   cbnz %w2, 1b\n"
    "   b 3f\n"
    "2: stlxp %w2, %0, %1, %3\n"
    "   cbnz %w2, 1b\n"
    "3:\n"
    : "=&r"(o_lo), "=&r"(o_hi), "=&r"(failed), "+Q"(*p)
    : "r"(expected->lo), "r"(expected->hi), "r"(desired.lo), "r"(desired.hi)
    : "cc", "memory");
  bool ok = o_lo == expected->lo && o_hi == expected->hi;
  expected->lo = o_lo;
  expected->hi = o_hi;
  return ok;
#else
  unsigned __int128 e = ((unsigned __int128)expected->hi << 64) | expected->lo;
  unsigned __int128 d = ((unsigned __int128)desired.hi << 64) | desired.lo;
#if defined(__clang__)
  /* Clang warns (-Watomic-alignment) that a 16-byte atomic is not
   * lock-free without -mcx16: here it is chosen as the libatomic call it
   * becomes (SYNCQ_DWCAS_BUILTIN, or a machine without an inline form). */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Watomic-alignment"
#endif
  bool ok =
    __atomic_compare_exchange_n((unsigned __int128 *)(void *)p, &e, d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
  expected->lo = (uint64_t)e;
  expected->hi = (uint64_t)(e >> 64);
  return ok;
#endif
}

/* Load both halves, low first, each with acquire (pairs with the seq_cst
 * double-width CAS that wrote them). The pair may be torn by a concurrent
 * CAS; algorithms validate it with the CAS they were going to issue.
 * Thread safety: any thread, concurrently with every double-width CAS of
 * *p, from a signal handler too, on memory shared between processes.
 * Progress: wait-free (two loads). */
static inline syncq_pr_dw syncq_pr_dw_load(syncq_pr_dw_atomic *p) {
  syncq_pr_dw v;
  v.lo = atomic_load_explicit(&p->lo, memory_order_acquire);
  v.hi = atomic_load_explicit(&p->hi, memory_order_acquire);
  return v;
}

/* ------------------------------------------------------------ tagged pointers */

/* A 64-bit word holding a 48-bit pointer and a 16-bit tag (tag in the high
 * bits): the ABA-defence of single-width CAS algorithms. Only user-space
 * pointers whose high 16 bits are zero fit (x86-64 4-level paging, AArch64
 * 48-bit VA); packing any other pointer is refused, never truncated. */
typedef uint64_t syncq_tagptr;

#define SYNCQ_TAGPTR_PTR_BITS 48
#define SYNCQ_TAGPTR_TAG_BITS 16
#define SYNCQ_TAGPTR_PTR_MASK ((UINT64_C(1) << SYNCQ_TAGPTR_PTR_BITS) - 1)

/* Pack p and tag into *out. SYNCQ_EINVAL if out is NULL or p does not fit in
 * 48 bits (nothing is written then).
 * Thread safety: any thread, from a signal handler too (a pure function
 * of its arguments).
 * Progress: wait-free.
 * Example: `syncq_tagptr t; if (syncq_tagptr_pack(p, (uint16_t)(tag + 1), &t) != SYNCQ_OK) puts("p above 48 bits");` */
static inline int syncq_tagptr_pack(const void *p, uint16_t tag, syncq_tagptr *out) {
  uint64_t bits = (uint64_t)(uintptr_t)p;
  if (out == NULL || (bits & ~SYNCQ_TAGPTR_PTR_MASK) != 0) return SYNCQ_EINVAL;
  *out = ((uint64_t)tag << SYNCQ_TAGPTR_PTR_BITS) | bits;
  return SYNCQ_OK;
}
/* The pointer of a packed word (its low 48 bits).
 * Thread safety: any thread, from a signal handler too (a pure function
 * of its arguments).
 * Progress: wait-free. */
static inline void *syncq_tagptr_ptr(syncq_tagptr t) { return (void *)(uintptr_t)(t & SYNCQ_TAGPTR_PTR_MASK); }
/* The tag of a packed word (its high 16 bits).
 * Thread safety: any thread, from a signal handler too (a pure function
 * of its arguments).
 * Progress: wait-free. */
static inline uint16_t syncq_tagptr_tag(syncq_tagptr t) { return (uint16_t)(t >> SYNCQ_TAGPTR_PTR_BITS); }
/* True when p can be packed (its high 16 bits are zero).
 * Thread safety: any thread, from a signal handler too (a pure function
 * of its arguments).
 * Progress: wait-free. */
static inline bool syncq_tagptr_fits(const void *p) { return ((uint64_t)(uintptr_t)p & ~SYNCQ_TAGPTR_PTR_MASK) == 0; }

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_PR_H */
