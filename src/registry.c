/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * registry.c — name -> algorithm tables (syncq/registry.h), below the
 * families: the names of families, progress guarantees and properties,
 * and the store of the entries syncq_registry_add puts in. It knows no
 * family's built-in list: each lookup is handed the list to search
 * (registry_internal.h), by the family itself (syncq_<family>_find) or by
 * the lookups across families above them (src/registry_families.c).
 *
 * Added entries live in one array. Writers (syncq_registry_add_in)
 * serialise on a mutex and publish an entry by a release store of the
 * count; readers load the count with acquire and then read only entries
 * below it, so they never take the mutex.
 */
#include "syncq/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "registry_internal.h"

static const syncq_algo *added[SYNCQ_REGISTRY_MAX];
static _Atomic(size_t) n_added;
static pthread_mutex_t add_mutex = PTHREAD_MUTEX_INITIALIZER;

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

static int valid_algo(const syncq_algo *a) {
  return a != NULL && (unsigned)a->family < SYNCQ_FAMILY_COUNT && a->name != NULL && a->name[0] != '\0' &&
         a->ops != NULL && syncq_progress_name(a->progress) != NULL;
}

static int same(const syncq_algo *e, syncq_family f, const char *name) {
  return e->family == f && strcmp(e->name, name) == 0;
}

static size_t published(void) {
  /* acquire: pairs with the release store in syncq_registry_add_in(), so
   * added[i] below the count is the entry it published. */
  return atomic_load_explicit(&n_added, memory_order_acquire);
}

int syncq_registry_add_in(const syncq_algo *const *const builtin[SYNCQ_FAMILY_COUNT], const syncq_algo *algo) {
  if (!valid_algo(algo)) return SYNCQ_EINVAL;
  /* The built-in entries count toward SYNCQ_REGISTRY_MAX; a name one of
   * them holds in the family is taken. The lists are constant. */
  size_t n_builtin = 0;
  for (unsigned f = 0; f < SYNCQ_FAMILY_COUNT; f++) {
    for (size_t i = 0; builtin[f] != NULL && builtin[f][i] != NULL; i++, n_builtin++) {
      if (same(builtin[f][i], algo->family, algo->name)) return SYNCQ_EEXIST;
    }
  }
  pthread_mutex_lock(&add_mutex);
  size_t n = atomic_load_explicit(&n_added, memory_order_relaxed); /* writers hold add_mutex */
  int r = SYNCQ_OK;
  for (size_t i = 0; i < n && r == SYNCQ_OK; i++) {
    if (same(added[i], algo->family, algo->name)) r = SYNCQ_EEXIST;
  }
  if (r == SYNCQ_OK && n_builtin + n >= SYNCQ_REGISTRY_MAX) r = SYNCQ_ELIMIT;
  if (r == SYNCQ_OK) {
    added[n] = algo;
    /* release: publishes added[n]; pairs with the acquire load in
     * published(). */
    atomic_store_explicit(&n_added, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&add_mutex);
  return r;
}

int syncq_registry_find_in(const syncq_algo *const *builtin, syncq_family f, const char *name, const syncq_algo **out) {
  if ((unsigned)f >= SYNCQ_FAMILY_COUNT || name == NULL || out == NULL) return SYNCQ_EINVAL;
  for (size_t i = 0; builtin != NULL && builtin[i] != NULL; i++) {
    if (same(builtin[i], f, name)) {
      *out = builtin[i];
      return SYNCQ_OK;
    }
  }
  size_t n = published();
  for (size_t i = 0; i < n; i++) {
    if (same(added[i], f, name)) {
      *out = added[i];
      return SYNCQ_OK;
    }
  }
  return SYNCQ_ENOENT;
}

int syncq_registry_list_in(const syncq_algo *const *builtin, syncq_family f, const syncq_algo **out, size_t cap) {
  if ((unsigned)f >= SYNCQ_FAMILY_COUNT || (out == NULL && cap > 0)) return SYNCQ_EINVAL;
  size_t k = 0;
  for (size_t i = 0; builtin != NULL && builtin[i] != NULL; i++) {
    if (builtin[i]->family != f) continue;
    if (k < cap) out[k] = builtin[i];
    k++;
  }
  size_t n = published();
  for (size_t i = 0; i < n; i++) {
    if (added[i]->family != f) continue;
    if (k < cap) out[k] = added[i];
    k++;
  }
  return (int)k;
}
