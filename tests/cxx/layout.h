/* SPDX-License-Identifier: BSD-2-Clause */
/* layout.h — structures whose C and C++ layouts must agree (layout.c). */
#ifndef SYNCQ_TEST_LAYOUT_H
#define SYNCQ_TEST_LAYOUT_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct syncq_layout {
  const char *name;
  size_t size;
  size_t align;
} syncq_layout;
extern const syncq_layout syncq_c_layouts[];
extern const int syncq_c_nlayouts;
#ifdef __cplusplus
}
#endif
/* X-macro: every type the test compares. */
/* clang-format off */
#define SYNCQ_LAYOUT_TYPES(X)                                                                 \
  X(syncq_lock_node) X(syncq_lock_tas) X(syncq_lock_ticket) X(syncq_lock_mcs) X(syncq_lock_clh) \
  X(syncq_lock_anderson) X(syncq_lock_array) X(syncq_lock_futex_mutex) X(syncq_counter_faa)      \
  X(syncq_counter_cas) X(syncq_queue_nblfq) X(syncq_queue_vyukov) X(syncq_queue_naive_ring)      \
  X(syncq_queue_scq) X(syncq_queue_scq2) X(syncq_stack_treiber) X(syncq_waiter) X(syncq_tagptr)     \
  X(syncq_barrier_central) X(syncq_queue_lcrq) X(syncq_queue_lprq) X(syncq_queue_wcq) X(syncq_queue_wfqueue) \
    X(syncq_queue_loo)
/* clang-format on */
#endif
