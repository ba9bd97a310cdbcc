/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * own_session.c — lc98_own_session (own_session.h): every rank of lc98's
 * applications runs in a session of its own, under either MPI.
 *
 * MPICH's launcher gives each rank one (hydra calls setsid); Open MPI's
 * leaves its ranks in mpirun's. On a kernel that shares the processors
 * between sessions first (CONFIG_SCHED_AUTOGROUP, on by default in most
 * distributions' kernels), two Open MPI ranks in one session got together
 * what each MPICH rank got alone whenever other sessions had work: beside
 * other load their computation ran slower than the same code under
 * MPICH's launcher (docs/am-mpi.md, "The launchers' sessions"). A rank
 * that does not lead its session forks before MPI_Init: the child makes a
 * session of its own and runs the launch; the parent, which mpirun started
 * and watches, passes on the signals a launcher sends and exits as the
 * child did. The child dies with the parent (PR_SET_PDEATHSIG): a parent
 * killed outright leaves no rank behind.
 *
 * Job control: the child's new session is an orphaned process group, in
 * which the kernel discards SIGTSTP (as SIGTTIN and SIGTTOU) rather than
 * stop a process no shell could continue. So the parent passes SIGTSTP as
 * SIGSTOP, which cannot be discarded, and then stops itself as SIGTSTP
 * would have; once continued it continues the child. (The SIGCONT that
 * continued it is passed on as well, but that handler runs only after
 * this one returns, and under ThreadSanitizer, which defers handlers
 * that arrive inside a handler, not before the parent's next system
 * call.)
 *
 * The child's pid: the parent's handler signals the pid it reads from
 * session_child. Once the child is reaped its pid may be given to another
 * process, so the parent waits for the child's end without reaping it
 * (waitid with WNOWAIT: a zombie keeps its pid), clears session_child, and
 * only then reaps; a signal handled between the two reaches the zombie,
 * which ignores it.
 */
#include "own_session.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static volatile sig_atomic_t session_child; /* the child's pid, in the parent, until the child has ended */

static void pass_signal(int sig) {
  int saved = errno; /* the main flow's waitid reads errno after an interruption */
  pid_t c = (pid_t)session_child;
  if (c > 0) {
    if (sig == SIGTSTP) {
      (void)kill(c, SIGSTOP); /* SIGTSTP would be discarded in the child's orphaned group */
      (void)raise(SIGSTOP);   /* and stop here, as SIGTSTP would have ... */
      (void)kill(c, SIGCONT); /* ... until continued: then so is the child, whether or not the
                                 SIGCONT handler runs for the signal that continued us in time */
    } else {
      (void)kill(c, sig);
    }
  }
  errno = saved;
}

void lc98_own_session(void) {
  if (getsid(0) == getpid()) return;
  pid_t parent = getpid();
  pid_t c = fork();
  if (c < 0) return; /* run in the launcher's session: slower beside other load, not wrong */
  if (c == 0) {
#ifdef __linux__
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent) _exit(EXIT_FAILURE); /* the parent died before the line above */
    (void)setsid();                               /* a child leads no process group: it cannot fail */
    return;
  }
  session_child = c;
  static const int passed[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT, SIGTSTP};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = pass_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++) (void)sigaction(passed[i], &sa, NULL);
  siginfo_t info;
  memset(&info, 0, sizeof info);
  while (waitid(P_PID, (id_t)c, &info, WEXITED | WNOWAIT) < 0)
    if (errno != EINTR) _exit(EXIT_FAILURE);
  session_child = 0; /* the child is a zombie: its pid is still its own until the reap below */
  int st = 0;
  while (waitpid(c, &st, 0) < 0)
    if (errno != EINTR) _exit(EXIT_FAILURE);
  if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
  int sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL; /* end as the child ended */
  (void)signal(sig, SIG_DFL);
  (void)raise(sig);
  _exit(EXIT_FAILURE);
}
