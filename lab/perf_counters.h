/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf_counters.h — one thread's hardware and kernel event counters
 * (perf_event_open), read around a worker's timed body.
 *
 * A worker opens its set after pinning and before the team's gate, so no
 * open is inside the timed region; enables it when its body starts and
 * disables it right after the body, one ioctl each; then reads it (one
 * read) and closes it. The events are one group (the first that opens
 * leads, PERF_FORMAT_GROUP): one enable starts them all, where enabling
 * each event was a syscall each (about 2 us apiece on a VM).
 *
 * An event that does not open (no PMU on a VM, perf_event_paranoid, too
 * many files) is absent, with the errno of its open; the others count.
 * Kernel space is counted too where the kernel allows it (root, or
 * perf_event_paranoid <= 1), else user space only; an event the kernel
 * counts only in kernel space (CPU migrations: the scheduler moves a thread
 * from inside the kernel) is then absent, with EACCES, rather than read as
 * a 0 that counted nothing.
 *
 * The kernel schedules a group on the PMU all together or not at all, and
 * refuses at open a member that would not fit beside the others (absent,
 * EINVAL). A group the PMU multiplexed (another user of the counters) ran
 * for part of the time it was enabled: its counts, the software ones too,
 * are scaled by enabled/running and marked scaled; a group that never ran
 * reads as absent. Nothing here prints.
 */
#ifndef SYNCQ_LAB_PERF_COUNTERS_H
#define SYNCQ_LAB_PERF_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One event to count: its perf_event_attr type and config. */
typedef struct lab_perf_spec {
  const char *name; /* the results' counter is "<name>_per_op" */
  uint32_t type;    /* PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, ... */
  uint64_t config;  /* PERF_COUNT_HW_CPU_CYCLES, ... */
  bool kernel_only; /* counts only in kernel space: absent when user space alone is allowed */
} lab_perf_spec;

#define LAB_PERF_MAX_EVENTS 8

/* The events the lab reads, in the order of the results: cycles,
 * instructions, llc_misses, branch_misses (hardware), page_faults (minor),
 * cpu_migrations (software). */
extern const lab_perf_spec lab_perf_default_specs[];
#define LAB_PERF_DEFAULT_EVENTS 6

typedef struct lab_perf_set {
  const lab_perf_spec *specs;
  int n;
  int fd[LAB_PERF_MAX_EVENTS];   /* -1: absent */
  int err[LAB_PERF_MAX_EVENTS];  /* why an absent one is: errno of its open (0: open) */
  int slot[LAB_PERF_MAX_EVENTS]; /* its place in the group's read (-1: absent) */
  int leader;                    /* the group leader's fd, -1 when none opened */
  int members;                   /* events in the group */
  bool user_only;                /* kernel space refused: the events count user space alone */
} lab_perf_set;

/* What a set read, or the sum of several sets' reads. */
typedef struct lab_perf_counts {
  int sets; /* reads summed here (0: none yet) */
  uint64_t value[LAB_PERF_MAX_EVENTS];
  uint32_t present;        /* bit i: event i was read in every set summed */
  uint32_t scaled;         /* bit i: some read of event i was scaled (multiplexed) */
  double running_fraction; /* the smallest running/enabled of a scaled read; 1 when none */
} lab_perf_counts;

/* Open specs[0..n-1] (n <= LAB_PERF_MAX_EVENTS) for the calling thread,
 * disabled. Returns how many opened (0..n); the set must be closed even
 * when none did. n out of range: none opened, every err EINVAL. */
int lab_perf_open(lab_perf_set *s, const lab_perf_spec *specs, int n);
/* Start and stop the set's events (one ioctl each; nothing when none opened). */
void lab_perf_enable(const lab_perf_set *s);
void lab_perf_disable(const lab_perf_set *s);
/* Read the set into *out (out->sets = 1). When the read fails, or the
 * group never ran while enabled, every event is absent from out->present. */
void lab_perf_read(const lab_perf_set *s, lab_perf_counts *out);
/* What lab_perf_read does with the group's read of `words` words (a
 * PERF_FORMAT_GROUP read: nr, time enabled, time running, nr values in the
 * members' order): every event absent when the words are not the set's
 * group or the group never ran while enabled; scaled by enabled/running,
 * rounded, and marked scaled when it ran part of the time. */
void lab_perf_decode(const lab_perf_set *s, const uint64_t *v, size_t words, lab_perf_counts *out);
/* Close every open event (fd -1 after). */
void lab_perf_close(lab_perf_set *s);

/* Add c to sum: values add, an event stays present only if it was present
 * in every read summed, scaled and the running fraction carry over. A sum
 * with sets == 0 (zeroed) takes c as it is. */
void lab_perf_counts_add(lab_perf_counts *sum, const lab_perf_counts *c);

/* The processing units a team's threads can have one each, as far as they
 * are known without the topology (hwloc): the CPUs sched_getaffinity lets
 * the calling thread run on, else the CPUs online (sysconf). Returns that
 * count, with *source "sched_getaffinity" or "sysconf"; 0 where neither
 * answers, with *source NULL and both errors in why (truncated to len,
 * always terminated when len > 0). source and why may be NULL. */
int lab_perf_cpus(const char **source, char *why, size_t len);

/* The machine record's text for the default events on the calling thread
 * (it opens and closes them): "read: page_faults, cpu_migrations (user and
 * kernel space, by teams of at most one thread per processing unit); not
 * read: cycles, instructions, llc_misses, branch_misses (No such file or
 * directory)", the absent events of one reason together; with everywhere
 * false the parenthesis adds ", in the experiments that count by default"
 * (lab_experiment.perf_counters; true: --perf-counters, every experiment).
 * With topology false (hwloc found none), the teams' bound is what
 * lab_perf_cpus knows: "one thread per processing unit [2 by
 * sched_getaffinity: no topology]", or, where it knows nothing, "by teams
 * of one thread [no topology, and no CPU count: <why>]". With enabled
 * false: "off (--no-perf-counters)". Truncated to len, always terminated
 * (nothing written when len is 0). */
const char *lab_perf_describe(char *buf, size_t len, bool enabled, bool everywhere, bool topology);

#endif /* SYNCQ_LAB_PERF_COUNTERS_H */
