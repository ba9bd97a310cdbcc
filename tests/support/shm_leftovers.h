/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shm_leftovers.h — a test program's own shared-memory names left behind.
 *
 * A test that makes named segments (syncq_am_create, shm_open) names them
 * with a prefix of its own and its process's pid, taken once before any
 * child is forked (shm_test_pid), so every name it or its children make
 * starts with "<prefix><pid>-". At its end, shm_leftovers removes every
 * such name still in /dev/shm and returns how many there were, each named
 * on stderr: a test that failed half-way leaves nothing behind, and a run
 * whose tests all passed fails when any name is found (a path that leaks
 * on success). Only names with this process's pid are touched: another
 * run's, or another user's, are not.
 *
 * Linux's /dev/shm holds the names; where it cannot be read, 0.
 */
#ifndef SYNCQ_TEST_SHM_LEFTOVERS_H
#define SYNCQ_TEST_SHM_LEFTOVERS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

/* The test program's pid, fixed at its first call (call it from main,
 * before any fork: a child's call then still gives its parent's). */
static inline int shm_test_pid(void) {
  static int pid;
  if (pid == 0) pid = (int)getpid();
  return pid;
}

/* Remove and count the names "<prefix><shm_test_pid()>-..." in /dev/shm. */
static inline int shm_leftovers(const char *prefix) {
  char mine[128];
  int n = snprintf(mine, sizeof mine, "%s%d-", prefix, shm_test_pid());
  if (n <= 0 || (size_t)n >= sizeof mine) return 0;
  DIR *d = opendir("/dev/shm");
  if (d == NULL) return 0;
  int left = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, mine, (size_t)n) != 0) continue;
    char path[300];
    snprintf(path, sizeof path, "/%s", e->d_name);
    fprintf(stderr, "left in /dev/shm (removed now): %s\n", e->d_name);
    (void)shm_unlink(path);
    left++;
  }
  closedir(d);
  return left;
}

#endif
