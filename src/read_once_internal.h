/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * read_once_internal.h — SYNCQ_READ_ONCE: one load of a plain word that
 * another process can write.
 *
 * Memory shared between processes (an active-message segment, a
 * process-shared lock or barrier) holds words fixed at creation that are
 * plain fields of structures whose layout is set (the segment format, the
 * public lock and barrier types). syncq checks such a word before using
 * it. C lets a compiler load a plain field again where the source reads
 * it once (it may assume no other thread writes it), so "checked, then
 * used" could become two loads with another process's write between
 * them. SYNCQ_READ_ONCE(x) is one volatile load of x, a value: the copy
 * checked is the copy used. It orders nothing and is no synchronization
 * (DESIGN.md: no volatile as synchronization); a word that needs an order
 * is _Atomic and read with the order it pairs with, and where a field can
 * be _Atomic without changing the layout a relaxed atomic load does this
 * job instead (the process-shared queues' headers). x: a scalar lvalue of
 * at most 8 bytes, naturally aligned (one load on the targets syncq
 * builds for).
 */
#ifndef SYNCQ_READ_ONCE_INTERNAL_H
#define SYNCQ_READ_ONCE_INTERNAL_H

#define SYNCQ_READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

#endif
