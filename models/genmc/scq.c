/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq.c — GenMC driver for SCQ (Nikolaev, DISC 2019, Figure 8, as the
 * queue of pointers by indirection): src/queue/scq.c itself, included,
 * with capacity 2 (two rings of 4 entries). The setup, the dequeuer's
 * wait (1 re-read here; 0 with -DSCQ_DEQ_WAIT=0), the workload and its
 * properties: scq_driver.h.
 */
#define SCQ_DRIVER_SOURCE "queue/scq.c"
#define SCQ_DRIVER_NAME scq
#define SCQ_DRIVER_BYTES SYNCQ_QUEUE_SCQ_BYTES
#include "scq_driver.h"
