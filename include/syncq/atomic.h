/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/atomic.h — C11 atomics for the public headers, in C and in C++.
 *
 * The headers write atomic types as _Atomic(T) and use the C11 generic
 * functions (atomic_load_explicit, ...). C11 and C++23 get them from
 * <stdatomic.h>. C++17 and C++20 have no <stdatomic.h>: this header gives
 * them what C++23's does, from <atomic> (the same mapping libstdc++ and
 * libc++ use): _Atomic(T) is std::atomic<T> and the C names are std's. The
 * layouts agree (GCC and Clang give std::atomic<T> the size and alignment
 * of _Atomic T for the scalar and pointer types used here), so a C++
 * program and the C library see the same structures.
 */
#ifndef SYNCQ_ATOMIC_H
#define SYNCQ_ATOMIC_H

#if defined(__cplusplus) && __cplusplus <= 202002L
#include <atomic>

#define _Atomic(T) std::atomic<T>

using std::memory_order;
using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_consume;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;

using std::atomic_compare_exchange_strong;
using std::atomic_compare_exchange_strong_explicit;
using std::atomic_compare_exchange_weak;
using std::atomic_compare_exchange_weak_explicit;
using std::atomic_exchange;
using std::atomic_exchange_explicit;
using std::atomic_fetch_add;
using std::atomic_fetch_add_explicit;
using std::atomic_fetch_and;
using std::atomic_fetch_and_explicit;
using std::atomic_fetch_or;
using std::atomic_fetch_or_explicit;
using std::atomic_fetch_sub;
using std::atomic_fetch_sub_explicit;
using std::atomic_fetch_xor;
using std::atomic_fetch_xor_explicit;
using std::atomic_is_lock_free;
using std::atomic_load;
using std::atomic_load_explicit;
using std::atomic_signal_fence;
using std::atomic_store;
using std::atomic_store_explicit;
using std::atomic_thread_fence;
#else
#include <stdatomic.h>
#endif

#endif /* SYNCQ_ATOMIC_H */
