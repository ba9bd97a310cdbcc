/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/export.h — which symbols libsyncq exports.
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

#endif /* SYNCQ_EXPORT_H */
