/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/reclaim.h — memory reclamation for link-based structures.
 *
 * Two schemes, as the papers and their successors use them:
 *
 * 1. The free list of type-stable nodes (001 §3: Treiber's stack of free
 *    nodes with counted pointers). Nodes come from a pool the caller
 *    provides or that the structure allocates once; a node taken from the
 *    list is reused only as a node of the same structure and its memory
 *    is never returned while the structure lives, so a thread holding a
 *    stale pointer may still read it: a stale read is caught by the
 *    counter of the CAS that follows. The list head is a (pointer,
 *    64-bit count) pair swung by double-width CAS: a count cannot wrap in
 *    the lifetime of a preempted thread, unlike a 16-bit tag.
 *    SYNCQ_ENOTSUP where the CPU has no double-width CAS.
 *
 * 2. Hazard pointers (Michael 2004): a thread announces the nodes it is
 *    about to dereference in its record's slots; a removed node is
 *    retired, and freed only when a scan finds it in no slot. Memory
 *    really goes back to the allocator. An operation brackets its reads
 *    with syncq_hp_enter ... syncq_hp_leave; as in Michael's paper a
 *    thread keeps its record: the first enter on a domain takes one and a
 *    thread-local cache hands the same record back to the thread's later
 *    enters with no atomic read-modify-write; it returns to the domain at
 *    thread exit or domain destroy. Record memory is type-stable for the
 *    life of the process (kept in a global pool when a domain is
 *    destroyed), so a stale cache entry is never a dangling pointer.
 *
 * 3. Epoch-based reclamation (Fraser 2004): a thread announces the global
 *    epoch when it enters a critical section and clears the announcement
 *    when it leaves (its quiescent point); a removed node is retired into
 *    one of three limbo lists by the epoch in which it was retired, and
 *    freed once the global epoch has advanced twice past it, which needs
 *    every thread then inside a critical section to have left it. Cheaper
 *    than hazard pointers per access (nothing per node read), but a thread
 *    stalled inside a critical section stops all reclamation (memory
 *    grows; correctness is never at risk). Contract: src/reclaim/ebr.c.
 */
#ifndef SYNCQ_RECLAIM_H
#define SYNCQ_RECLAIM_H

#include "syncq/export.h"

#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ free list */

/* The link a node embeds (at any offset) to sit on a free list. Accessed
 * atomically: a stale popper may read it while the node's owner rewrites it. */
typedef struct syncq_fl_link {
  _Atomic(uint64_t) next; /* address of the next link, 0 at the end */
} syncq_fl_link;

typedef struct syncq_freelist {
  syncq_pr_dw_atomic top; /* lo: address of the top link (0: empty); hi: count of swings */
} syncq_freelist;

/* Initialise an empty list.
 * SYNCQ_EINVAL: fl is NULL.
 * SYNCQ_ENOTSUP: the processor has no double-width CAS.
 * Thread safety: before any other call on the list, by one thread.
 * Progress: wait-free (a few stores). */
SYNCQ_API int syncq_freelist_init(syncq_freelist *fl);

/* Push n links found at base + i*stride + link_offset (i < n): turns an
 * array of nodes into the list's pool.
 * SYNCQ_EINVAL: fl is NULL, base is NULL with n > 0, stride is smaller than
 * a link or link_offset leaves no room for one in it, a link or the
 * stride is not aligned as a link, or n nodes of stride bytes from base
 * would run past the end of the address space (n * stride wraps); nothing
 * is pushed then.
 * Thread safety: any thread, concurrently with pushes and pops on the same
 * list (each link goes in by a push), with links no one else uses yet; from
 * a signal handler too.
 * Progress: lock-free (one push per link). */
SYNCQ_API int syncq_freelist_fill(syncq_freelist *fl, void *base, size_t n, size_t stride, size_t link_offset);

/* Push one link. Lock-free (one double-width CAS when uncontended).
 * SYNCQ_EINVAL: fl or link is NULL.
 * Thread safety: any thread, concurrently with pushes and pops on the same
 * list; from a signal handler too (no locks, no allocation:
 * src/reclaim/freelist.c). Not from several processes (links hold
 * addresses).
 * Progress: lock-free: a CAS fails only because another push or pop
 * succeeded (contract: src/reclaim/freelist.c). */
SYNCQ_API int syncq_freelist_push(syncq_freelist *fl, syncq_fl_link *link);

/* Pop one link into *out. Lock-free (one double-width CAS when
 * uncontended).
 * SYNCQ_EMPTY: the list held no link.
 * SYNCQ_EINVAL: fl or out is NULL.
 * Thread safety: any thread, concurrently with pushes and pops on the same
 * list; from a signal handler too (no locks, no allocation:
 * src/reclaim/freelist.c). Not from several processes (links hold
 * addresses).
 * Progress: lock-free (contract: src/reclaim/freelist.c). */
SYNCQ_API int syncq_freelist_pop(syncq_freelist *fl, syncq_fl_link **out);

/* The node that embeds a link, from the link's address. */
#define SYNCQ_FL_CONTAINER(link, type, member) ((type *)(void *)((char *)(link)-offsetof(type, member)))

/* ------------------------------------------------------------ hazard pointers */

/* Most hazard slots one record can have. */
#define SYNCQ_HP_MAX_SLOTS 8

typedef struct syncq_hp_domain syncq_hp_domain;
typedef struct syncq_hp_record syncq_hp_record;

/* Called for each retired node once no hazard pointer holds it. */
typedef void (*syncq_hp_free_fn)(void *node, void *ctx);

/* Create a domain whose records have `slots` hazard slots (1..8) and that
 * frees retired nodes with free_fn(node, ctx).
 * SYNCQ_EINVAL: slots is 0 or above SYNCQ_HP_MAX_SLOTS, or free_fn or out
 * is NULL.
 * SYNCQ_ENOMEM: the domain could not be allocated.
 * Thread safety: any thread; not from a signal handler (malloc).
 * Progress: blocking only as malloc is; not a concurrent operation (the
 * domain is new). */
SYNCQ_API int syncq_hp_domain_create(unsigned slots, syncq_hp_free_fn free_fn, void *ctx, syncq_hp_domain **out);

/* Free every retired node and the domain. No thread may be inside
 * enter/leave on it.
 * SYNCQ_EINVAL: d is NULL.
 * SYNCQ_EBUSY: a record is still entered; nothing is freed.
 * Thread safety: once no thread is inside enter/leave on the domain, by one
 * thread; not from a signal handler.
 * Progress: not a concurrent operation: it runs alone on the domain
 * (SYNCQ_EBUSY rather than wait for an entered record). */
SYNCQ_API int syncq_hp_domain_destroy(syncq_hp_domain *d);

/* Take a record for the calling thread's next operation: the thread's
 * kept record for this domain, or another one when that is entered
 * already (nested operations get distinct records).
 * SYNCQ_EINVAL: d or out is NULL.
 * SYNCQ_ENOMEM: no free record and none could be allocated.
 * Thread safety: any thread, concurrently with every call on the domain;
 * not from a signal handler (it may allocate); not from several processes.
 * From a postoffice fiber: yes, with leave before any call that may switch
 * fibers.
 * Progress: wait-free on a cache hit, lock-free when it must take a free
 * record; it takes a process-wide mutex (blocking) only to allocate a new
 * record (contract: src/reclaim/hazard.c). */
SYNCQ_API int syncq_hp_enter(syncq_hp_domain *d, syncq_hp_record **out);

/* Clear the record's slots and end the operation. NULL is ignored.
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: wait-free (a store per slot). */
SYNCQ_API void syncq_hp_leave(syncq_hp_record *rec);

/* End the operation but leave the slots published: the nodes they hold
 * stay safe to read until the thread overwrites or clears the slots (its
 * next operation on the domain), exits, or the domain is destroyed, or
 * until its operations on other domains evict the record from its cache
 * (a thread keeps records for 8 domains; an evicted record's slots are
 * cleared, and syncq_hp_held reports NULL: src/reclaim/hazard.c). With
 * syncq_hp_held, a structure whose threads return to the same node
 * (LCRQ's current ring) skips the protect's store and fence. A nested
 * record (not the thread's kept one) is cleared as by syncq_hp_leave.
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: wait-free. */
SYNCQ_API void syncq_hp_leave_keep(syncq_hp_record *rec);

/* What the slot holds now (the calling thread's own record): a node read
 * from the structure that equals it is protected, as if by protect, since
 * the slot has held it without a gap. NULL for a NULL record or a slot out
 * of range.
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: wait-free (one load). */
SYNCQ_API void *syncq_hp_held(syncq_hp_record *rec, unsigned slot);

/* Announce that the pointer currently stored in *src is in use: loads it,
 * publishes it in slot, and re-reads *src until both agree; returns it
 * (possibly NULL). After this, the node cannot be freed until the slot is
 * cleared or overwritten.
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: lock-free: it re-reads *src until it agrees with the published
 * slot, which fails only when another thread changed *src (contract:
 * src/reclaim/hazard.c). */
SYNCQ_API void *syncq_hp_protect(syncq_hp_record *rec, unsigned slot, _Atomic(void *) *src);

/* Publish p in slot directly (the caller validates it afterwards). The
 * store is seq_cst so the caller's validating load cannot be reordered
 * before it.
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: wait-free (one seq_cst store). */
SYNCQ_API void syncq_hp_set(syncq_hp_record *rec, unsigned slot, void *p);

/* Clear one slot (a release store).
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: wait-free (one release store). */
SYNCQ_API void syncq_hp_clear(syncq_hp_record *rec, unsigned slot);

/* Hand over a node that is no longer reachable from the structure: freed
 * by the domain's free_fn once no slot holds it (possibly now, in a scan).
 * When the record's retired list cannot grow (realloc fails), the call
 * waits, yielding, until no slot holds the node, then frees it: nothing
 * is leaked (src/reclaim/hazard.c).
 * SYNCQ_EINVAL: rec or node is NULL.
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: lock-free: every R retirements it scans the domain's records
 * (bounded by their number) and frees through free_fn; growing the retired
 * list calls realloc, and only when that fails does it wait (blocking) for
 * the slots that hold the node to let it go. */
SYNCQ_API int syncq_hp_retire(syncq_hp_record *rec, void *node);

/* Scan now: free every retired node of this record that no slot holds.
 * Returns how many were freed.
 * Thread safety: by the thread that entered the record (a record belongs to
 * one thread's operation), concurrently with every other thread's calls on
 * the domain; not from a signal handler (src/reclaim/hazard.c); not from
 * several processes. From a postoffice fiber: only between calls that may
 * switch fibers (a record is the thread's, and the fiber may resume on
 * another thread).
 * Progress: lock-free: bounded by the domain's records and this record's
 * retired nodes (free_fn's own cost aside). */
SYNCQ_API size_t syncq_hp_scan(syncq_hp_record *rec);

/* ------------------------------------------------------------ epochs (EBR) */

typedef struct syncq_ebr_domain syncq_ebr_domain;
typedef struct syncq_ebr_record syncq_ebr_record;

/* The link a node embeds (at any offset) to wait in a limbo list; the
 * free function gets the link back (use SYNCQ_FL_CONTAINER-style
 * arithmetic, SYNCQ_EBR_CONTAINER, to find the node). */
typedef struct syncq_ebr_link {
  struct syncq_ebr_link *next;
} syncq_ebr_link;
#define SYNCQ_EBR_CONTAINER(link, type, member) ((type *)(void *)((char *)(link)-offsetof(type, member)))

/* Called for each retired node once no critical section can still see it. */
typedef void (*syncq_ebr_free_fn)(syncq_ebr_link *node, void *ctx);

/* Create a domain that frees retired nodes with free_fn(node, ctx).
 * SYNCQ_EINVAL: free_fn or out is NULL.
 * SYNCQ_ENOMEM: the domain could not be allocated.
 * Thread safety: any thread; not from a signal handler (malloc).
 * Progress: blocking only as malloc is; not a concurrent operation (the
 * domain is new). */
SYNCQ_API int syncq_ebr_domain_create(syncq_ebr_free_fn free_fn, void *ctx, syncq_ebr_domain **out);

/* Free every node still in a limbo list, then the domain.
 * SYNCQ_EINVAL: d is NULL.
 * SYNCQ_EBUSY: a critical section is open; nothing is freed.
 * Thread safety: once no critical section is open on the domain, by one
 * thread; not from a signal handler.
 * Progress: not a concurrent operation: it runs alone on the domain
 * (SYNCQ_EBUSY rather than wait). */
SYNCQ_API int syncq_ebr_domain_destroy(syncq_ebr_domain *d);

/* Open a critical section: take a record and announce the current epoch.
 * Nodes reachable from the structure when (or after) this returns stay
 * allocated until the matching syncq_ebr_leave. A thread may hold several
 * records at once (each is an independent critical section).
 * SYNCQ_EINVAL: d or out is NULL.
 * SYNCQ_ENOMEM: no free record and none could be allocated.
 * Thread safety: any thread, concurrently with every call on the domain;
 * not from a signal handler (it may allocate). From a postoffice fiber:
 * yes; a fiber that stays inside a critical section across a call that may
 * switch fibers holds back every retired node of the domain meanwhile.
 * Progress: lock-free; it takes a process-wide mutex only to allocate a new
 * record, the first time a thread meets a domain (contract:
 * src/reclaim/ebr.c). */
SYNCQ_API int syncq_ebr_enter(syncq_ebr_domain *d, syncq_ebr_record **out);

/* Close the critical section (the thread's quiescent point for this
 * record). NULL is ignored.
 * Thread safety: by the thread that entered the record, inside its critical
 * section where the comment says so, concurrently with every other thread's
 * calls on the domain; not from a signal handler (a handler interrupting a
 * critical section of the same record would corrupt its lists:
 * src/reclaim/ebr.c); not from several processes.
 * Progress: wait-free. */
SYNCQ_API void syncq_ebr_leave(syncq_ebr_record *rec);

/* Hand over a node already unlinked from the structure (no new critical
 * section can reach it): freed once every critical section open now has
 * closed. Must be called inside rec's critical section. Never allocates.
 * SYNCQ_EINVAL: rec or node is NULL, or rec is not entered.
 * Thread safety: by the thread that entered the record, inside its critical
 * section where the comment says so, concurrently with every other thread's
 * calls on the domain; not from a signal handler (a handler interrupting a
 * critical section of the same record would corrupt its lists:
 * src/reclaim/ebr.c); not from several processes.
 * Progress: lock-free (every SYNCQ_EBR_COLLECT_EVERY retirements it runs
 * syncq_ebr_collect); never allocates. */
SYNCQ_API int syncq_ebr_retire(syncq_ebr_record *rec, syncq_ebr_link *node);

/* Try to advance the global epoch and free what rec's limbo lists may
 * free now; returns how many nodes were freed (0 for NULL). Retire calls
 * it every SYNCQ_EBR_COLLECT_EVERY retirements; call it inside rec's
 * critical section.
 * Thread safety: by the thread that entered the record, inside its critical
 * section where the comment says so, concurrently with every other thread's
 * calls on the domain; not from a signal handler (a handler interrupting a
 * critical section of the same record would corrupt its lists:
 * src/reclaim/ebr.c); not from several processes.
 * Progress: lock-free: one scan of every record of the domain (O(records)),
 * plus free_fn for what it frees. The epoch advances only when every open
 * critical section has seen the current one, so a thread stalled inside one
 * holds back reclamation (not the other threads' progress). */
SYNCQ_API size_t syncq_ebr_collect(syncq_ebr_record *rec);
#define SYNCQ_EBR_COLLECT_EVERY 64

/* The domain's global epoch (for tests and statistics); 0 for NULL.
 * Thread safety: any thread, any time the domain exists (one load); from a
 * signal handler too.
 * Progress: wait-free. */
SYNCQ_API uint64_t syncq_ebr_epoch(const syncq_ebr_domain *d);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_RECLAIM_H */
