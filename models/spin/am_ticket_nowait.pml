/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_ticket_nowait.pml — am_ticket.pml itself, under a second name: the
 * checks of the NOWAIT claim (queue_trylock, -DNOWAITS) and the further
 * checks of Anderson's scan run as a test of their own
 * (`models/spin/run am_ticket_nowait`, CTest spin_am_ticket_nowait), so
 * that neither test runs for long. The model, its parameters and its
 * properties: am_ticket.pml.
 */
#include "am_ticket.pml"
