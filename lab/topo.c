/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * topo.c — machine topology and thread pinning through hwloc.
 *
 * The pinning order puts one worker on each core before it puts a second
 * one on any core's sibling hardware thread: thread counts up to the core
 * count then measure cores, not SMT siblings, on every machine.
 */
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "lab.h"

struct lab_topo {
  hwloc_topology_t topo;
  int npus;
  int ncores;
  int *order; /* slot -> index of the PU object (logical index) */
  char model[256];
};

lab_topo *lab_topo_load(char *why, size_t len) {
  lab_topo *t = calloc(1, sizeof *t);
  if (t == NULL) {
    snprintf(why, len, "out of memory");
    return NULL;
  }
  if (hwloc_topology_init(&t->topo) != 0) {
    snprintf(why, len, "hwloc could not load the topology");
    free(t);
    return NULL;
  }
  if (hwloc_topology_load(t->topo) != 0) {
    snprintf(why, len, "hwloc could not load the topology");
    hwloc_topology_destroy(t->topo); /* what init allocated */
    free(t);
    return NULL;
  }
  t->npus = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
  t->ncores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
  if (t->npus < 1) t->npus = 1;
  if (t->ncores < 1) t->ncores = t->npus;
  t->order = calloc((size_t)t->npus, sizeof *t->order);
  if (t->order == NULL) {
    snprintf(why, len, "out of memory");
    hwloc_topology_destroy(t->topo);
    free(t);
    return NULL;
  }
  /* Round k takes the k-th PU of every core. */
  int n = 0;
  for (int k = 0; n < t->npus; k++) {
    int before = n;
    for (int c = 0; c < t->ncores && n < t->npus; c++) {
      hwloc_obj_t core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, (unsigned)c);
      if (core == NULL) continue;
      hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(t->topo, core->cpuset, HWLOC_OBJ_PU, (unsigned)k);
      if (pu != NULL) t->order[n++] = (int)pu->logical_index;
    }
    if (n == before) break; /* no core has a k-th PU: PUs outside cores */
  }
  for (int i = n; i < t->npus; i++) t->order[i] = i; /* fall back to logical order */
  const char *model = NULL;
  hwloc_obj_t pkg = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE, 0);
  if (pkg) model = hwloc_obj_get_info_by_name(pkg, "CPUModel");
  if (model == NULL) model = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t->topo), "CPUModel");
  snprintf(t->model, sizeof t->model, "%s", model ? model : "unknown");
  return t;
}

void lab_topo_free(lab_topo *t) {
  if (t == NULL) return;
  hwloc_topology_destroy(t->topo);
  free(t->order);
  free(t);
}

int lab_topo_pus(const lab_topo *t) { return t->npus; }
int lab_topo_cores(const lab_topo *t) { return t->ncores; }
const char *lab_topo_cpu_model(const lab_topo *t) { return t->model; }

static hwloc_obj_t pu_of_slot(const lab_topo *t, int slot) {
  int s = slot < 0 ? 0 : slot % t->npus;
  return hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PU, (unsigned)t->order[s]);
}

int lab_topo_pu_of_slot(const lab_topo *t, int slot) {
  hwloc_obj_t pu = pu_of_slot(t, slot);
  return pu ? (int)pu->os_index : -1;
}

int lab_topo_pin_self(const lab_topo *t, int slot, char *why, size_t len) {
  hwloc_obj_t pu = pu_of_slot(t, slot);
  if (pu == NULL) {
    snprintf(why, len, "no processing unit for slot %d", slot);
    return -1;
  }
  if (hwloc_set_cpubind(t->topo, pu->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    snprintf(why, len, "hwloc_set_cpubind(PU %u): %s", pu->os_index, strerror(errno));
    return -1;
  }
  return 0;
}

void lab_topo_unpin_self(const lab_topo *t) {
  hwloc_const_cpuset_t all = hwloc_topology_get_allowed_cpuset(t->topo);
  (void)hwloc_set_cpubind(t->topo, all, HWLOC_CPUBIND_THREAD);
}
