/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_own_session_test.c — lc98_own_session (lab/apps/lc98/own_session.c),
 * which puts every rank of lc98's MPI applications in a session of its
 * own: a forking parent stays where the launcher started it and passes
 * the launcher's and the shell's signals to the child. No MPI needed.
 *
 * Checked: the child leads a session of its own; SIGTSTP to the parent
 * stops the child too (the kernel discards SIGTSTP in the child's
 * orphaned process group: the parent must pass it as SIGSTOP) and then
 * the parent; SIGCONT to the parent continues both; a passed signal's
 * end and the child's exit status are the parent's. The parent's reaping
 * (the child's pid is cleared before the reap) has no outside effect a
 * test could wait for: it is not checked here.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "own_session.h"
#include "test_sanitizer.h" /* TSAN */

#define CHILD_EXIT 3                /* the child's exit status on SIGUSR1 */
#define STATE_WAIT_NS 10000000000ll /* 10 s for a process to reach a state: only a broken run waits it out */
#define TEST_ALARM_S 120            /* the whole program's bound */

typedef struct family {
  pid_t parent, child;
} family;

static void child_exit(int sig) {
  (void)sig;
  _exit(CHILD_EXIT);
}

/* Whether pid has a handler for sig (/proc/<pid>/status, SigCgt). */
static bool catches(pid_t pid, int sig) {
  char path[64], line[256];
  unsigned long long mask = 0;
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (f == NULL) return false;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "SigCgt: %llx", &mask) == 1) break;
  fclose(f);
  return (mask >> (sig - 1)) & 1u;
}

/* Fork a process that calls lc98_own_session; its child reports its pid
 * through a pipe and waits for signals. Returns once the parent has its
 * handlers: a signal before them takes its default action (a SIGTSTP
 * stops the parent alone), a window of the parent's start-up that no
 * launcher's signal is expected in and this test does not measure. */
static int start(void **state) {
  static family f;
  int fd[2];
  if (pipe(fd) != 0) return -1;
  f.parent = fork();
  if (f.parent < 0) return -1;
  if (f.parent == 0) {
    close(fd[0]);
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* a test ended by its alarm leaves no process behind */
    lc98_own_session();                     /* returns in the child only: this process does not lead its session */
    signal(SIGUSR1, child_exit);
    pid_t me = getpid();
    if (write(fd[1], &me, sizeof me) != (ssize_t)sizeof me) _exit(EXIT_FAILURE);
    for (;;) pause();
  }
  close(fd[1]);
  ssize_t n;
  do n = read(fd[0], &f.child, sizeof f.child);
  while (n < 0 && errno == EINTR);
  close(fd[0]);
  if (n != (ssize_t)sizeof f.child) return -1;
  *state = &f;
  static const int passed[] = {SIGTERM, SIGUSR1, SIGCONT, SIGTSTP};
  for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++)
    for (int tries = 0; !catches(f.parent, passed[i]); tries++) {
      if (tries > 10000) return -1; /* 10 s */
      usleep(1000);
    }
  return 0;
}

static int stop(void **state) {
  family *f = *state;
  if (f->parent > 0 && kill(f->parent, SIGKILL) == 0) /* the child dies with it (PR_SET_PDEATHSIG) */
    (void)waitpid(f->parent, NULL, 0);
  f->parent = 0;
  return 0;
}

/* The state letter of /proc/<pid>/stat ('T': stopped), or 0. */
static char proc_state(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the name in parentheses may hold anything */
  return p && p[1] == ' ' ? p[2] : 0;
}

static bool reaches(pid_t pid, bool stopped) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    char s = proc_state(pid);
    if (s != 0 && (s == 'T') == stopped) return true;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((t.tv_sec - t0.tv_sec) * 1000000000ll + (t.tv_nsec - t0.tv_nsec) > STATE_WAIT_NS) return false;
    usleep(1000);
  }
}

/* Under ThreadSanitizer a handler runs at once only while the process is
 * inside a blocking call it intercepts; a signal that arrives just before
 * the parent's waitid is held for the next intercepted call, which never
 * comes, so a passed signal is not passed (one run in ten or twenty hung
 * here). The tests that need the parent's handler are skipped there. */
static bool handlers_deferred(void) {
  if (!TSAN) return false;
  print_message("skipped: ThreadSanitizer holds a signal that arrives just before the parent's waitid\n");
  return true;
}

static void child_leads_its_session(void **state) {
  family *f = *state;
  assert_int_equal(getsid(f->child), f->child);
  assert_int_not_equal(getsid(f->parent), f->parent);
  if (handlers_deferred()) skip();
  assert_int_equal(kill(f->parent, SIGTERM), 0);
  int st = 0;
  assert_int_equal(waitpid(f->parent, &st, 0), f->parent);
  f->parent = 0;
  assert_true(WIFSIGNALED(st));
  assert_int_equal(WTERMSIG(st), SIGTERM); /* passed to the child, which it ended; the parent ends alike */
}

static void tstp_stops_both_and_cont_resumes_both(void **state) {
  family *f = *state;
  if (handlers_deferred()) skip();
  int st = 0;
  assert_int_equal(kill(f->parent, SIGTSTP), 0);
  assert_int_equal(waitpid(f->parent, &st, WUNTRACED), f->parent);
  assert_true(WIFSTOPPED(st));
  assert_true(reaches(f->child, true)); /* ^Z stops the rank, not only the process the launcher watches */
  assert_int_equal(kill(f->parent, SIGCONT), 0);
  assert_int_equal(waitpid(f->parent, &st, WCONTINUED), f->parent);
  assert_true(WIFCONTINUED(st));
  assert_true(reaches(f->child, false));
  assert_int_equal(kill(f->parent, SIGUSR1), 0); /* the child exits CHILD_EXIT on it */
  assert_int_equal(waitpid(f->parent, &st, 0), f->parent);
  f->parent = 0;
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), CHILD_EXIT);
}

static void child_killed_ends_the_parent_alike(void **state) {
  family *f = *state;
  int st = 0;
  assert_int_equal(kill(f->child, SIGKILL), 0);
  assert_int_equal(waitpid(f->parent, &st, 0), f->parent);
  f->parent = 0;
  assert_true(WIFSIGNALED(st));
  assert_int_equal(WTERMSIG(st), SIGKILL);
}

int main(void) {
  alarm(TEST_ALARM_S); /* a signal never passed on would leave a wait below hanging: fail instead */
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(child_leads_its_session, start, stop),
    cmocka_unit_test_setup_teardown(tstp_stops_both_and_cont_resumes_both, start, stop),
    cmocka_unit_test_setup_teardown(child_killed_ends_the_parent_alike, start, stop),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
