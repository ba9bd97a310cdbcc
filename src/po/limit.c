/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * limit.c — which system limit refused a thread or a mapping (the names
 * of syncq_po_limit_reason()): read from /proc and the cgroup after
 * pthread_create or mmap has failed. Below the stacks, the scheduler and
 * the process table, which all report through it.
 *
 * Contract
 *   Progress:    blocking (reads files of /proc and /sys); called only on
 *                a failure path, never on a message hop.
 *   Memory:      none kept; the names returned are static strings.
 *   Signal-safe: no.  Process-shared: no.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "po_internal.h"

static long read_long(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  long v = -1;
  if (fscanf(f, "%ld", &v) != 1) v = -1;
  fclose(f);
  return v;
}

/* Tasks on the whole system: the 4th field of /proc/loadavg, "running/total". */
static long system_tasks(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  if (f == NULL) return -1;
  double a, b, c;
  long run, total = -1;
  if (fscanf(f, "%lf %lf %lf %ld/%ld", &a, &b, &c, &run, &total) != 5) total = -1;
  fclose(f);
  return total;
}

static long count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  long n = 0;
  int ch;
  while ((ch = fgetc(f)) != EOF)
    if (ch == '\n') n++;
  fclose(f);
  return n;
}

/* The cgroup v2 pids controller of this process: pids.max and pids.current. */
static bool cgroup_pids_full(void) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (f == NULL) return false;
  char line[512], path[640];
  bool full = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "0::", 3) != 0) continue;
    line[strcspn(line, "\n")] = '\0';
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/pids.max", line + 3);
    long max = read_long(path); /* "max" does not parse: -1, no limit */
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/pids.current", line + 3);
    long cur = read_long(path);
    full = max > 0 && cur >= 0 && cur + 2 >= max;
  }
  fclose(f);
  return full;
}

#define NEAR(cur, max) ((max) > 0 && (cur) >= 0 && (cur) + 16 >= (max))

const char *po_limit_of(int err) {
  if (err == ENOMEM) {
    long maps = count_lines("/proc/self/maps");
    if (NEAR(maps, read_long("/proc/sys/vm/max_map_count"))) return "vm.max_map_count";
    return "memory";
  }
  if (err == EAGAIN) {
    struct rlimit rl;
    long tasks = system_tasks();
    if (cgroup_pids_full()) return "cgroup pids.max";
    if (NEAR(tasks, read_long("/proc/sys/kernel/threads-max"))) return "kernel.threads-max";
    if (NEAR(tasks, read_long("/proc/sys/kernel/pid_max"))) return "kernel.pid_max";
    if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
      /* RLIMIT_NPROC counts every task of the user, which this process
       * cannot see cheaply: a finite limit with nothing else full is the
       * cause. */
      return "RLIMIT_NPROC";
    }
    long maps = count_lines("/proc/self/maps");
    if (NEAR(maps, read_long("/proc/sys/vm/max_map_count"))) return "vm.max_map_count";
    return "memory";
  }
  static const char *const unknown[] = {"unknown (errno 0)", "unknown (errno EINVAL)", "unknown (errno EPERM)",
                                        "unknown (errno other)"};
  return err == 0 ? unknown[0] : err == EINVAL ? unknown[1] : err == EPERM ? unknown[2] : unknown[3];
}
