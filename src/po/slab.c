/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * slab.c — the postoffice's slabs: objects of one size carved from large
 * chunks and freed only all at once, with the system (its mailboxes, one
 * per slot, and its type-stable message headers: both live as long as
 * the system).
 *
 * Contract
 *   Source:      Bonwick's slab allocator ("The Slab Allocator: An Object-
 *                Caching Kernel Memory Allocator", USENIX Summer 1994) in
 *                its simplest form: objects that are never freed one by one
 *                need no per-object free list, only a bump index per chunk.
 *                Why here: a malloc'd, cache-line-aligned mailbox per slot
 *                and a header per process made glibc split and coalesce
 *                chunks (unlink_chunk) at every spawn and again at destroy.
 *                A cursor (po_slab_cursor) is a caller's own chunk, carved
 *                with no shared word: a fiber scheduler thread keeps one,
 *                so the schedulers do not share the current chunk's index
 *                (as each processor of Go's runtime allocates from a span
 *                of its own, its mcache, and goes to the shared mcentral
 *                only for a new span).
 *   Progress:    alloc is lock-free while the current chunk has room (one
 *                fetch-and-add); a full chunk is replaced under a mutex
 *                (once per chunk: chunks grow from PO_SLAB_MIN objects
 *                to PO_SLAB_MAX_BYTES). alloc_local is wait-free while
 *                its cursor's chunk has room, and takes the mutex for a
 *                new chunk of its own.
 *   Atomics:     alloc: 1 load (acquire) + 1 FAA (relaxed); alloc_local:
 *                1 store (relaxed) of the chunk's count, no RMW.
 *   Memory:      chunks from syncq_alloc_aligned, each object at a multiple
 *                of the object's alignment; nothing is freed before
 *                po_slab_destroy, which keeps the chunks (up to
 *                PO_SLAB_KEEP_BYTES in all) for later slabs of the same
 *                geometry, until po_slab_kept_trim (syncq_po_cache_trim)
 *                frees them. The objects are not zeroed, except that an
 *                AddressSanitizer build clears a chunk it keeps: a kept
 *                chunk's stale pointers (a mailbox's links to messages a
 *                refused drain left) would otherwise make what they point
 *                at reachable, and LeakSanitizer blind to it. po_slab_each
 *                visits every object handed out (the first min(used,
 *                cap) of each chunk: a cursor's chunk counts what its
 *                owner carved), for a caller that must free what its
 *                objects own.
 *   Signal-safe: no (the refill takes a mutex and allocates).
 *   Process-shared: no.
 *   Limits:      objects of at most 1 MiB, alignment a power of two.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "po_internal.h"

/* A chunk's first size: PO_SLAB_MIN objects; each next one twice the
 * last while under PO_SLAB_MAX_BYTES. That keeps chunks below glibc's
 * mmap threshold (128 KB by default): a destroyed system's chunks go back
 * to malloc's heap and the next system's come from there, already
 * faulted in, as the objects malloc'd one by one did. */
enum { PO_SLAB_MIN = 32, PO_SLAB_MAX_BYTES = 64 * 1024 };

struct po_slab_chunk {
  struct po_slab_chunk *next; /* every chunk of the slab (under grow) */
  char *objs;                 /* [cap] objects of the slab's stride */
  size_t cap;
  size_t bytes, align; /* the allocation, to be reused by a like refill */
  /* Indices handed out; past cap once it is full. The shared chunk's
   * (cur) by fetch-and-add; a cursor's chunk's written by its owner
   * alone. */
  _Atomic(size_t) used;
};

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* Chunks of destroyed systems, kept for the next system's slabs (as the
 * process table and the fiber stacks are): a program that creates
 * systems one after another faults their pages in once. At most
 * PO_SLAB_KEEP_BYTES; past it chunks go back to malloc. */
enum { PO_SLAB_KEEP_BYTES = 32 << 20 };
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct po_slab_chunk *kept;
static size_t kept_bytes;

static struct po_slab_chunk *kept_take(size_t bytes, size_t align) {
  pthread_mutex_lock(&kept_lock);
  struct po_slab_chunk **pp = &kept, *c;
  while ((c = *pp) != NULL && (c->bytes != bytes || c->align != align)) pp = &c->next;
  if (c != NULL) {
    *pp = c->next;
    kept_bytes -= c->bytes;
  }
  pthread_mutex_unlock(&kept_lock);
  return c;
}

static void kept_put(struct po_slab_chunk *c) {
#if SYNCQ_ASAN
  memset(c->objs, 0, c->bytes - (size_t)(c->objs - (char *)c));
#endif
  pthread_mutex_lock(&kept_lock);
  bool keep = kept_bytes + c->bytes <= PO_SLAB_KEEP_BYTES;
  if (keep) {
    c->next = kept;
    kept = c;
    kept_bytes += c->bytes;
  }
  pthread_mutex_unlock(&kept_lock);
  if (!keep) free(c);
}

size_t po_slab_kept_trim(void) {
  pthread_mutex_lock(&kept_lock);
  struct po_slab_chunk *c = kept;
  size_t bytes = kept_bytes;
  kept = NULL;
  kept_bytes = 0;
  pthread_mutex_unlock(&kept_lock);
  while (c != NULL) {
    struct po_slab_chunk *next = c->next;
    free(c);
    c = next;
  }
  return bytes;
}

int po_slab_init(po_slab *s, size_t size, size_t align) {
  if (size == 0 || size > ((size_t)1 << 20) || align == 0 || (align & (align - 1)) != 0) return SYNCQ_EINVAL;
  if (align < _Alignof(max_align_t)) align = _Alignof(max_align_t);
  s->align = align;
  s->stride = round_up(size, align);
  s->next_cap = PO_SLAB_MIN;
  s->chunks = NULL;
  atomic_init(&s->cur, NULL);
  if (pthread_mutex_init(&s->grow, NULL) != 0) return SYNCQ_ESYS;
  return SYNCQ_OK;
}

/* A new chunk of s, on s->chunks (the caller holds grow); NULL when
 * memory is short. */
static struct po_slab_chunk *chunk_new_locked(po_slab *s) {
  size_t cap = s->next_cap;
  size_t head = round_up(sizeof(struct po_slab_chunk), s->align);
  size_t bytes = head + cap * s->stride;
  struct po_slab_chunk *n = kept_take(bytes, s->align);
  if (n == NULL) n = syncq_alloc_aligned(bytes, s->align);
  if (n == NULL) return NULL;
  n->bytes = bytes;
  n->align = s->align;
  n->objs = (char *)n + head;
  n->cap = cap;
  atomic_init(&n->used, 0);
  n->next = s->chunks;
  s->chunks = n;
  if (cap * 2 * s->stride <= PO_SLAB_MAX_BYTES) s->next_cap = cap * 2;
  return n;
}

void *po_slab_alloc(po_slab *s) {
  for (;;) {
    /* acquire: pairs with the release store of cur below (the chunk's
     * objs and cap). */
    struct po_slab_chunk *c = atomic_load_explicit(&s->cur, memory_order_acquire);
    if (c != NULL) {
      /* relaxed: the index only has to be unique (the RMW's atomicity);
       * the object's memory is this caller's alone from now on. */
      size_t i = atomic_fetch_add_explicit(&c->used, 1, memory_order_relaxed);
      if (i < c->cap) return c->objs + i * s->stride;
    }
    pthread_mutex_lock(&s->grow);
    /* relaxed: cur is written under this lock only. */
    if (atomic_load_explicit(&s->cur, memory_order_relaxed) == c) { /* nobody refilled it meanwhile */
      struct po_slab_chunk *n = chunk_new_locked(s);
      if (n == NULL) {
        pthread_mutex_unlock(&s->grow);
        return NULL;
      }
      /* release: pairs with the acquire load above. */
      atomic_store_explicit(&s->cur, n, memory_order_release);
    }
    pthread_mutex_unlock(&s->grow);
  }
}

void po_slab_cursor_init(po_slab_cursor *cur) { *cur = (po_slab_cursor){NULL, NULL, 0, 0}; }

void *po_slab_alloc_local(po_slab *s, po_slab_cursor *cur) {
  if (cur->next == cur->cap) {
    pthread_mutex_lock(&s->grow);
    struct po_slab_chunk *n = chunk_new_locked(s);
    pthread_mutex_unlock(&s->grow);
    if (n == NULL) return NULL;
    *cur = (po_slab_cursor){n, n->objs, 0, n->cap};
  }
  void *o = cur->objs + cur->next * s->stride;
  cur->next++;
  /* relaxed: only this cursor's owner writes the count; po_slab_each
   * reads it after the owner's thread has been joined. */
  atomic_store_explicit(&cur->chunk->used, cur->next, memory_order_relaxed);
  return o;
}

void po_slab_each(po_slab *s, void (*fn)(void *obj)) {
  for (struct po_slab_chunk *c = s->chunks; c != NULL; c = c->next) {
    /* relaxed: every allocator has finished (the caller's contract). */
    size_t n = atomic_load_explicit(&c->used, memory_order_relaxed);
    if (n > c->cap) n = c->cap; /* a full shared chunk's failed increments */
    for (size_t i = 0; i < n; i++) fn(c->objs + i * s->stride);
  }
}

void po_slab_destroy(po_slab *s) {
  struct po_slab_chunk *c = s->chunks;
  while (c != NULL) {
    struct po_slab_chunk *next = c->next;
    kept_put(c);
    c = next;
  }
  s->chunks = NULL;
  atomic_store_explicit(&s->cur, NULL, memory_order_relaxed); /* no allocator is left */
  pthread_mutex_destroy(&s->grow);
}
