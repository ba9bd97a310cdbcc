/* SPDX-License-Identifier: BSD-2-Clause */
/* experiments.c — the list of experiments syncq-lab knows, in report order. */
#include <string.h>

#include "lab.h"
#include "syncq/status.h"
#include "syncq/wait.h"

extern const lab_experiment lab_exp_phys;
extern const lab_experiment lab_exp_np99_counter;
extern const lab_experiment lab_exp_np99_locks;
extern const lab_experiment lab_exp_np99_barrier;
extern const lab_experiment lab_exp_locks_cost;
extern const lab_experiment lab_exp_lf07_sort;
extern const lab_experiment lab_exp_po_ring;
extern const lab_experiment lab_exp_po_switch;
extern const lab_experiment lab_exp_po_skynet;
extern const lab_experiment lab_exp_po_server;
extern const lab_experiment lab_exp_ms98_stack;
extern const lab_experiment lab_exp_ms98_heap;
extern const lab_experiment lab_exp_ms98_counter;
extern const lab_experiment lab_exp_ms98_queue;
extern const lab_experiment lab_exp_dg25_prodcons;
extern const lab_experiment lab_exp_dg25_latency;
extern const lab_experiment lab_exp_dg25_mt_pingpong;
extern const lab_experiment lab_exp_dg25_casfail;
extern const lab_experiment lab_exp_queue_1p1c;
extern const lab_experiment lab_exp_queue_sides;
extern const lab_experiment lab_exp_lc98_logp;
extern const lab_experiment lab_exp_lc98_stress;
extern const lab_experiment lab_exp_lc98_apps;
extern const lab_experiment lab_exp_np99_mp_queue;
extern const lab_experiment lab_exp_np99_mp_barrier;
extern const lab_experiment lab_exp_ms98_quicksort;
extern const lab_experiment lab_exp_ms98_tsp;
extern const lab_experiment lab_exp_np99_apps;
extern const lab_experiment lab_exp_np99_apps_dedicated;

/* phys first: every report shows the machine's floors before the rest. */
static const lab_experiment *const all[] = {
  &lab_exp_phys,
  &lab_exp_np99_counter,
  &lab_exp_np99_locks,
  &lab_exp_np99_barrier,
  &lab_exp_np99_mp_queue,
  &lab_exp_np99_mp_barrier,
  &lab_exp_locks_cost,
  &lab_exp_lf07_sort,
  &lab_exp_po_switch,
  &lab_exp_po_ring,
  &lab_exp_po_skynet,
  &lab_exp_po_server,
  &lab_exp_ms98_stack,
  &lab_exp_ms98_heap,
  &lab_exp_ms98_counter,
  &lab_exp_ms98_queue,
  &lab_exp_dg25_prodcons,
  &lab_exp_dg25_latency,
  &lab_exp_dg25_mt_pingpong,
  &lab_exp_dg25_casfail,
  &lab_exp_queue_1p1c,
  &lab_exp_queue_sides,
  &lab_exp_lc98_logp,
  &lab_exp_lc98_stress,
  &lab_exp_lc98_apps,
  &lab_exp_ms98_quicksort,
  &lab_exp_ms98_tsp,
  &lab_exp_np99_apps,
  &lab_exp_np99_apps_dedicated,
};

size_t lab_experiment_count(void) { return sizeof all / sizeof all[0]; }

const lab_experiment *lab_experiment_at(size_t i) { return i < lab_experiment_count() ? all[i] : NULL; }

const lab_experiment *lab_experiment_find(const char *name) {
  for (size_t i = 0; i < lab_experiment_count(); i++)
    if (strcmp(all[i]->name, name) == 0) return all[i];
  return NULL;
}

bool lab_experiment_knows(const lab_experiment *e, const char *algo) {
  const syncq_algo *a;
  if (e->uses_registry && syncq_registry_find(e->family, algo, &a) == SYNCQ_OK) return true;
  if (e->also_family && syncq_registry_find(e->family2, algo, &a) == SYNCQ_OK) return true;
  /* baselines measured beside the registry's algorithms (e.g. "two-cas") */
  for (size_t i = 0; e->fixed_algos && e->fixed_algos[i]; i++)
    if (strcmp(e->fixed_algos[i], algo) == 0) return true;
  /* "<algorithm>@<discipline>" (the rows of one waiting discipline,
   * "mcs@block"), as the claims name them: lab_selected matches it whole */
  const char *at = strchr(algo, '@');
  char base[128];
  int disc;
  if (at == NULL || (size_t)(at - algo) >= sizeof base || syncq_wait_from_name(at + 1, &disc) != SYNCQ_OK) return false;
  memcpy(base, algo, (size_t)(at - algo));
  base[at - algo] = '\0';
  return lab_experiment_knows(e, base);
}
