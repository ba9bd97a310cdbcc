/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nblfq_core.h — the library's view of the NBLFQ algorithm: the static
 * inline bodies of syncq/static/queue/nblfq_core.h (004 Algorithms 1-4,
 * written once for both cell widths and every tag width), counting events
 * in the library's statistics, under the short names src/queue/nblfq.c,
 * nblfq2.c and tests/queue use.
 */
#ifndef SYNCQ_QUEUE_NBLFQ_CORE_H
#define SYNCQ_QUEUE_NBLFQ_CORE_H

#include "../stats_internal.h" /* before the static header: the library's counters */
#include "syncq/static/queue/nblfq_core.h"

#define NBL_PTR_BITS SYNCQ_NBL_PTR_BITS
#define NBL_PTR_MASK SYNCQ_NBL_PTR_MASK
#define nbl_cas syncq_nbl_cas
#define nbl_cell syncq_nbl_cell
#define nbl_check_invariant syncq_nbl_check_invariant
#define nbl_comp syncq_nbl_comp
#define nbl_dequeue syncq_nbl_dequeue
#define nbl_enqueue syncq_nbl_enqueue
#define nbl_init_cells syncq_nbl_init_cells
#define nbl_load syncq_nbl_load
#define nbl_same syncq_nbl_same
#define nbl_wmask syncq_nbl_wmask

#endif /* SYNCQ_QUEUE_NBLFQ_CORE_H */
