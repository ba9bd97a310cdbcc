/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * links.c — exit signals, links and trapping exits between postoffice
 * processes (Erlang's exit/2, link/1, unlink/1, process_flag(trap_exit)).
 *
 * Contract
 *   Source:      Erlang/OTP's documented semantics of exit signals (the
 *                reference manual's "Processes" chapter and erlang:exit/2):
 *                a signal with an abnormal reason kills a process that
 *                does not trap exits, a trapping one receives it as a
 *                message, `kill` cannot be trapped and becomes `killed`,
 *                `normal` from another process is ignored by a process
 *                that does not trap. Links are bidirectional: an exit
 *                signals every partner with its reason.
 *   Delivery:    a killing signal cannot stop a fiber or thread where it
 *                runs: it stores the target's `doom` word (the reason, the
 *                first signal wins) and wakes it as a send does (po_wake);
 *                the target's next postoffice call returns SYNCQ_EKILLED
 *                and its body returns. The decision (dead? killed already?
 *                trapping? link still there?) is taken under the system's
 *                spawn_lock, where links, trap flags and doom words
 *                change, so an unlink that returns has no effect later and
 *                two exits racing each other are ordered. A signaller is
 *                counted in its target's nwatch meanwhile (a link's end,
 *                or exit's own count), so the target's exit takes the lock
 *                after it: spawn and join reuse slots without the lock,
 *                and the slot cannot pass to a new process mid-decision.
 *                Messages and wake-ups happen after the lock is released.
 *                syncq_po_shutdown's kill (po_kill) is such a signal,
 *                of reason SYNCQ_PO_EXIT_KILL, from no process.
 *   Progress:    blocking (spawn_lock); an exit signals its N links in
 *                O(N) plus one partner-list scan each, and never waits for
 *                a partner (a chain or star of hundreds dies without any
 *                exit waiting on another).
 *   Atomics:     per link: one seq_cst RMW of the partner's nwatch
 *                (ordered with its exit's RMW, as monitors are); per exit
 *                signal: two RMWs of the target's nwatch; per kill: one
 *                relaxed store of doom and the wake-up's RMW.
 *   Memory:      one node per end of a link (malloc), freed by unlink or
 *                the exit; an exit message per trapping partner.
 *   Signal-safe: no.  Process-shared: no.
 *   Limits:      none beyond memory: links per process are unbounded.
 *   Linearizability: link, unlink, and the exit's taking of its links
 *                are atomic under spawn_lock.
 */
#include <stdlib.h>

#include "po_internal.h"

enum { PO_SIG_NONE = 0, PO_SIG_KILL, PO_SIG_MSG };

/* Under spawn_lock, counted in `to`'s nwatch (a link's end, or
 * syncq_po_exit's count): the effect of an exit signal (from, reason) on
 * the process `to` (po.h's rules). PO_SIG_KILL: its doom is set now (wake
 * it after the unlock); PO_SIG_MSG: post it a SYNCQ_PO_EXIT message. */
static int signal_locked(syncq_po_system *sys, syncq_po_pid from, syncq_po_pid to, int32_t reason) {
  if (to < 0 || po_slot_of(sys, to) >= sys->nslots) return PO_SIG_NONE;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, to)];
  /* acquire: as a sender's look (syncq_po_send); an exit that stored
   * PO_EXITED and took the lock before us is seen through the lock. */
  if (po_pid_status(sys, to, atomic_load_explicit(&p->state, memory_order_acquire)) != SYNCQ_OK) return PO_SIG_NONE;
  if (po_killed(p)) return PO_SIG_NONE; /* dying already: the first signal's reason stands */
  int32_t doom;
  if (reason == SYNCQ_PO_EXIT_KILL) doom = SYNCQ_PO_EXIT_KILLED;
  else if (p->trap) return PO_SIG_MSG;
  else if (reason == SYNCQ_PO_EXIT_NORMAL && from != to) return PO_SIG_NONE;
  else doom = reason;
  /* relaxed: written under spawn_lock (the exit reads it there); the
   * owner sees it through po_wake's RMW or its next look (po_killed). */
  atomic_store_explicit(&p->doom, PO_DOOM_SET | (uint32_t)doom, memory_order_relaxed);
  return PO_SIG_KILL;
}

/* After the unlock: carry out signal_locked's decision. `self` is the
 * signalling process (its free list gives the message's header).
 * SYNCQ_OK, or po_post's status: the exit message was not posted. */
static int signal_finish(struct syncq_po_proc *self, syncq_po_pid to, int32_t reason, int action) {
  syncq_po_system *sys = self->sys;
  if (action == PO_SIG_MSG) {
    syncq_po_exit_msg e = {self->pid, reason};
    return po_post(sys, self, to, SYNCQ_PO_EXIT, &e, sizeof e, self->pid);
  }
  if (action == PO_SIG_KILL && to != self->pid)
    po_wake(self, &sys->procs[po_slot_of(sys, to)]); /* a stale slot's wake-up is spurious, never lost */
  return SYNCQ_OK;
}

/* Under spawn_lock: unhook and return the end of p's link to `pid`. */
static po_link *take_end(struct syncq_po_proc *p, syncq_po_pid pid) {
  for (po_link **at = &p->links; *at != NULL; at = &(*at)->next) {
    if ((*at)->pid == pid) {
      po_link *l = *at;
      *at = l->next;
      atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as in syncq_po_monitor */
      return l;
    }
  }
  return NULL;
}

po_link *po_links_exit_locked(struct syncq_po_proc *p, int32_t reason) {
  syncq_po_system *sys = p->sys;
  po_link *list = p->links;
  p->links = NULL;
  for (po_link *l = list; l != NULL; l = l->next) {
    /* The partner's end: it is still there (the partner's own exit takes
     * it under this lock, and removes ours then), and the partner's slot
     * is still its own (a slot is reused only after its exit). */
    free(take_end(&sys->procs[po_slot_of(sys, l->pid)], p->pid));
    l->reason = reason;
    l->action = signal_locked(sys, p->pid, l->pid, reason);
  }
  return list;
}

void po_links_exit_finish(struct syncq_po_proc *p, po_link *list) {
  while (list != NULL) {
    po_link *next = list->next;
    /* An exit has nobody to answer: an exit message that memory or the
     * partner's mailbox lock refuses is lost (po.h, the exit signals). */
    (void)signal_finish(p, list->pid, list->reason, list->action);
    free(list);
    list = next;
  }
}

/* The checks every call taking `self` and a pid makes. */
static int check(syncq_po_proc *self, syncq_po_pid pid) {
  if (self == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  if (pid < 0 || po_slot_of(self->sys, pid) >= self->sys->nslots) return SYNCQ_EINVAL;
  return SYNCQ_OK;
}

int syncq_po_exit(syncq_po_proc *self, syncq_po_pid pid, int32_t reason) {
  int r = check(self, pid);
  if (r != SYNCQ_OK || reason == SYNCQ_PO_NOPROC) return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED;
  syncq_po_system *sys = self->sys;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, pid)];
  pthread_mutex_lock(&sys->spawn_lock);
  /* Counted in pid's nwatch while we decide, as a monitor is: its exit
   * then takes this lock after us (or we see it exited), and its slot,
   * freed only after that exit without the lock, cannot pass to a new
   * process whose doom and trap we would be reading and writing.
   * seq_cst: as in syncq_po_monitor. */
  atomic_fetch_add(&p->nwatch, 1u);
  r = po_pid_status(sys, pid, atomic_load(&p->state));
  int action = r == SYNCQ_OK ? signal_locked(sys, self->pid, pid, reason) : PO_SIG_NONE;
  atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as above */
  pthread_mutex_unlock(&sys->spawn_lock);
  if (r != SYNCQ_OK) return r;
  int posted = signal_finish(self, pid, reason, action);
  if (po_killed(self)) return SYNCQ_EKILLED; /* killed itself (or by someone meanwhile) */
  /* A trapping pid's message refused (memory, or pid's mailbox lock):
   * the caller is told. SYNCQ_EDEAD: pid exited after the decision
   * above, and a signal to a process on its way out has no effect
   * (as in Erlang): the signal was sent. */
  return posted == SYNCQ_EDEAD ? SYNCQ_OK : posted;
}

bool po_kill(syncq_po_system *sys, syncq_po_pid pid) {
  if (pid < 0 || po_slot_of(sys, pid) >= sys->nslots) return false;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, pid)];
  pthread_mutex_lock(&sys->spawn_lock);
  /* Counted in pid's nwatch while we decide, as syncq_po_exit is (its
   * slot cannot pass to a new process meanwhile). seq_cst: as there. */
  atomic_fetch_add(&p->nwatch, 1u);
  int action = PO_SIG_NONE;
  if (po_pid_status(sys, pid, atomic_load(&p->state)) == SYNCQ_OK &&
      (p->spawned || !pthread_equal(p->owner, pthread_self())))
    action = signal_locked(sys, -1, pid, SYNCQ_PO_EXIT_KILL);
  atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as above */
  pthread_mutex_unlock(&sys->spawn_lock);
  if (action != PO_SIG_KILL) return false;
  po_wake(NULL, p); /* a stale slot's wake-up is spurious, never lost */
  return true;
}

int syncq_po_link(syncq_po_proc *self, syncq_po_pid pid) {
  int r = check(self, pid);
  if (r != SYNCQ_OK) return r;
  if (po_killed(self)) return SYNCQ_EKILLED;
  if (pid == self->pid) return SYNCQ_OK; /* Erlang: linking to oneself does nothing */
  syncq_po_system *sys = self->sys;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, pid)];
  po_link *mine = malloc(sizeof *mine), *theirs = malloc(sizeof *theirs);
  if (mine == NULL || theirs == NULL) {
    free(mine);
    free(theirs);
    return SYNCQ_ENOMEM;
  }
  mine->pid = pid;
  theirs->pid = self->pid;
  bool trap = false, fresh = false;
  pthread_mutex_lock(&sys->spawn_lock);
  /* seq_cst, with pid's exit's RMW of nwatch after its store of PO_EXITED
   * (po_exit_notify): either we see it exited, or it sees our count and
   * takes the lock, finding our end. */
  atomic_fetch_add(&p->nwatch, 1u);
  r = po_pid_status(sys, pid, atomic_load(&p->state));
  if (r == SYNCQ_OK) {
    bool linked = false;
    for (po_link *l = self->links; l != NULL && !linked; l = l->next) linked = l->pid == pid;
    if (!linked) {
      mine->next = self->links;
      self->links = mine;
      theirs->next = p->links;
      p->links = theirs;
      atomic_fetch_add(&self->nwatch, 1u); /* seq_cst: self runs this call, its exit comes later */
      fresh = true;
    } else {
      atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as above */
    }
  } else {
    atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as above */
    trap = self->trap;
  }
  pthread_mutex_unlock(&sys->spawn_lock);
  if (!fresh) {
    free(mine);
    free(theirs);
  }
  if (r != SYNCQ_OK && trap) {
    /* Erlang: a trapping caller gets {'EXIT', Pid, noproc} */
    syncq_po_exit_msg e = {pid, SYNCQ_PO_NOPROC};
    /* To self, now: refused (memory, or self's mailbox lock), the caller
     * is told instead. */
    return po_post(sys, self, self->pid, SYNCQ_PO_EXIT, &e, sizeof e, pid);
  }
  return r;
}

int syncq_po_unlink(syncq_po_proc *self, syncq_po_pid pid) {
  int r = check(self, pid);
  if (r != SYNCQ_OK) return r;
  syncq_po_system *sys = self->sys;
  pthread_mutex_lock(&sys->spawn_lock);
  po_link *mine = take_end(self, pid), *theirs = NULL;
  /* Our end still there: pid has not run its exit's locked part, so its
   * slot is its own and holds our end. */
  if (mine != NULL) theirs = take_end(&sys->procs[po_slot_of(sys, pid)], self->pid);
  pthread_mutex_unlock(&sys->spawn_lock);
  r = mine != NULL ? SYNCQ_OK : SYNCQ_ENOENT;
  free(mine);
  free(theirs);
  return r;
}

int syncq_po_trap_exits(syncq_po_proc *self, bool on) {
  if (self == NULL || !po_is_caller(self)) return SYNCQ_EINVAL;
  if (po_killed(self)) return SYNCQ_EKILLED;
  pthread_mutex_lock(&self->sys->spawn_lock);
  self->trap = on;
  pthread_mutex_unlock(&self->sys->spawn_lock);
  return SYNCQ_OK;
}
