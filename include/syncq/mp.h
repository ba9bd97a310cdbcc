/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/mp.h — multiprogramming, all of it: the pseudo-scheduler and the
 * interface the preemption-safe locks use (syncq/mp/sched.h), and the
 * preemption-safe variants of 001's lock-based structures, which are
 * registry entries of their families, declared in their families' headers
 * next to their base algorithms (their lock is "ttas-ps",
 * syncq/lock/ttas_ps.h):
 *   queue "single-lock-ps" and "two-lock-ps"   syncq/queue.h
 *   stack "lock-ps"                            syncq/stack.h
 *   priority queue "skew-lock-ps"              syncq/pqueue.h
 *   counter "lock-ttas-ps"                     syncq/counter.h
 *
 * A header for programs: it includes families, so nothing in the library
 * below them includes it (docs/contributing.md, "Layers"); the locks and
 * the families include syncq/mp/sched.h or their own headers.
 */
#ifndef SYNCQ_MP_H
#define SYNCQ_MP_H

#include "syncq/counter.h"
#include "syncq/mp/sched.h"
#include "syncq/pqueue.h"
#include "syncq/queue.h"
#include "syncq/stack.h"

#endif /* SYNCQ_MP_H */
