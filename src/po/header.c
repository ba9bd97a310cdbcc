/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * header.c — the type-stable message headers of a system: carved from its
 * slab (slab.c), freed with the system (po_headers_destroy walks the
 * slab's objects for their payloads), and cached per fiber scheduler.
 * Below the mailboxes (a dummy-node queue takes its dummy here), the
 * postoffice and the process table.
 *
 * Contract
 *   Source:      the per-scheduler cache is a magazine (Bonwick and
 *                Adams, "Magazines and Vmem: Extending the Slab Allocator
 *                to Many CPUs and Arbitrary Resources", USENIX 2001): a
 *                bounded LIFO of free objects per processor, taken and
 *                filled with no shared word, as Go's per-P caches are.
 *                Why here: a process that has never received (a new
 *                leaf of a tree) has an empty free list, while the
 *                headers its parent freed sit on the parent's: through
 *                the cache a new process sends with a header its
 *                scheduler's processes freed, still in cache, rather
 *                than a new one.
 *   Progress:    po_header_new: as po_slab_alloc. The cache's take and
 *                keep: wait-free, no atomics (its scheduler thread's
 *                alone); a new header for a cache: as
 *                po_slab_alloc_local.
 *   Memory:      never freed one by one: a header lives as long as its
 *                system, so a late reader of a stale pointer reads valid
 *                memory. A cache holds at most PO_HDR_CACHE headers;
 *                the headers in it are the slab's, freed with it.
 *   Signal-safe: no.  Process-shared: no.
 */
#include <stdlib.h>
#include <string.h>

#include "po_internal.h"

void po_header_clear(syncq_po_msg *m) {
  memset(m, 0, sizeof *m);
  atomic_init(&m->cnext.lo, 0);
  atomic_init(&m->cnext.hi, 0);
  atomic_init(&m->next, NULL);
  atomic_init(&m->fl.next, 0);
  m->data = m->inline_payload.bytes;
  m->cap = sizeof m->inline_payload.bytes;
}

void po_payload_free(syncq_po_msg *m) {
  if (m->data != m->inline_payload.bytes) free(m->data);
  m->data = NULL;
  m->cap = 0;
}

syncq_po_msg *po_header_new(syncq_po_system *sys) {
  syncq_po_msg *m = po_slab_alloc(&sys->headers); /* freed with the system */
  if (m == NULL) return NULL;
  po_header_clear(m);
  return m;
}

syncq_po_msg *po_header_take(syncq_po_system *sys, po_header_cache *c) {
  if (c->n != 0) return c->free[--c->n];
  syncq_po_msg *m = po_slab_alloc_local(&sys->headers, &c->slab); /* freed with the system */
  if (m == NULL) return NULL;
  po_header_clear(m);
  return m;
}

bool po_header_keep(po_header_cache *c, syncq_po_msg *m) {
  if (c->n == PO_HDR_CACHE) return false;
  c->free[c->n++] = m;
  return true;
}

static void free_payload(void *obj) { po_payload_free(obj); }

void po_headers_destroy(syncq_po_system *sys) {
  po_slab_each(&sys->headers, free_payload);
  po_slab_destroy(&sys->headers);
}
