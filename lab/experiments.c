/* experiments.c — the list of experiments syncq-lab knows, in report order. */
#include <string.h>

#include "lab.h"

extern const lab_experiment lab_exp_phys;
extern const lab_experiment lab_exp_np99_counter;

/* phys first: every report shows the machine's floors before the rest. */
static const lab_experiment *const all[] = {
  &lab_exp_phys,
  &lab_exp_np99_counter,
};

size_t lab_experiment_count(void) { return sizeof all / sizeof all[0]; }

const lab_experiment *lab_experiment_at(size_t i) { return i < lab_experiment_count() ? all[i] : NULL; }

const lab_experiment *lab_experiment_find(const char *name) {
  for (size_t i = 0; i < lab_experiment_count(); i++)
    if (strcmp(all[i]->name, name) == 0) return all[i];
  return NULL;
}

bool lab_experiment_knows(const lab_experiment *e, const char *algo) {
  if (e->uses_registry) {
    const syncq_algo *a;
    return syncq_registry_find(e->family, algo, &a) == SYNCQ_OK;
  }
  for (size_t i = 0; e->fixed_algos && e->fixed_algos[i]; i++)
    if (strcmp(e->fixed_algos[i], algo) == 0) return true;
  return false;
}
