/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lprq.pml — LPRQ (src/queue/lprq.c: prq_enqueue, prq_dequeue, the cell's
 * se and val words each CASed alone, the thread marks) in the linked rings
 * it shares with LCRQ (src/queue/linked_rings.h): lcrq.pml with PRQ = 1,
 * under its own name so that its checks run as a test of their own
 * (`models/spin/run lprq`, CTest spin_lprq). The model, its parameters,
 * its abstractions and its properties: lcrq.pml.
 */
#define PRQ 1
#include "lcrq.pml"
