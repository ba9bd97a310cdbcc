/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * registry.c — name -> algorithm tables (syncq/registry.h).
 *
 * Entries live in one array; the built-in ones are placed there once, on
 * first use. Writers (syncq_registry_add) serialise on a mutex and publish
 * an entry by a release store of the count; readers load the count with
 * acquire and then read only entries below it, so they never take the
 * mutex.
 */
#include "syncq/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* The built-in lists, one per family (src/<family>/<family>_registry.c),
 * each NULL-terminated, in family order. */
extern const syncq_algo *const syncq_builtin_lock[];
extern const syncq_algo *const syncq_builtin_barrier[];
extern const syncq_algo *const syncq_builtin_counter[];
extern const syncq_algo *const syncq_builtin_queue[];
extern const syncq_algo *const syncq_builtin_stack[];
extern const syncq_algo *const syncq_builtin_pqueue[];

static const syncq_algo *const *const builtin[SYNCQ_FAMILY_COUNT] = {
  [SYNCQ_FAMILY_LOCK] = syncq_builtin_lock,       [SYNCQ_FAMILY_BARRIER] = syncq_builtin_barrier,
  [SYNCQ_FAMILY_COUNTER] = syncq_builtin_counter, [SYNCQ_FAMILY_QUEUE] = syncq_builtin_queue,
  [SYNCQ_FAMILY_STACK] = syncq_builtin_stack,     [SYNCQ_FAMILY_PQUEUE] = syncq_builtin_pqueue,
};

static const syncq_algo *entries[SYNCQ_REGISTRY_MAX];
static _Atomic(size_t) n_entries;
static pthread_mutex_t add_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static const char *const family_names[SYNCQ_FAMILY_COUNT] = {
  "lock", "barrier", "counter", "queue", "stack", "pqueue",
};

static const char *const progress_names[] = {
  "blocking",
  "obstruction-free",
  "lock-free",
  "wait-free",
};

static const char *const prop_names[] = {
  "linearizable", "fifo", "bounded",        "allocates",         "signal-safe",        "process-shared",
  "peer",         "spsc", "loose-capacity", "sleeps-by-default", "spins-on-preempted", "uses-node",
};

#define N_PROP_NAMES (sizeof prop_names / sizeof prop_names[0])

const char *syncq_family_name(syncq_family f) { return ((unsigned)f < SYNCQ_FAMILY_COUNT) ? family_names[f] : NULL; }

int syncq_family_from_name(const char *name, syncq_family *out) {
  if (name == NULL || out == NULL) return SYNCQ_EINVAL;
  for (unsigned f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    if (strcmp(name, family_names[f]) == 0) {
      *out = (syncq_family)f;
      return SYNCQ_OK;
    }
  }
  return SYNCQ_ENOENT;
}

const char *syncq_progress_name(syncq_progress p) {
  return ((unsigned)p < sizeof progress_names / sizeof progress_names[0]) ? progress_names[p] : NULL;
}

int syncq_props_format(uint32_t props, char *buf, size_t len) {
  if (buf == NULL && len > 0) return SYNCQ_EINVAL;
  size_t need = 0;
  char tmp[256] = "";
  for (unsigned i = 0; i < N_PROP_NAMES; i++) {
    if (props & (1u << i)) {
      need += (size_t)snprintf(tmp + need, sizeof tmp - need, "%s%s", need ? "," : "", prop_names[i]);
    }
  }
  if (need == 0) need = (size_t)snprintf(tmp, sizeof tmp, "-");
  if (len > 0) snprintf(buf, len, "%s", tmp);
  return (int)need;
}

int syncq_props_parse(const char *text, uint32_t *out) {
  if (text == NULL || out == NULL) return SYNCQ_EINVAL;
  if (strcmp(text, "-") == 0) {
    *out = 0;
    return SYNCQ_OK;
  }
  uint32_t props = 0;
  const char *p = text;
  for (;;) {
    size_t n = strcspn(p, ",");
    unsigned i = 0;
    while (i < N_PROP_NAMES && !(strlen(prop_names[i]) == n && strncmp(p, prop_names[i], n) == 0)) i++;
    if (i == N_PROP_NAMES) return SYNCQ_ENOENT; /* unknown, or empty (",,", trailing ",") */
    props |= 1u << i;
    if (p[n] == '\0') break;
    p += n + 1;
  }
  *out = props;
  return SYNCQ_OK;
}

static int add_locked(const syncq_algo *a) {
  size_t n = atomic_load_explicit(&n_entries, memory_order_relaxed); /* writers hold add_mutex */
  for (size_t i = 0; i < n; i++) {
    if (entries[i]->family == a->family && strcmp(entries[i]->name, a->name) == 0) return SYNCQ_EEXIST;
  }
  if (n == SYNCQ_REGISTRY_MAX) return SYNCQ_ELIMIT;
  entries[n] = a;
  /* release: publishes entries[n]; pairs with the acquire loads in
   * syncq_registry_find/list. */
  atomic_store_explicit(&n_entries, n + 1, memory_order_release);
  return SYNCQ_OK;
}

static void add_builtin(void) {
  pthread_mutex_lock(&add_mutex);
  for (int f = 0; f < SYNCQ_FAMILY_COUNT; f++)
    for (size_t i = 0; builtin[f][i] != NULL; i++) (void)add_locked(builtin[f][i]);
  pthread_mutex_unlock(&add_mutex);
}

static size_t published(void) {
  pthread_once(&builtin_once, add_builtin);
  /* acquire: pairs with the release store in add_locked(). */
  return atomic_load_explicit(&n_entries, memory_order_acquire);
}

static int valid_algo(const syncq_algo *a) {
  return a != NULL && (unsigned)a->family < SYNCQ_FAMILY_COUNT && a->name != NULL && a->name[0] != '\0' &&
         a->ops != NULL && syncq_progress_name(a->progress) != NULL;
}

int syncq_registry_add(const syncq_algo *algo) {
  if (!valid_algo(algo)) return SYNCQ_EINVAL;
  (void)published();
  pthread_mutex_lock(&add_mutex);
  int r = add_locked(algo);
  pthread_mutex_unlock(&add_mutex);
  return r;
}

int syncq_registry_find(syncq_family f, const char *name, const syncq_algo **out) {
  if ((unsigned)f >= SYNCQ_FAMILY_COUNT || name == NULL || out == NULL) return SYNCQ_EINVAL;
  size_t n = published();
  for (size_t i = 0; i < n; i++) {
    if (entries[i]->family == f && strcmp(entries[i]->name, name) == 0) {
      *out = entries[i];
      return SYNCQ_OK;
    }
  }
  return SYNCQ_ENOENT;
}

int syncq_registry_list(syncq_family f, const syncq_algo **out, size_t cap) {
  if ((unsigned)f >= SYNCQ_FAMILY_COUNT || (out == NULL && cap > 0)) return SYNCQ_EINVAL;
  size_t n = published(), k = 0;
  for (size_t i = 0; i < n; i++) {
    if (entries[i]->family != f) continue;
    if (k < cap) out[k] = entries[i];
    k++;
  }
  return (int)k;
}
