/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf_counters.c — one thread's event counters (perf_counters.h).
 */
#include "perf_counters.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* clang-format off */
const lab_perf_spec lab_perf_default_specs[LAB_PERF_DEFAULT_EVENTS] = {
  {"cycles",         PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,       false},
  {"instructions",   PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,     false},
  {"llc_misses",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,     false},
  {"branch_misses",  PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,    false},
  {"page_faults",    PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,  false},
  {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,   true},
};
/* clang-format on */

static int open_one(const lab_perf_spec *spec, bool user_only, int group) {
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = spec->type;
  attr.config = spec->config;
  attr.disabled = group < 0; /* the leader starts disabled; members follow it */
  attr.exclude_kernel = user_only;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -1 : (int)fd;
}

int lab_perf_open(lab_perf_set *s, const lab_perf_spec *specs, int n) {
  memset(s, 0, sizeof *s);
  s->specs = specs;
  s->leader = -1;
  for (int i = 0; i < LAB_PERF_MAX_EVENTS; i++) s->fd[i] = s->slot[i] = -1;
  if (specs == NULL || n < 0 || n > LAB_PERF_MAX_EVENTS) {
    for (int i = 0; i < LAB_PERF_MAX_EVENTS; i++) s->err[i] = EINVAL;
    return 0;
  }
  s->n = n;
  for (int i = 0; i < n; i++) {
    const lab_perf_spec *spec = &specs[i];
    if (s->user_only && spec->kernel_only) {
      s->err[i] = EACCES;
      continue;
    }
    int fd = open_one(spec, s->user_only, s->leader);
    /* Kernel space refused (perf_event_paranoid): user space alone, for
     * this event and the rest of the set. */
    if (fd < 0 && !s->user_only && (errno == EACCES || errno == EPERM)) {
      s->user_only = true;
      if (spec->kernel_only) {
        s->err[i] = EACCES;
        continue;
      }
      fd = open_one(spec, true, s->leader);
    }
    if (fd < 0) {
      s->err[i] = errno;
      continue;
    }
    if (s->leader < 0) s->leader = fd;
    s->fd[i] = fd;
    s->slot[i] = s->members++;
  }
  return s->members;
}

void lab_perf_enable(const lab_perf_set *s) {
  if (s->leader >= 0) (void)ioctl(s->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

void lab_perf_disable(const lab_perf_set *s) {
  if (s->leader >= 0) (void)ioctl(s->leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

void lab_perf_read(const lab_perf_set *s, lab_perf_counts *out) {
  uint64_t v[3 + LAB_PERF_MAX_EVENTS];
  ssize_t got = s->leader < 0 ? -1 : read(s->leader, v, sizeof v);
  lab_perf_decode(s, v, got < 0 ? 0 : (size_t)got / sizeof v[0], out);
}

void lab_perf_decode(const lab_perf_set *s, const uint64_t *v, size_t words, lab_perf_counts *out) {
  memset(out, 0, sizeof *out);
  out->sets = 1;
  out->running_fraction = 1.0;
  /* PERF_FORMAT_GROUP: nr, time enabled, time running, then nr values in
   * the order the members joined (slot) */
  if (s->members == 0 || words != 3 + (size_t)s->members || v[0] != (uint64_t)s->members) return;
  double fraction = 1.0;
  if (v[2] < v[1]) {
    if (v[2] == 0) return; /* enabled but never on the PMU: nothing to scale */
    fraction = (double)v[2] / (double)v[1];
    out->running_fraction = fraction;
  }
  for (int i = 0; i < s->n; i++) {
    if (s->slot[i] < 0) continue;
    uint64_t x = v[3 + s->slot[i]];
    if (fraction < 1.0) {
      x = (uint64_t)((double)x / fraction + 0.5);
      out->scaled |= 1u << i;
    }
    out->value[i] = x;
    out->present |= 1u << i;
  }
}

void lab_perf_close(lab_perf_set *s) {
  for (int i = 0; i < LAB_PERF_MAX_EVENTS; i++) {
    if (s->fd[i] >= 0) close(s->fd[i]);
    s->fd[i] = s->slot[i] = -1;
  }
  s->leader = -1;
  s->members = 0;
}

void lab_perf_counts_add(lab_perf_counts *sum, const lab_perf_counts *c) {
  if (c->sets == 0) return;
  if (sum->sets == 0) {
    *sum = *c;
    return;
  }
  sum->sets += c->sets;
  sum->present &= c->present;
  sum->scaled |= c->scaled;
  for (int i = 0; i < LAB_PERF_MAX_EVENTS; i++) sum->value[i] += c->value[i];
  if (c->running_fraction < sum->running_fraction) sum->running_fraction = c->running_fraction;
}

static size_t append(char *buf, size_t len, size_t k, const char *fmt, const char *a, const char *b) {
  if (k >= len) return k;
  int w = snprintf(buf + k, len - k, fmt, a, b);
  return w < 0 ? k : k + (size_t)w;
}

/* Why event i of s is absent. */
static const char *absent_why(const lab_perf_set *s, int i) {
  if (s->specs[i].kernel_only && s->err[i] == EACCES && s->user_only)
    return "counted in kernel space only, which perf_event_paranoid refuses";
  return strerror(s->err[i]);
}

/* The CPUs sched_getaffinity allows the calling thread, growing the set
 * until it holds the kernel's mask (EINVAL: a machine of more than its
 * CPUs); 0 with errno set where it fails. */
static int affinity_count(void) {
  for (int ncpus = 1024; ncpus <= (1 << 20); ncpus *= 2) {
    cpu_set_t *set = CPU_ALLOC((size_t)ncpus);
    if (set == NULL) return 0;
    size_t size = CPU_ALLOC_SIZE((size_t)ncpus);
    CPU_ZERO_S(size, set);
    int rc = sched_getaffinity(0, size, set);
    int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    int err = errno;
    CPU_FREE(set);
    if (rc == 0) return count;
    if (err != EINVAL) {
      errno = err;
      return 0;
    }
  }
  errno = EINVAL;
  return 0;
}

int lab_perf_cpus(const char **source, char *why, size_t len) {
  if (why != NULL && len > 0) why[0] = '\0';
  int n = affinity_count();
  if (n > 0) {
    if (source != NULL) *source = "sched_getaffinity";
    return n;
  }
  int affinity_err = errno;
  errno = 0;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0) {
    if (source != NULL) *source = "sysconf";
    return online > 1 << 20 ? 1 << 20 : (int)online;
  }
  if (source != NULL) *source = NULL;
  if (why != NULL && len > 0)
    snprintf(why, len, "sched_getaffinity: %s; sysconf(_SC_NPROCESSORS_ONLN): %s", strerror(affinity_err),
             errno ? strerror(errno) : "no answer");
  return 0;
}

const char *lab_perf_describe(char *buf, size_t len, bool enabled, bool everywhere, bool topology) {
  if (len == 0) return buf;
  if (!enabled) {
    snprintf(buf, len, "off (--no-perf-counters)");
    return buf;
  }
  lab_perf_set s;
  int opened = lab_perf_open(&s, lab_perf_default_specs, LAB_PERF_DEFAULT_EVENTS);
  size_t k = 0;
  buf[0] = '\0';
  if (opened > 0) {
    k = append(buf, len, k, "%s%s", "read: ", "");
    int listed = 0;
    for (int i = 0; i < s.n; i++)
      if (s.fd[i] >= 0) k = append(buf, len, k, "%s%s", listed++ ? ", " : "", s.specs[i].name);
    k = append(buf, len, k, " (%s%s", s.user_only ? "user space only" : "user and kernel space", ", by teams of ");
    if (topology) {
      k = append(buf, len, k, "%s%s", "at most one thread per processing unit", "");
    } else {
      /* hwloc found no topology: the count the kernel gives bounds the
       * teams that count (lab/team.c), or nothing does and only a team of
       * one thread counts */
      const char *source;
      char why[256], count[32];
      int cpus = lab_perf_cpus(&source, why, sizeof why);
      snprintf(count, sizeof count, "%d", cpus);
      if (cpus > 0)
        k = append(buf, len, k, "at most one thread per processing unit [%s by %s: no topology]", count, source);
      else k = append(buf, len, k, "one thread [no topology, and no CPU count: %s]%s", why, "");
    }
    k = append(buf, len, k, "%s%s)", everywhere ? "" : ", in the experiments that count by default", "");
  }
  if (opened < s.n) {
    k = append(buf, len, k, "%s%s", opened > 0 ? "; " : "", "not read: ");
    /* the absent events in order, those of one reason together */
    char why[128] = "";
    for (int i = 0; i < s.n; i++) {
      if (s.fd[i] >= 0) continue;
      const char *w = absent_why(&s, i);
      if (why[0] != '\0' && strcmp(why, w) != 0) k = append(buf, len, k, " (%s)%s", why, ", ");
      else if (why[0] != '\0') k = append(buf, len, k, "%s%s", ", ", "");
      k = append(buf, len, k, "%s%s", s.specs[i].name, "");
      snprintf(why, sizeof why, "%s", w);
    }
    k = append(buf, len, k, " (%s)%s", why, "");
  }
  lab_perf_close(&s);
  return buf;
}
