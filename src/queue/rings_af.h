/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rings_af.h — the one entry src/queue/lcrq.c and src/queue/lprq.c give
 * their "-af" variants (src/queue/lcrq_af.c, src/queue/lprq_af.c): init
 * with the rings' ticket source chosen (false: fetch-and-add; true:
 * aggregating funnels, linked_rings.h's lr_tail_ticket). Not exported.
 */
#ifndef SYNCQ_QUEUE_RINGS_AF_H
#define SYNCQ_QUEUE_RINGS_AF_H

#include <stdbool.h>
#include <stddef.h>

#include "syncq/queue/lcrq.h"
#include "syncq/queue/lprq.h"

int syncq_queue_lcrq_init_tickets_(syncq_queue_lcrq *q, size_t ring_size, bool funnels);
int syncq_queue_lprq_init_tickets_(syncq_queue_lprq *q, size_t ring_size, bool funnels);

#endif
