/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lprq_af.c — LPRQ with aggregating funnels: the rings' head and tail
 * tickets come from funnels instead of one fetch-and-add each.
 *
 * Contract
 *   Source:      Younghun Roh, Yuanhao Wei, Eric Ruppert, Panagiota
 *                Fatourou, Siddhartha Jayanti, Julian Shun, "Aggregating
 *                Funnels for Faster Fetch&Add and Queues", PPoPP 2025
 *                (arXiv 2411.14420), the queue section: LCRQ and LPRQ
 *                (Romanov & Koval, PPoPP'23: PRQ rings with single-width
 *                CAS in LCRQ's list; src/queue/lprq.c) with the
 *                fetch-and-adds on each ring's Head and Tail replaced by
 *                Aggregating Funnels (src/counter/aggfunnel.c). The ring
 *                code is LPRQ's own; only its ticket source differs
 *                (lr_tail_ticket, lr_head_ticket in src/queue/
 *                linked_rings.h).
 *   Progress:    blocking: a ticket waits for its batch's delegate (and a
 *                delegate for slow readers 4 batches back), so a thread
 *                stopped inside a funnel stops the others on its
 *                aggregator; everything else is LPRQ's (lock-free).
 *   Atomics:     LPRQ's, with each ticket's fetch-and-add replaced by the
 *                funnel's: uncontended (a batch of one) 2 locked
 *                instructions (aggregator + the ring's word) where LPRQ
 *                makes 1; in a batch of k, the ring's head or tail word
 *                takes 1 fetch-and-add for the k tickets, each member 2
 *                on its aggregator's lines.
 *   Memory:      as LPRQ, plus 2 funnels of 4 aggregators (3 KiB) after
 *                each ring's cells, freed with the ring.
 *   Signal-safe: no (malloc, hazard records; a funnel's waits).
 *   Process-shared: no (pointers).
 *   Limits:      as LPRQ: unbounded; items non-NULL with bit 63 clear
 *                (the thread marks'); ring size a power of two in
 *                [2, 2^24]; tickets are 63-bit counters.
 *   Linearizable: yes: a funnel is a linearizable fetch-and-add on the
 *                ring's own head or tail word (a batch's tickets take
 *                effect at its one fetch-and-add there, in aggregator
 *                order), and every other access to those words (the
 *                CLOSED bit's fetch-and-or, fixState's CAS, the loads) is
 *                unchanged, so LPRQ's argument holds; the linearizability
 *                runs check it.
 *   Notes:       the closed bit: a batch's fetch-and-add on a closed tail
 *                returns bit 63 set, and each ticket of the batch is that
 *                value plus its offset (offsets stay far below 2^63), so
 *                every enqueuer of the batch sees the ring closed, as each
 *                would have with its own fetch-and-add.
 */
#include "syncq/queue/lprq_af.h"

#include "linked_rings.h"
#include "rings_af.h"
#include "syncq/queue.h"

int syncq_queue_lprq_af_init_ring(syncq_queue_lprq *q, size_t ring_size) {
  return syncq_queue_lprq_init_tickets_(q, ring_size, true);
}

int syncq_queue_lprq_af_init(syncq_queue_lprq *q, size_t capacity) {
  return syncq_queue_lprq_af_init_ring(q, lr_ring_size_for(capacity));
}

SYNCQ_QUEUE_REGISTER_FIXED_FNS(lprq_af, "lprq-af",
                               "LPRQ with its rings' head and tail tickets from aggregating funnels",
                               "Roh, Wei, Ruppert, Fatourou, Jayanti, Shun 2025 (PPoPP); Romanov & Koval 2023",
                               BLOCKING, SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES,
                               syncq_queue_lprq, syncq_queue_lprq_af_init, syncq_queue_lprq_destroy,
                               syncq_queue_lprq_enqueue, syncq_queue_lprq_dequeue);
