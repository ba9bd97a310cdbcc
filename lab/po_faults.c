/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_faults.c — a send that loses or duplicates one message
 * (SYNCQ_LAB_PO_FAULT), for the lab's own tests of the postoffice
 * experiments' watch, the watch's streak, and the watcher thread
 * (lab_po_watch) of the experiments whose waits stay recv_blocking
 * (po_faults.h). The faulty send is not for measuring.
 */
#include "po_faults.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../src/po/timer.h" /* po_ticks_set_scale: the lab links the internal library */
#include "lab.h"
#include "syncq/clock.h"
#include "syncq/status.h"

#define NS_PER_MS 1000000ull

uint64_t lab_po_fault_k;
static bool fault_dup;
static const char *fault_spec;
static _Atomic(uint64_t) sends; /* the run's sends so far */

int lab_po_faults_register(void) {
  const char *spec = getenv("SYNCQ_LAB_PO_FAULT");
  if (spec == NULL) return 0;
  bool dup = strncmp(spec, "dup:", 4) == 0;
  if (!dup && strncmp(spec, "lose:", 5) != 0) return -1;
  const char *num = spec + (dup ? 4 : 5);
  char *end;
  unsigned long long k = strtoull(num, &end, 10);
  if (*num < '0' || *num > '9' || *end != '\0' || k == 0) return -1;
  fault_dup = dup;
  fault_spec = spec;
  lab_po_fault_k = k;
  return 1;
}

const char *lab_po_faults_spec(void) { return fault_spec; }

static int slow_launch; /* SYNCQ_LAB_PO_SLOW's launch, 0: none */

int lab_po_slow_register(void) {
  const char *spec = getenv("SYNCQ_LAB_PO_SLOW");
  if (spec == NULL) return 0;
  char *end;
  unsigned long l = strtoul(spec, &end, 10);
  if (*spec < '0' || *spec > '9' || *end != '\0' || l == 0 || l > LAB_MAX_LAUNCHES) return -1;
  slow_launch = (int)l;
  return 1;
}

int lab_po_slow_apply(int launch) {
  if (slow_launch == 0 || slow_launch != (launch > 0 ? launch : 1)) return 0;
  return po_ticks_set_scale(LAB_PO_SLOW_SCALE) == SYNCQ_OK ? 1 : -1;
}

/* seq_cst: once per run, before its processes are spawned */
void lab_po_faults_reset(void) { atomic_store(&sends, 0); }

int lab_po_send_faulty(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *m, syncq_po_send_mode mode) {
  /* relaxed: a count that picks the K-th send; the postoffice orders the messages */
  uint64_t n = atomic_fetch_add_explicit(&sends, 1, memory_order_relaxed) + 1;
  if (n != lab_po_fault_k) return syncq_po_send(self, to, m, mode);
  if (!fault_dup) {
    /* sent, as far as the sender can tell (LINK: the message is no longer
     * the sender's; COPY: the send frees the original) */
    return syncq_po_free(self, m) == SYNCQ_OK ? SYNCQ_OK : SYNCQ_EINVAL;
  }
  syncq_po_msg *c;
  int r = syncq_po_get(self, m->len, &c);
  if (r != SYNCQ_OK) return r;
  c->type = m->type;
  c->len = m->len;
  if (m->len) memcpy(c->data, m->data, m->len);
  if ((r = syncq_po_send(self, to, c, mode)) != SYNCQ_OK) {
    (void)syncq_po_free(self, c);
    return r;
  }
  return syncq_po_send(self, to, m, mode);
}

bool lab_po_streak_lost(lab_po_streak *s, bool moving) {
  uint64_t now = syncq_now_ns();
  if (s->since == 0 || moving || now - s->last > (uint64_t)LAB_QUEUE_LOST_MS * NS_PER_MS / 2) s->since = now;
  s->last = now;
  return now - s->since >= (uint64_t)LAB_QUEUE_LOST_MS * NS_PER_MS;
}

static void *watch_main(void *arg) {
  lab_po_watch *w = arg;
  syncq_po_proc *self;
  if (syncq_po_attach(w->sys, &self) != SYNCQ_OK) {
    atomic_store(&w->pid, (syncq_po_pid)-2); /* seq_cst: lab_po_watch_start waits for it */
    return NULL;
  }
  atomic_store(&w->pid, syncq_po_pid_of(self));
  lab_po_streak s = {0, 0};
  while (!atomic_load(&w->quit)) {
    syncq_po_msg *m;
    int r = syncq_po_recv_timeout(self, LAB_PO_WATCH_NS, &m);
    if (r == SYNCQ_OK) {
      (void)syncq_po_free(self, m); /* the stop */
      break;
    }
    if (r != SYNCQ_ETIMEDOUT) break;
    bool moving, owed = w->reading(w->arg, &moving);
    if (!lab_po_streak_lost(&s, moving) || !owed) continue;
    atomic_store(&w->fired, 1);
    w->release(self, w->arg);
    break;
  }
  (void)syncq_po_detach(self);
  return NULL;
}

int lab_po_watch_start(lab_po_watch *w) {
  atomic_init(&w->pid, -1);
  atomic_init(&w->fired, 0);
  atomic_init(&w->quit, 0);
  w->started = false;
  if (pthread_create(&w->thread, NULL, watch_main, w) != 0) return SYNCQ_ESYS;
  w->started = true;
  syncq_po_pid pid;
  while ((pid = atomic_load(&w->pid)) == -1) sched_yield(); /* its attach: microseconds */
  if (pid >= 0) return SYNCQ_OK;
  (void)pthread_join(w->thread, NULL);
  w->started = false;
  return SYNCQ_ELIMIT;
}

int lab_po_watch_stop(syncq_po_proc *self, lab_po_watch *w) {
  syncq_po_pid pid = atomic_load(&w->pid);
  if (pid < 0) return SYNCQ_OK;
  syncq_po_msg *m;
  int r = syncq_po_get(self, 0, &m);
  if (r != SYNCQ_OK) return r;
  m->len = 0;
  if ((r = syncq_po_send(self, pid, m, SYNCQ_PO_LINK)) != SYNCQ_OK) (void)syncq_po_free(self, m);
  return r == SYNCQ_EDEAD ? SYNCQ_OK : r;
}

bool lab_po_watch_join(lab_po_watch *w) {
  if (!w->started) return false;
  atomic_store(&w->quit, 1);
  (void)pthread_join(w->thread, NULL);
  w->started = false;
  return atomic_load(&w->fired) != 0;
}
