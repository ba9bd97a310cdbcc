/*
 * queue_registry.c — the built-in queues, in the order listings show them.
 * A list, not an algorithm: each algorithm's contract block (source,
 * progress, atomics, memory, limits) is in its own file beside this one.
 * Add an entry here when adding an algorithm to this family.
 */
#include "syncq/registry.h"

const syncq_algo *const syncq_builtin_queue[] = {
  NULL,
};
