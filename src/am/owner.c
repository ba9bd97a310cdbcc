/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * owner.c — who this process is, and whether the process that wrote a
 * claim, a lock word or a segment header is still alive (layer 1 of
 * src/am, see am_segment.h).
 *
 * A process is named by its pid and its start time (proc(5) field 22,
 * clock ticks after boot): a pid that is reused names a process with
 * another start time, so a claim of the dead one is never mistaken for
 * the new one's.
 *
 * Contract
 *   Source:      none (000 reclaims nothing: it assumes senders do not
 *                die); Linux's /proc, as robust futexes would, without
 *                the kernel's help, so any word can carry an owner.
 *   Progress:    am_self_identity: a pthread_once, then two relaxed loads.
 *                am_owner_dead: one open/read/close of /proc (two under
 *                qemu-user).
 *   Memory:      never allocates.
 *   Signal-safe: no (pthread_once).
 *   Process-shared: not shared; each process keeps its own (refreshed in
 *                a forked child).
 *   Limits:      a pid whose start time is not known (0: /proc unreadable,
 *                or a word written before it) is judged by the pid alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am_segment.h"

#define AM_STAT_BUF 1024
#define AM_STAT_THREADS_FIELD 20   /* proc(5): num_threads, the process's */
#define AM_STAT_STARTTIME_FIELD 22 /* proc(5): starttime, clock ticks after boot */

static pthread_once_t identity_once = PTHREAD_ONCE_INIT;
/* relaxed everywhere: written before fork returns in the child (atfork)
 * or once under pthread_once; each thread reads its own process's values */
static _Atomic(uint32_t) self_pid;
static _Atomic(uint64_t) self_start;

/* Read /proc/<pid>/stat: its state letter, thread count and start time.
 * 0, or -1 with errno (ENOENT: no such process). */
static int read_stat_at(const char *path, char *state, uint32_t *threads, uint64_t *start) {
  char buf[AM_STAT_BUF];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  int saved = errno;
  close(fd);
  if (n <= 0) {
    errno = n == 0 ? ENOENT : saved; /* a process that vanished while we read */
    return -1;
  }
  buf[n] = '\0';
  char *rp = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
  if (rp == NULL || rp[1] == '\0') {
    errno = EINVAL;
    return -1;
  }
  char *f = rp + 2; /* field 3, the state */
  *state = *f;
  for (int field = 3; field < AM_STAT_STARTTIME_FIELD; field++) {
    f = strchr(f, ' ');
    if (f == NULL) {
      errno = EINVAL;
      return -1;
    }
    f++;
    if (field + 1 == AM_STAT_THREADS_FIELD) *threads = (uint32_t)strtoul(f, NULL, 10);
  }
  *start = strtoull(f, NULL, 10);
  return 0;
}

/* Through the main thread's entry first (the process's own start time and
 * state): qemu-user answers /proc/self/stat and /proc/<own pid>/stat itself,
 * with a start time no other process sees, which would make a process
 * judge itself, or be judged, dead. */
static int read_stat(uint32_t pid, char *state, uint32_t *threads, uint64_t *start) {
  char path[96];
  snprintf(path, sizeof path, "/proc/%u/task/%u/stat", (unsigned)pid, (unsigned)pid);
  if (read_stat_at(path, state, threads, start) == 0) return 0;
  snprintf(path, sizeof path, "/proc/%u/stat", (unsigned)pid);
  return read_stat_at(path, state, threads, start);
}

static void identity_refresh(void) {
  uint32_t pid = (uint32_t)getpid();
  char st;
  uint32_t threads;
  uint64_t start = 0;
  if (read_stat(pid, &st, &threads, &start) != 0) start = 0; /* unknown: owners are then judged by pid alone */
  /* relaxed: pairs with am_self_identity's relaxed loads; pthread_once (or
   * the fork, in a child) orders these stores before them */
  atomic_store_explicit(&self_pid, pid, memory_order_relaxed);
  atomic_store_explicit(&self_start, start, memory_order_relaxed);
}

static void identity_init(void) {
  identity_refresh();
  (void)pthread_atfork(NULL, NULL, identity_refresh); /* a forked child gets its own */
}

void am_self_identity(uint32_t *pid, uint64_t *start) {
  (void)pthread_once(&identity_once, identity_init);
  /* relaxed: pairs with identity_refresh's relaxed stores, ordered before
   * this by pthread_once (first call) or by fork (the child's refresh runs
   * before any of its threads exist); no other data rides on them */
  *pid = atomic_load_explicit(&self_pid, memory_order_relaxed);
  *start = atomic_load_explicit(&self_start, memory_order_relaxed);
}

bool am_owner_dead(uint32_t pid, uint64_t start) {
  if (pid == 0) return true; /* never recorded: nobody to wait for */
  char st;
  uint32_t threads = 0;
  uint64_t now_start;
  if (read_stat(pid, &st, &threads, &now_start) != 0) return errno == ENOENT || errno == ESRCH;
  /* Exited, not yet reaped. A main thread that left by pthread_exit is a
   * zombie too, while the process's other threads run on (they may be the
   * ones that poll or send): the state is the main thread's, the thread
   * count the process's, 1 once only the zombie is left. */
  if ((st == 'Z' && threads <= 1u) || st == 'X') return true;
  if (start != 0 && now_start != start) return true; /* the pid names another process now */
  return false;
}
