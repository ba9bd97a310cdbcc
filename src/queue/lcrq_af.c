/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lcrq_af.c — LCRQ with aggregating funnels: the rings' head and tail
 * tickets come from funnels instead of one fetch-and-add each.
 *
 * Contract
 *   Source:      Younghun Roh, Yuanhao Wei, Eric Ruppert, Panagiota
 *                Fatourou, Siddhartha Jayanti, Julian Shun, "Aggregating
 *                Funnels for Faster Fetch&Add and Queues", PPoPP 2025
 *                (arXiv 2411.14420), the queue section: LCRQ (Morrison &
 *                Afek, PPoPP'13, Figures 5-6; src/queue/lcrq.c) with the
 *                fetch-and-adds on each CRQ's Head and Tail replaced by
 *                Aggregating Funnels (src/counter/aggfunnel.c). The ring
 *                code is LCRQ's own; only its ticket source differs
 *                (lr_tail_ticket, lr_head_ticket in src/queue/
 *                linked_rings.h).
 *   Progress:    blocking: a ticket waits for its batch's delegate (and a
 *                delegate for slow readers 4 batches back), so a thread
 *                stopped inside a funnel stops the others on its
 *                aggregator; everything else is LCRQ's (lock-free).
 *   Atomics:     LCRQ's, with each ticket's fetch-and-add replaced by the
 *                funnel's: uncontended (a batch of one) 2 locked
 *                instructions (aggregator + the ring's word) where LCRQ
 *                makes 1; in a batch of k, the ring's head or tail word
 *                takes 1 fetch-and-add for the k tickets, each member 2
 *                on its aggregator's lines.
 *   Memory:      as LCRQ, plus 2 funnels of 4 aggregators (3 KiB) after
 *                each ring's cells, freed with the ring.
 *   Signal-safe: no (malloc, hazard records; a funnel's waits).
 *   Process-shared: no (pointers).
 *   Limits:      as LCRQ: unbounded; items non-NULL; ring size a power of
 *                two in [2, 2^24]; needs double-width CAS (SYNCQ_ENOTSUP
 *                without it); tickets are 63-bit counters.
 *   Linearizable: yes: a funnel is a linearizable fetch-and-add on the
 *                ring's own head or tail word (a batch's tickets take
 *                effect at its one fetch-and-add there, in aggregator
 *                order), and every other access to those words (the
 *                CLOSED bit's fetch-and-or, fixState's CAS, the loads) is
 *                unchanged, so LCRQ's argument holds; the linearizability
 *                runs check it.
 *   Notes:       the closed bit: a batch's fetch-and-add on a closed tail
 *                returns bit 63 set, and each ticket of the batch is that
 *                value plus its offset (offsets stay far below 2^63), so
 *                every enqueuer of the batch sees the ring closed, as each
 *                would have with its own fetch-and-add.
 */
#include "syncq/queue/lcrq_af.h"

#include "linked_rings.h"
#include "rings_af.h"
#include "syncq/queue.h"

int syncq_queue_lcrq_af_init_ring(syncq_queue_lcrq *q, size_t ring_size) {
  return syncq_queue_lcrq_init_tickets_(q, ring_size, true);
}

int syncq_queue_lcrq_af_init(syncq_queue_lcrq *q, size_t capacity) {
  return syncq_queue_lcrq_af_init_ring(q, lr_ring_size_for(capacity));
}

SYNCQ_QUEUE_REGISTER_FIXED_FNS(lcrq_af, "lcrq-af",
                               "LCRQ with its rings' head and tail tickets from aggregating funnels",
                               "Roh, Wei, Ruppert, Fatourou, Jayanti, Shun 2025 (PPoPP); Morrison & Afek 2013",
                               BLOCKING, SYNCQ_PROP_LINEARIZABLE | SYNCQ_PROP_FIFO | SYNCQ_PROP_ALLOCATES,
                               syncq_queue_lcrq, syncq_queue_lcrq_af_init, syncq_queue_lcrq_destroy,
                               syncq_queue_lcrq_enqueue, syncq_queue_lcrq_dequeue);
