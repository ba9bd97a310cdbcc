/* SPDX-License-Identifier: BSD-2-Clause */
/* status.c — names of syncq_status codes. */
#include "syncq/status.h"

const char *syncq_strerror(int status) {
  switch ((syncq_status)status) {
  case SYNCQ_OK:
    return "ok";
  case SYNCQ_EMPTY:
    return "empty";
  case SYNCQ_FULL:
    return "full";
  case SYNCQ_EINVAL:
    return "invalid argument";
  case SYNCQ_ENOMEM:
    return "out of memory";
  case SYNCQ_ENOTSUP:
    return "not supported by this algorithm, machine or build";
  case SYNCQ_ENOENT:
    return "no such name or process";
  case SYNCQ_EEXIST:
    return "name already taken";
  case SYNCQ_ELIMIT:
    return "capacity or system limit reached";
  case SYNCQ_ETIMEDOUT:
    return "timed out";
  case SYNCQ_EBUSY:
    /* every EBUSY in the API refuses rather than waits: a trylock or a
     * claim finding the lock held, a destroy finding an operation, a
     * process, a thread or an endpoint still in it */
    return "busy: held or still in use (a lock, an unfinished call, a live process); nothing was done: "
           "retry once it is released";
  case SYNCQ_ESYS:
    return "system call failed (errno holds the reason)";
  case SYNCQ_EDEAD:
    return "peer has exited";
  case SYNCQ_EBROKEN:
    return "barrier broken by a timed-out wait (syncq_barrier_reset mends it)";
  case SYNCQ_EKILLED:
    return "process killed by an exit signal (return from its body)";
  }
  return "unknown status";
}
