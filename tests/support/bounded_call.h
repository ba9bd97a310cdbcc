/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bounded_call.h — for the tests of calls that hostile input may make hang
 * or fault (a header of shared storage that another process forged): one
 * call run in a forked child under alarm(), and how it ended: it returned
 * (with its value), a signal killed the child (SIGALRM: no answer within
 * the limit; SIGSEGV: it read past its storage), or the child exited on
 * its own (a sanitizer's report exits with its own status, the report on
 * stderr). The test process itself never runs the call, so a hang or a
 * fault fails the test by name instead of stopping the suite at CTest's
 * timeout. Header-only; fails the calling cmocka test on a system error.
 *
 * Fork from a single-threaded moment of the test (no other thread holds a
 * lock the child could need); the child sees the parent's memory as it was
 * at the fork, and shared mappings as they are.
 */
#ifndef SYNCQ_TEST_BOUNDED_CALL_H
#define SYNCQ_TEST_BOUNDED_CALL_H

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

typedef enum bounded_end {
  BOUNDED_RETURNED, /* value: what the call returned */
  BOUNDED_SIGNALED, /* value: the signal that ended the child */
  BOUNDED_EXITED,   /* value: the status the child exited with before the call returned */
} bounded_end;

typedef struct bounded_outcome {
  bounded_end end;
  int value;
  unsigned limit_s; /* the alarm the call ran under, for the description */
} bounded_outcome;

/* call(arg) in a child that SIGALRM ends after limit_s seconds. */
static inline bounded_outcome bounded_call(int (*call)(void *), void *arg, unsigned limit_s) {
  int fd[2];
  assert_int_equal(pipe(fd), 0); /* the value comes back through it: an exit status holds 8 bits, a status is < 0 */
  fflush(NULL);                  /* nothing buffered before the fork is written twice */
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* cmocka's fault handlers, inherited, would report a fault as a test
     * failure of this child and go on to run the parent's remaining tests
     * here: a fault (or the alarm) ends the child instead, and the parent
     * names its signal. */
    static const int deadly[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT, SIGALRM};
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++) signal(deadly[i], SIG_DFL);
    close(fd[0]);
    alarm(limit_s);
    const int r = call(arg);
    _exit(write(fd[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
  }
  close(fd[1]);
  int status = 0;
  pid_t w;
  while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) continue;
  assert_int_equal(w, pid);
  int r = 0;
  ssize_t got;
  while ((got = read(fd[0], &r, sizeof r)) < 0 && errno == EINTR) continue;
  close(fd[0]);
  if (WIFSIGNALED(status)) return (bounded_outcome){BOUNDED_SIGNALED, WTERMSIG(status), limit_s};
  assert_true(WIFEXITED(status));
  if (got == (ssize_t)sizeof r && WEXITSTATUS(status) == 0) return (bounded_outcome){BOUNDED_RETURNED, r, limit_s};
  return (bounded_outcome){BOUNDED_EXITED, WEXITSTATUS(status), limit_s};
}

/* How the call ended, in words, into buf (n bytes); returns buf. */
static inline const char *bounded_describe(bounded_outcome o, char *buf, size_t n) {
  switch (o.end) {
  case BOUNDED_RETURNED:
    snprintf(buf, n, "returned %d", o.value);
    break;
  case BOUNDED_SIGNALED:
    if (o.value == SIGALRM) snprintf(buf, n, "no answer within %u s (SIGALRM)", o.limit_s);
    else snprintf(buf, n, "killed by signal %d (%s)", o.value, strsignal(o.value));
    break;
  default:
    snprintf(buf, n, "exited with status %d before returning (a sanitizer's report above?)", o.value);
    break;
  }
  return buf;
}

/* call(arg) under bounded_call must return `want`; otherwise the test
 * fails, naming `what` and how the call ended. */
static inline void bounded_call_expect(const char *what, int (*call)(void *), void *arg, unsigned limit_s, int want) {
  const bounded_outcome o = bounded_call(call, arg, limit_s);
  if (o.end == BOUNDED_RETURNED && o.value == want) return;
  char how[128];
  fail_msg("%s: %s, want %d", what, bounded_describe(o, how, sizeof how), want);
}

#endif
