/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shared_corrupt.h — for the tests of process-shared structures: storage
 * in a shared mapping, and a write into it made by another process (a
 * forked child), as a crashed or hostile peer would leave it. Header-only;
 * each function fails the calling cmocka test on a system error.
 */
#ifndef SYNCQ_TEST_SHARED_CORRUPT_H
#define SYNCQ_TEST_SHARED_CORRUPT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

/* A zeroed shared anonymous mapping of at least `bytes` (page aligned,
 * hence aligned for every structure). */
static inline void *shared_map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  assert_true(p != MAP_FAILED);
  return p;
}

static inline void shared_unmap(void *p, size_t bytes) { assert_int_equal(munmap(p, bytes), 0); }

/* Copy n bytes of src over dst (inside a shared mapping) from a child
 * process, and wait for it: the parent sees the bytes another process
 * wrote, as it would a peer's. */
static inline void corrupt_from_child(void *dst, const void *src, size_t n) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    memcpy(dst, src, n);
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#endif
