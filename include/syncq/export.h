/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/export.h — which symbols libsyncq exports, and which sanitizer
 * the including code is compiled under.
 *
 * The library is compiled with -fvisibility=hidden: only declarations
 * marked SYNCQ_API (every public function and registry entry, all named
 * syncq_*) are exported from libsyncq.so; the internals (am_*, po_*, ...)
 * stay inside it, so a program may define names of its own without
 * clashing. tests/symbols checks the exported list.
 */
#ifndef SYNCQ_EXPORT_H
#define SYNCQ_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define SYNCQ_API __attribute__((visibility("default")))
#else
#define SYNCQ_API
#endif

/* SYNCQ_TSAN and SYNCQ_ASAN: 1 when this translation unit is compiled
 * under ThreadSanitizer (-fsanitize=thread) or AddressSanitizer
 * (-fsanitize=address), else 0. GCC says so with __SANITIZE_THREAD__ /
 * __SANITIZE_ADDRESS__; Clang (14 at least) defines neither and answers
 * __has_feature(thread_sanitizer) / __has_feature(address_sanitizer).
 * Every syncq file that chooses by sanitizer asks these two, so that GCC
 * and Clang builds take the same paths: above all syncq/pr.h's
 * double-width CAS, which under TSan must not be inline assembly (TSan
 * sees none of it).
 * Reserved: a program does not define them itself. */
#if defined(__has_feature)
#define SYNCQ_HAS_FEATURE_(x) __has_feature(x)
#else
#define SYNCQ_HAS_FEATURE_(x) 0
#endif

#if defined(__SANITIZE_THREAD__) || SYNCQ_HAS_FEATURE_(thread_sanitizer)
#define SYNCQ_TSAN 1
#else
#define SYNCQ_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__) || SYNCQ_HAS_FEATURE_(address_sanitizer)
#define SYNCQ_ASAN 1
#else
#define SYNCQ_ASAN 0
#endif
#undef SYNCQ_HAS_FEATURE_

#endif /* SYNCQ_EXPORT_H */
