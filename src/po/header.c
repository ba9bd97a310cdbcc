/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * header.c — the type-stable message headers of a system: carved from its
 * slab (slab.c), recorded on a push-only list and freed with the system
 * (syncq_po_destroy walks the list). Below the mailboxes (a dummy-node
 * queue takes its dummy here), the postoffice and the process table.
 *
 * Contract
 *   Progress:    lock-free push of the record (one CAS, retried under
 *                contention); the slab takes its grow lock only when a
 *                chunk is used up.
 *   Memory:      never freed one by one: a header lives as long as its
 *                system, so a late reader of a stale pointer reads valid
 *                memory.
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
  /* Push-only list: release publishes the header's initialisation to
   * syncq_po_destroy (which runs after every process has been joined). */
  syncq_po_msg *top = atomic_load_explicit(&sys->all, memory_order_relaxed);
  do {
    m->all_next = top;
  } while (!atomic_compare_exchange_weak_explicit(&sys->all, &top, m, memory_order_release, memory_order_relaxed));
  return m;
}
