/* SPDX-License-Identifier: BSD-2-Clause */
/* platform.c — futex, yield and CPU feature checks (see syncq/platform.h). */
#include "syncq/platform.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "syncq/pr.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define NS_PER_S 1000000000LL

int syncq_futex_wait(_Atomic(uint32_t) *word, uint32_t expected, int64_t timeout_ns, bool process_shared) {
  if (word == NULL) return SYNCQ_EINVAL;
#if defined(__linux__)
  struct timespec ts, *tsp = NULL;
  if (timeout_ns >= 0) {
    ts.tv_sec = (time_t)(timeout_ns / NS_PER_S);
    ts.tv_nsec = (long)(timeout_ns % NS_PER_S);
    tsp = &ts;
  }
  int op = process_shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
  long r = syscall(SYS_futex, (uint32_t *)word, op, expected, tsp, NULL, 0);
  if (r == -1 && errno == ETIMEDOUT) return SYNCQ_ETIMEDOUT;
  /* EAGAIN (value changed) and EINTR are spurious returns by contract. */
  return SYNCQ_OK;
#else
  (void)expected;
  (void)timeout_ns;
  (void)process_shared;
  return SYNCQ_ENOTSUP;
#endif
}

int syncq_futex_wake(_Atomic(uint32_t) *word, int n, bool process_shared) {
  if (word == NULL) return SYNCQ_EINVAL;
#if defined(__linux__)
  int op = process_shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
  long r = syscall(SYS_futex, (uint32_t *)word, op, n <= 0 ? INT_MAX : n, NULL, NULL, 0);
  return r < 0 ? SYNCQ_ESYS : (int)r;
#else
  (void)n;
  (void)process_shared;
  return SYNCQ_ENOTSUP;
#endif
}

void syncq_yield(void) { sched_yield(); }

void *syncq_alloc_aligned(size_t size, size_t align) {
  if (size == 0 || align == 0 || (align & (align - 1)) != 0) return NULL;
  if (align < sizeof(void *)) align = sizeof(void *);
  if (size > SIZE_MAX - align) return NULL;
  return aligned_alloc(align, (size + align - 1) / align * align); /* C11: size a multiple of align */
}

bool syncq_pr_dwcas_available(void) {
#if defined(__x86_64__)
  /* CPUID traps to the hypervisor in a virtual machine (tens of us here):
   * ask once. relaxed: every thread computes the same answer, so a racing
   * first call only asks twice. */
  static _Atomic(int) known = -1;
  int k = atomic_load_explicit(&known, memory_order_relaxed);
  if (k >= 0) return k != 0;
  unsigned eax, ebx, ecx, edx;
  k = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_CMPXCHG16B) != 0;
  atomic_store_explicit(&known, k, memory_order_relaxed);
  return k != 0;
#elif defined(__aarch64__)
  return true; /* LDXP/STXP exist on every AArch64; CASP with LSE. */
#else
  return false;
#endif
}
