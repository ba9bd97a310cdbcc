/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fiber_current.c — the fiber running on the calling thread: one
 * thread-local pointer, written by the scheduler at each switch
 * (fiber_sched.c) and read by the layers that ask "which process runs
 * here?" (the overflow report of fiber_stack.c, the postoffice's caller
 * checks). At the bottom of the fiber backend, below the stacks and the
 * scheduler, so both read it without calling each other.
 *
 * Contract
 *   Progress:    wait-free (a thread-local load or store).
 *   Memory:      none.
 *   Signal-safe: yes (po_fiber_current reads an initial-exec thread-local:
 *                the overflow handler calls it).  Process-shared: no.
 *
 * Read and written only through these two functions, which are never
 * inlined (noinline on their declarations in fiber_internal.h): a fiber
 * may resume on another thread, and a compiler that kept a thread-local
 * address across a jump would use the old thread's. A
 * build without fibers never writes it: po_fiber_current is then NULL.
 */
#include "fiber_internal.h"

static _Thread_local po_fiber *tls_running __attribute__((tls_model("initial-exec")));

po_fiber *po_fiber_current(void) {
  po_fiber *f = tls_running;
  __asm__ volatile("" ::: "memory");
  return f;
}

void po_fiber_set_current(po_fiber *f) {
  tls_running = f;
  __asm__ volatile("" ::: "memory");
}
