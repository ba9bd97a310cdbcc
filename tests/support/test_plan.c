/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_plan.c — the plan's PU count and the confined PU set
 * (test_plan.h). The only test file that reads the machine's PU count.
 *
 * PUs are counted and bound with hwloc (TEST_PLAN_HWLOC, where the build
 * has it); a build without hwloc (the AArch64 cross build) counts them
 * with sysconf and binds with sched_setaffinity, which binds the calling
 * thread only: hence test_plan_confine() first thing in main().
 */
#include "test_plan.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef TEST_PLAN_HWLOC
#include <hwloc.h>
#endif

static pthread_once_t pus_once = PTHREAD_ONCE_INIT;
static pthread_once_t confine_once = PTHREAD_ONCE_INIT;
static int machine_pus; /* written once under pus_once */
static int plan_pus;
static int confined_pus; /* written once under confine_once */

#ifdef TEST_PLAN_HWLOC
static int count_machine_pus(void) {
  hwloc_topology_t topo;
  int n = -1;
  if (hwloc_topology_init(&topo) == 0) {
    if (hwloc_topology_load(topo) == 0) n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    hwloc_topology_destroy(topo);
  }
  return n;
}
#else
static int count_machine_pus(void) { return (int)sysconf(_SC_NPROCESSORS_ONLN); }
#endif

static void init_pus(void) {
  int m = count_machine_pus();
  machine_pus = m < 1 ? 1 : m;
  plan_pus = machine_pus;
  const char *env = getenv("SYNCQ_TEST_PUS");
  if (env == NULL) return;
  char *end = NULL;
  errno = 0;
  long v = strtol(env, &end, 10);
  if (env[0] < '0' || env[0] > '9' || end == env || *end != '\0' || errno != 0 || v < 1 || v > TEST_PLAN_MAX_PUS) {
    fprintf(stderr,
            "test setup error: SYNCQ_TEST_PUS=\"%s\" is not a whole number of processing units from 1 to %d "
            "(unset it to plan for this machine's %d)\n",
            env, TEST_PLAN_MAX_PUS, machine_pus);
    exit(EXIT_FAILURE);
  }
  plan_pus = (int)v;
}

int test_plan_pus(void) {
  pthread_once(&pus_once, init_pus);
  return plan_pus;
}

int test_plan_machine_pus(void) {
  pthread_once(&pus_once, init_pus);
  return machine_pus;
}

static int wanted_pus(void) {
  int want = TEST_PLAN_CONFINED_PUS;
  if (test_plan_pus() < want) want = test_plan_pus();
  return want;
}

#ifdef TEST_PLAN_HWLOC
/* Among the PUs this process may run on now, one per core where there are
 * enough cores (two hyperthreads of one core would be a smaller machine
 * than the 2-core one the factors were set on), else any; the set starts
 * at an offset taken from the process id, so test programs run side by
 * side (ctest -j) on a large machine land on different PUs. */
static void confine(void) {
  int want = wanted_pus();
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) goto unbound;
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    goto unbound;
  }
  hwloc_bitmap_t allowed = hwloc_bitmap_alloc(), chosen = hwloc_bitmap_alloc(), firsts = hwloc_bitmap_alloc();
  if (allowed == NULL || chosen == NULL || firsts == NULL) goto out;
  if (hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(allowed))
    hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
  hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_topology_cpuset(topo));
  /* the first allowed PU of each core */
  int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  for (int c = 0; c < ncores; c++) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)c);
    hwloc_bitmap_t both = hwloc_bitmap_alloc();
    if (both == NULL) continue;
    hwloc_bitmap_and(both, core->cpuset, allowed);
    int pu = hwloc_bitmap_first(both);
    if (pu >= 0) hwloc_bitmap_set(firsts, (unsigned)pu);
    hwloc_bitmap_free(both);
  }
  hwloc_const_bitmap_t from = hwloc_bitmap_weight(firsts) >= want ? firsts : allowed;
  int avail = hwloc_bitmap_weight(from);
  if (avail < 1) goto out;
  if (want > avail) want = avail;
  int groups = avail / want, skip = (int)(getpid() % groups) * want, taken = 0, i;
  hwloc_bitmap_foreach_begin(i, from) {
    if (skip > 0) {
      skip--;
    } else if (taken < want) {
      hwloc_bitmap_set(chosen, (unsigned)i);
      taken++;
    }
  }
  hwloc_bitmap_foreach_end();
  if (hwloc_set_cpubind(topo, chosen, HWLOC_CPUBIND_PROCESS) != 0 &&
      hwloc_set_cpubind(topo, chosen, HWLOC_CPUBIND_THREAD) != 0) {
    fprintf(stderr, "test plan: could not bind to %d PUs (%s): sized for %d, running unconfined\n", taken,
            strerror(errno), taken);
  } else {
    char *list = NULL;
    hwloc_bitmap_list_asprintf(&list, chosen);
    fprintf(stderr, "test plan: %d PU%s planned%s, confined to %d (PU %s)\n", test_plan_pus(),
            test_plan_pus() == 1 ? "" : "s", getenv("SYNCQ_TEST_PUS") ? " (SYNCQ_TEST_PUS)" : "", taken,
            list ? list : "?");
    free(list);
  }
  confined_pus = taken;
out:
  hwloc_bitmap_free(allowed);
  hwloc_bitmap_free(chosen);
  hwloc_bitmap_free(firsts);
  hwloc_topology_destroy(topo);
  if (confined_pus > 0) return;
unbound:
  confined_pus = want;
}
#else
static void confine(void) {
  int want = wanted_pus();
  cpu_set_t allowed, chosen;
  CPU_ZERO(&chosen);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    confined_pus = want;
    return;
  }
  int taken = 0;
  for (int i = 0; i < CPU_SETSIZE && taken < want; i++)
    if (CPU_ISSET(i, &allowed)) {
      CPU_SET(i, &chosen);
      taken++;
    }
  if (taken == 0 || sched_setaffinity(0, sizeof chosen, &chosen) != 0) {
    confined_pus = want;
    return;
  }
  fprintf(stderr, "test plan: %d PU%s planned, confined to %d\n", test_plan_pus(), test_plan_pus() == 1 ? "" : "s",
          taken);
  confined_pus = taken;
}
#endif

int test_plan_confine(void) {
  pthread_once(&confine_once, confine);
  return confined_pus;
}

int test_plan_oversubscribed(int per_pu) {
  int t = test_plan_confine() * (per_pu < 1 ? 1 : per_pu);
  return t > TEST_PLAN_MAX_THREADS ? TEST_PLAN_MAX_THREADS : t;
}
