/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * machine.c — facts about the machine that are not topology: whether
 * hardware performance counters can be read here.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lab.h"

const char *lab_perf_counters_probe(char *buf, size_t len) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) {
    snprintf(buf, len, "unavailable: perf_event_open(instructions): %s", strerror(errno));
  } else {
    close((int)fd);
    snprintf(buf, len, "available");
  }
  return buf;
}

long lab_vm_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld", &kb) == 1) break;
  fclose(f);
  return kb;
}
