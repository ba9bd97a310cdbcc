/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scq2.c — GenMC driver for SCQ2 (Nikolaev, DISC 2019, Figure 8 on
 * double-width cells, the item beside the entry word):
 * src/queue/scq2.c itself, included, with capacity 2 (4 cells), the
 * 16-byte CAS through genmc_shim.h. The setup, the dequeuer's wait (1
 * re-read here; 0 with -DSCQ_DEQ_WAIT=0), the workload and its
 * properties: scq_driver.h, as for scq.c.
 */
#define SCQ_DRIVER_SOURCE "queue/scq2.c"
#define SCQ_DRIVER_NAME scq2
#define SCQ_DRIVER_BYTES SYNCQ_QUEUE_SCQ2_BYTES
#include "scq_driver.h"
