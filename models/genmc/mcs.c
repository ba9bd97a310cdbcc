/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mcs.c — GenMC driver for the MCS lock: the static inline bodies of
 * syncq/static/lock/mcs.h (the exported functions of src/lock/mcs.c are
 * built from them) with the SPIN discipline. A waiter stores its flag
 * only when it has a predecessor, before the release store that links
 * it: the predecessor, the flag's only other writer, reads that link
 * first.
 *
 * Threads and checks: lock_driver.h (A takes the lock GENMC_ROUNDS
 * times, default 3; destroy checks the lock is free).
 *
 * GENMC_SEED_BUG (the control): the swap of tail weakened to relaxed
 * (acq_rel in the body): an uncontended acquisition then does not
 * synchronise with the previous holder's CAS of tail to NULL (GenMC
 * reports the race on the counter).
 *
 * The out-of-line wait helpers: lock_spin_waits.h (SPIN stand-ins).
 */
#include "genmc_shim.h"

#include "lock_spin_waits.h"

#if defined(GENMC_SEED_BUG)
/* the swap (and the sleeping hand-over's exchange, unused with SPIN) */
#undef atomic_exchange_explicit
#define atomic_exchange_explicit(p, d, o) __c11_atomic_exchange((p), (d), __ATOMIC_RELAXED)
#endif

#ifndef GENMC_ROUNDS
#define GENMC_ROUNDS 3
#endif

#include "lock/mcs.c"

#define LOCK_DRIVER_T syncq_lock_mcs
#define LOCK_DRIVER_FN(verb) syncq_lock_mcs_##verb
#define LOCK_DRIVER_AFTER(l) ((void)(l)) /* destroy has checked the lock is free */
#include "lock_driver.h"
