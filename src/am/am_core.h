/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_core.h — what am.c (sending, polling, dispatch: layer 5 of src/am,
 * the order is at the top of am_segment.h) offers the transports above it
 * (src/am/mpi/).
 */
#ifndef SYNCQ_AM_CORE_H
#define SYNCQ_AM_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "am_internal.h"
#include "am_segment.h"
#include "syncq/am.h"

/* Run the handler of one message for ep (counting it as delivered or
 * unhandled), as a poll does; for a message that came through a
 * transport. */
void am_dispatch(syncq_am_endpoint *ep, syncq_am_token *tk, unsigned handler, const uint32_t *args, unsigned nargs,
                 const void *data, size_t len);

#endif /* SYNCQ_AM_CORE_H */
