/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * proc_team.c — forked child processes for syncq-lab: see proc_team.h
 * for the contract.
 */
#include "proc_team.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syncq/clock.h"
#include "syncq/pr.h"

/* Children name their segments with a per-process counter. */
static unsigned seg_counter;

int lab_proc_team_init(lab_proc_team *t, lab_topo *topo, int max_children, size_t slot_bytes, char *why, size_t len) {
  if (t == NULL) {
    snprintf(why, len, "no team");
    return -1;
  }
  memset(t, 0, sizeof *t);
  if (max_children < 1 || max_children > LAB_PROC_MAX) {
    snprintf(why, len, "%d children: the team takes 1 to %d", max_children, LAB_PROC_MAX);
    return -1;
  }
  /* slots start on their own cache line, after the control block */
  size_t ctl_bytes = (sizeof(lab_proc_ctl) + SYNCQ_CACHELINE - 1) / SYNCQ_CACHELINE * SYNCQ_CACHELINE;
  size_t slot_rounded = (slot_bytes + SYNCQ_CACHELINE - 1) / SYNCQ_CACHELINE * SYNCQ_CACHELINE;
  if (slot_bytes > ((size_t)1 << 30) / (size_t)max_children) {
    snprintf(why, len, "result slots of %zu bytes are too large", slot_bytes);
    return -1;
  }
  size_t bytes = ctl_bytes + slot_rounded * (size_t)max_children;
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    snprintf(why, len, "mmap of %zu shared bytes failed: %s", bytes, strerror(errno));
    return -1;
  }
  memset(p, 0, bytes);
  t->ctl = p;
  t->slots = (unsigned char *)p + ctl_bytes;
  t->slot_bytes = slot_rounded;
  t->map_bytes = bytes;
  t->max_children = max_children;
  t->topo = topo;
  return 0;
}

pid_t lab_proc_team_fork(lab_proc_team *t) {
  if (t == NULL || t->ctl == NULL || t->n >= t->max_children) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(LAB_PROC_CHILD_ALARM_S);
    return 0;
  }
  if (pid > 0) t->pids[t->n++] = pid;
  return pid;
}

void *lab_proc_team_slot(const lab_proc_team *t, int i) {
  if (t == NULL || t->slots == NULL || i < 0 || i >= t->max_children || t->slot_bytes == 0) return NULL;
  return t->slots + (size_t)i * t->slot_bytes;
}

/* True when one of the team's children has already exited. */
static bool a_child_died(lab_proc_team *t) {
  for (int i = 0; i < t->n; i++) {
    int status;
    pid_t r = waitpid(t->pids[i], &status, WNOHANG);
    if (r == t->pids[i]) {
      t->pids[i] = -1; /* reaped: stop skips it */
      return true;
    }
  }
  return false;
}

bool lab_proc_team_wait_ready(lab_proc_team *t, uint32_t n, char *why, size_t len) {
  uint64_t deadline = syncq_now_ns() + LAB_PROC_STALL_NS;
  /* acquire: pairs with the children's release increments in lab_proc_child_ready */
  while (atomic_load_explicit(&t->ctl->ready, memory_order_acquire) < n) {
    if (atomic_load_explicit(&t->ctl->failed, memory_order_relaxed) != 0u) { /* a flag only */
      snprintf(why, len, "a child process could not set up");
      return false;
    }
    if (a_child_died(t)) {
      snprintf(why, len, "a child process died while setting up");
      return false;
    }
    if (syncq_now_ns() > deadline) {
      snprintf(why, len, "the child processes were not ready after %llu s",
               (unsigned long long)(LAB_PROC_STALL_NS / 1000000000ull));
      return false;
    }
    sched_yield();
  }
  return true;
}

void lab_proc_team_go(lab_proc_team *t) {
  atomic_store_explicit(&t->ctl->go, 1u, memory_order_release); /* pairs with lab_proc_child_wait_go's acquire */
  (void)syncq_futex_wake(&t->ctl->go, INT32_MAX, true);
}

void lab_proc_team_stop(lab_proc_team *t, bool kill_them) {
  if (t == NULL || t->ctl == NULL) return;
  /* release: pairs with lab_proc_child_should_stop's acquire, so a child
   * that sees stop also sees an earlier go (it then runs rather than quits) */
  atomic_store_explicit(&t->ctl->stop, 1u, memory_order_release);
  /* a child asleep waiting for go must see stop: wake it */
  (void)syncq_futex_wake(&t->ctl->go, INT32_MAX, true);
  for (int i = 0; i < t->n; i++) {
    if (t->pids[i] <= 0) continue;
    if (kill_them) kill(t->pids[i], SIGKILL);
    while (waitpid(t->pids[i], NULL, 0) < 0 && errno == EINTR) {
    }
  }
  t->n = 0;
}

void lab_proc_team_destroy(lab_proc_team *t) {
  if (t == NULL || t->ctl == NULL) return;
  lab_proc_team_stop(t, true);
  munmap(t->ctl, t->map_bytes);
  t->ctl = NULL;
  t->slots = NULL;
}

void lab_proc_child_ready(lab_proc_team *t) {
  atomic_fetch_add_explicit(&t->ctl->ready, 1u, memory_order_release); /* pairs with wait_ready's acquire */
}

_Noreturn void lab_proc_child_failed(lab_proc_team *t, int code) {
  atomic_store_explicit(&t->ctl->failed, 1u, memory_order_relaxed); /* a flag: nothing is published */
  _exit(code);
}

/* How long a child asleep for go sleeps before it looks at stop again. */
#define LAB_PROC_GO_NAP_NS 100000000ll

bool lab_proc_child_wait_go(lab_proc_team *t, bool sleep) {
  /* acquire: pairs with lab_proc_team_go's release */
  while (atomic_load_explicit(&t->ctl->go, memory_order_acquire) == 0u) {
    if (lab_proc_child_should_stop(t))                                      /* go may have come just before stop */
      return atomic_load_explicit(&t->ctl->go, memory_order_acquire) != 0u; /* pairs with go's release */
    if (sleep) (void)syncq_futex_wait(&t->ctl->go, 0u, LAB_PROC_GO_NAP_NS, true);
    else sched_yield();
  }
  return true;
}

bool lab_proc_child_should_stop(const lab_proc_team *t) {
  /* acquire: pairs with lab_proc_team_stop's release (go before stop) */
  return atomic_load_explicit(&t->ctl->stop, memory_order_acquire) != 0u;
}

void lab_proc_pin(lab_topo *topo, int slot) {
  char why[LAB_PROC_WHY];
  if (topo != NULL) (void)lab_topo_pin_self(topo, slot, why, sizeof why);
}

void lab_proc_unpin(lab_topo *topo) {
  if (topo != NULL) lab_topo_unpin_self(topo);
}

void lab_proc_seg_name(char *out, size_t n, const char *tag, const char *role) {
  snprintf(out, n, "syncq-%s-%d-%s-%u", tag, (int)getpid(), role, seg_counter++);
}
