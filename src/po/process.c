/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * process.c — the postoffice's lightweight processes (002 §4 "Processes"):
 * a system with a process table sized at creation; spawn, join, attach,
 * detach on either backend. The top of src/po's layers (po_internal.h):
 * it sets the upcalls through which the scheduler and the timers reach
 * it and the postoffice.
 *
 * Contract
 *   Source:      002 §4: each process is a thread with a small stack
 *                (32 KB by default, as 002; a guard page below it) whose
 *                only shared data is its postoffice, indexed by its pid in
 *                the global process table (the "thread" backend). The
 *                "fiber" backend (fiber_sched.c) keeps the table, the
 *                pids and the postoffices, and runs each process as a
 *                user-level context instead of a thread.
 *   Progress:    spawn/attach/join are blocking (a mutex serialises slot
 *                allocation; spawning is not a hot path; a fiber takes
 *                its stack when it first runs, so a growing stack pool
 *                holds no spawn or exit up). A detached
 *                process's exit frees its slot under the same mutex
 *                (its thread's last step, or its fiber's scheduler once
 *                the stack is back in the pool). A join takes the mutex
 *                once when the fiber has exited already, else twice
 *                (claim, then free after the wait).
 *   Memory:      create maps the table (max_procs + the reserve entries,
 *                one cache-line group each) as zero pages, touched slot
 *                by slot at each one's first use; a slot's first spawn
 *                takes its mailbox from the system's slab (slab.c), as a
 *                message header takes its memory from another: both are
 *                freed with the system, chunk by chunk, not one by one.
 *                A slot is reused once its process is joined (or has
 *                detached), at the next generation (the pid's high bits:
 *                Erlang's and the kernel's answer to a stale pid): never-
 *                used slots first, then the one freed longest ago, so a
 *                pid value repeats as late as the table allows. Mailboxes
 *                live as long as the system, so a late sender's stale pid
 *                still reaches valid memory; the message carries the pid
 *                it was sent to and a receive drops it (po_take).
 *                Monitors, links and names: lists per slot under
 *                spawn_lock (links.c, names.c); an exit looks at their
 *                count without the lock (an RMW ordered with the
 *                monitor's, link's or name's increment), so an exit
 *                nobody watches takes no lock.
 *   Limits:      max_procs live processes (SYNCQ_PO_ATTACH_RESERVE more
 *                for attach); each thread needs its stack, guard mapping
 *                and kernel task: when pthread_create fails,
 *                limit_reason() names the limit (limit.c).
 *   Signal-safe: no.  Process-shared: no.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "po_internal.h"

/* What the layers below call on this one's data and the postoffice's
 * (po_internal.h: the layers). */
static const po_upcalls upcalls = {
  .wake = po_fiber_wake,
  .deliver = po_deliver,
  .exit_notify = po_exit_notify,
  .release_detached = po_release_detached,
};

static const po_mailbox_ops *const mailboxes[] = {
  &po_mailbox_mutex,    &po_mailbox_nonblocking,  &po_mailbox_ttas,
  &po_mailbox_two_lock, &po_mailbox_mutex_nofree, &po_mailbox_mpsc,
};
#define N_MAILBOXES ((int)(sizeof mailboxes / sizeof mailboxes[0]))

#if SYNCQ_HAVE_FIBERS
#define FIBERS_BUILT true
#else
#define FIBERS_BUILT false
#endif

static const struct {
  const char *name, *title;
  bool built;
} backends[] = {
  {"thread", "a kernel thread per process (002)", true},
  {"fiber", "user-level contexts (Boost.Context), M:N on one scheduler thread per processing unit", FIBERS_BUILT},
};
#define N_BACKENDS ((int)(sizeof backends / sizeof backends[0]))

int syncq_po_backend_count(void) { return N_BACKENDS; }

int syncq_po_backend_info(int i, const char **name, const char **title) {
  if (i < 0 || i >= N_BACKENDS) return SYNCQ_EINVAL;
  if (name) *name = backends[i].name;
  if (title) *title = backends[i].title;
  return backends[i].built ? SYNCQ_OK : SYNCQ_ENOTSUP;
}

const char *syncq_po_default_backend(void) { return FIBERS_BUILT ? "fiber" : "thread"; }

const char *syncq_po_backend_of(const syncq_po_system *sys) {
  if (sys == NULL) return NULL;
  return sys->fibers ? "fiber" : "thread";
}

uint32_t syncq_po_schedulers(const syncq_po_system *sys) {
  return sys != NULL && sys->fibers ? po_fiber_rt_schedulers(sys->fiber_rt) : 0;
}

const char *syncq_po_schedulers_reason(const syncq_po_system *sys) {
  return sys != NULL && sys->fibers ? po_fiber_rt_short_reason(sys->fiber_rt) : NULL;
}

int syncq_po_mailbox_count(void) { return N_MAILBOXES; }

int syncq_po_mailbox_info(int i, const char **name, const char **title, const char **paper) {
  if (i < 0 || i >= N_MAILBOXES) return SYNCQ_EINVAL;
  if (name) *name = mailboxes[i]->name;
  if (title) *title = mailboxes[i]->title;
  if (paper) *paper = mailboxes[i]->paper;
  return SYNCQ_OK;
}

/* The process table: one anonymous mapping of zero pages, so a record
 * is touched (its page faulted in) at its slot's first use, not at
 * create: a system sized for a million processes costs no more to
 * create than one sized for ten, and a program pays the pages of the
 * slots it uses. Records are 64-byte multiples: the mapping's page
 * alignment keeps each one's cache-line alignment.
 * A destroyed system's table is kept for the next system (as its
 * stacks are): the records it used are zeroed again (no page fault
 * then), so a program that creates systems one after another pays its
 * records' faults once. One table is kept, if its zeroed, resident part
 * is at most TABLE_KEEP_BYTES. */
#define TABLE_KEEP_BYTES ((size_t)64 << 20)
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static void *table_kept; /* a zeroed table mapping, or NULL */
static size_t table_kept_len;

static struct syncq_po_proc *table_map(uint32_t nslots, size_t *len) {
  _Static_assert(sizeof(struct syncq_po_proc) % 64 == 0, "records keep their cache-line alignment");
  size_t need = (size_t)nslots * sizeof(struct syncq_po_proc);
  pthread_mutex_lock(&table_lock);
  void *m = NULL;
  if (table_kept != NULL && table_kept_len >= need) {
    m = table_kept;
    *len = table_kept_len;
    table_kept = NULL;
  }
  pthread_mutex_unlock(&table_lock);
  if (m != NULL) return m;
  *len = need;
  m = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return m == MAP_FAILED ? NULL : m;
}

/* `used`: how many leading records the system touched (they are zeroed
 * before the table is kept). */
static void table_unmap(syncq_po_system *s, uint32_t used) {
  if (s->procs == NULL) return;
  size_t dirty = (size_t)used * sizeof(struct syncq_po_proc);
  void *drop = s->procs;
  size_t drop_len = s->procs_len;
  if (dirty <= TABLE_KEEP_BYTES) {
    memset(s->procs, 0, dirty);
    pthread_mutex_lock(&table_lock);
    if (table_kept == NULL || table_kept_len < s->procs_len) { /* keep the larger */
      void *old = table_kept;
      size_t old_len = table_kept_len;
      table_kept = s->procs;
      table_kept_len = s->procs_len;
      drop = old;
      drop_len = old_len;
    }
    pthread_mutex_unlock(&table_lock);
  }
  if (drop != NULL) munmap(drop, drop_len);
  s->procs = NULL;
}

int syncq_po_create(const syncq_po_config *cfg, syncq_po_system **out) {
  if (out == NULL) return SYNCQ_EINVAL;
  syncq_po_config c = {0};
  if (cfg != NULL) c = *cfg;
  const char *mbname = c.mailbox ? c.mailbox : "mutex";
  const char *bname = c.backend ? c.backend : syncq_po_default_backend();
  int backend = -1;
  for (int i = 0; i < N_BACKENDS; i++)
    if (strcmp(backends[i].name, bname) == 0) backend = i;
  if (backend < 0) return SYNCQ_ENOENT;
  bool fibers = strcmp(bname, "fiber") == 0;
  if (!backends[backend].built) return SYNCQ_ENOTSUP;
  uint32_t max = c.max_procs ? c.max_procs : SYNCQ_PO_DEFAULT_MAX_PROCS;
  size_t stack = c.stack_size ? c.stack_size : fibers ? SYNCQ_PO_DEFAULT_FIBER_STACK : SYNCQ_PO_DEFAULT_STACK;
  size_t min_stack = fibers ? SYNCQ_PO_MIN_FIBER_STACK : (size_t)PTHREAD_STACK_MIN;
  /* 002's 32 KB is below PTHREAD_STACK_MIN where pages may be 64 KB
   * (AArch64 glibc: 128 KB): a thread's default is then the smallest allowed */
  if (c.stack_size == 0 && !fibers && stack < (size_t)PTHREAD_STACK_MIN) stack = (size_t)PTHREAD_STACK_MIN;
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  size_t guard = c.guard_size == SYNCQ_PO_NO_GUARD ? 0
                 : c.guard_size                    ? c.guard_size
                 : fibers                          ? (size_t)SYNCQ_PO_DEFAULT_FIBER_GUARD
                                                   : (size_t)page;
  if (max > SYNCQ_PO_MAX_PROCS || stack < min_stack || guard > ((size_t)1 << 30) || stack > ((size_t)1 << 34) ||
      c.schedulers > SYNCQ_PO_MAX_SCHEDULERS)
    return SYNCQ_EINVAL;
  const po_mailbox_ops *mb = NULL;
  for (int i = 0; i < N_MAILBOXES; i++)
    if (strcmp(mailboxes[i]->name, mbname) == 0) mb = mailboxes[i];
  if (mb == NULL) return SYNCQ_ENOENT;
  const syncq_lock_ops *lock = NULL;
  if (mb->lock_name != NULL) {
    const syncq_algo *a;
    if (syncq_registry_find(SYNCQ_FAMILY_LOCK, mb->lock_name, &a) != SYNCQ_OK) return SYNCQ_ENOENT;
    lock = a->ops;
  }
  if (!syncq_pr_dwcas_available()) return SYNCQ_ENOTSUP;
  syncq_po_system *s = calloc(1, sizeof *s);
  if (s == NULL) return SYNCQ_ENOMEM;
  if (po_slab_init(&s->mailboxes, mb->size, mb->align) != SYNCQ_OK) {
    free(s);
    return SYNCQ_ESYS;
  }
  /* Headers a cache line apart at least: a slab hands consecutive ones to
   * processes on different schedulers, which must not share a line (malloc
   * kept them apart by its per-thread arenas). */
  if (po_slab_init(&s->headers, sizeof(syncq_po_msg), SYNCQ_CACHELINE) != SYNCQ_OK) {
    po_slab_destroy(&s->mailboxes);
    free(s);
    return SYNCQ_ESYS;
  }
  uint32_t nslots = max + SYNCQ_PO_ATTACH_RESERVE;
  uint32_t bits = 1;
  while ((1u << bits) < nslots) bits++;
  s->procs = table_map(nslots, &s->procs_len);
  s->freeq = malloc((size_t)nslots * sizeof *s->freeq);
  if (s->procs == NULL || s->freeq == NULL) {
    table_unmap(s, 0);
    free(s->freeq);
    po_slab_destroy(&s->headers);
    po_slab_destroy(&s->mailboxes);
    free(s);
    return SYNCQ_ENOMEM;
  }
  /* No slot is initialised here: zero bytes are a slot nobody has had
   * (state PO_WORD(0, PO_FREE), no mailbox, no watchers), and
   * prepare_slot gives a slot the rest at its first use. */
  if (pthread_mutex_init(&s->spawn_lock, NULL) != 0) {
    table_unmap(s, 0);
    free(s->freeq);
    po_slab_destroy(&s->headers);
    po_slab_destroy(&s->mailboxes);
    free(s);
    return SYNCQ_ESYS;
  }
  if (po_timer_thread_init(&s->timers) != SYNCQ_OK) {
    pthread_mutex_destroy(&s->spawn_lock);
    table_unmap(s, 0);
    free(s->freeq);
    po_slab_destroy(&s->headers);
    po_slab_destroy(&s->mailboxes);
    free(s);
    return SYNCQ_ESYS;
  }
  s->mb = mb;
  s->up = &upcalls;
  s->lock = lock;
  s->stack_size = stack;
  s->guard_size = guard;
  s->max_procs = max;
  s->nslots = nslots;
  s->slot_bits = bits;
  s->gen_mask = (1u << (31 - bits)) - 1u;
  s->fibers = fibers;
  atomic_init(&s->high, 0);
  atomic_init(&s->live, 0);
  atomic_init(&s->started, 0);
  atomic_init(&s->next_ref, 0);
  atomic_init(&s->limit_reason, NULL);
  if (fibers) {
    int r = po_fiber_rt_create(s, c.schedulers, c.pin, stack, guard, &s->fiber_rt);
    if (r != SYNCQ_OK) {
      po_timer_thread_destroy(&s->timers, s);
      pthread_mutex_destroy(&s->spawn_lock);
      table_unmap(s, 0);
      free(s->freeq);
      po_slab_destroy(&s->headers);
      po_slab_destroy(&s->mailboxes);
      free(s);
      return r;
    }
  }
  *out = s;
  return SYNCQ_OK;
}

/* ---- slots ---- */

static void set_limit(syncq_po_system *sys, const char *why) {
  /* release: pairs with the acquire load in syncq_po_limit_reason (the
   * string is static; ordering only matters for the reader's sake). */
  atomic_store_explicit(&sys->limit_reason, why, memory_order_release);
}

/* Under spawn_lock: a slot for a new process (its mailbox ready), not yet
 * taken: the next never-used slot while there is one (a fresh system hands
 * out pids 0, 1, 2, ...; a slot is reused as late as possible), else the
 * one freed longest ago. `limit`: live processes allowed (max_procs for
 * spawn, nslots for attach). */
static int prepare_slot(syncq_po_system *sys, uint32_t limit, struct syncq_po_proc **out) {
  /* relaxed: live and high are written under spawn_lock only. */
  if (atomic_load_explicit(&sys->live, memory_order_relaxed) >= limit) {
    set_limit(sys, "max_procs");
    return SYNCQ_ELIMIT;
  }
  uint32_t high = atomic_load_explicit(&sys->high, memory_order_relaxed);
  uint32_t i;
  if (high < sys->nslots) i = high;
  else if (sys->fq_len > 0) i = sys->freeq[sys->fq_head];
  else return SYNCQ_ELIMIT; /* unreachable: live < nslots leaves a free slot */
  struct syncq_po_proc *p = &sys->procs[i];
  if (i == high) p->sys = sys; /* its first use: the rest of a fresh record is zero (see table_map) */
  if (p->mailbox == NULL) {    /* a refused spawn leaves its mailbox for the next */
    /* From the system's slab (under spawn_lock): freed with the system,
     * as a mailbox lives as long as it. A failed init leaves its object
     * in the slab until then. */
    void *box = po_slab_alloc(&sys->mailboxes);
    if (box == NULL) return SYNCQ_ENOMEM;
    memset(box, 0, sys->mb->size);
    int r = sys->mb->init(box, sys);
    if (r != SYNCQ_OK) return r;
    r = syncq_freelist_init(&p->free);
    if (r != SYNCQ_OK) {
      sys->mb->destroy(box, sys);
      return r;
    }
    p->mailbox = box;
  } else {
    /* A reused slot: what its earlier processes left unread goes back to
     * the free list (the inbox's consumer is gone: joined or detached). A
     * late sender may still add one; po_take drops it by its pid. */
    syncq_po_msg *m;
    while (sys->mb->dequeue(p->mailbox, &m) == SYNCQ_OK) po_drop(sys, p, m);
  }
  /* relaxed: the slot is FREE; the generation changes only under spawn_lock. */
  uint32_t gen = PO_GEN(atomic_load_explicit(&p->state, memory_order_relaxed));
  p->pid = (syncq_po_pid)(gen << sys->slot_bits | i);
  /* A new process neither traps exits nor has been killed. Signals are
   * decided under spawn_lock, and only for a RUNNING pid: none reaches
   * the slot before the state's release store publishes these.
   * relaxed: published by that store (and the lock). */
  p->trap = false;
  atomic_store_explicit(&p->doom, 0u, memory_order_relaxed);
  *out = p;
  return SYNCQ_OK;
}

/* Count the slot as taken. A spawned process's state was set before its
 * thread started (and may be PO_EXITED already); never overwrite it here. */
static void commit_slot(syncq_po_system *sys, struct syncq_po_proc *p) {
  uint32_t i = po_slot_of(sys, p->pid);
  uint32_t high = atomic_load_explicit(&sys->high, memory_order_relaxed); /* spawn_lock */
  if (i == high) {
    /* release: destroy's acquire load of high sees the slot's mailbox. */
    atomic_store_explicit(&sys->high, high + 1, memory_order_release);
  } else {
    sys->fq_head = (sys->fq_head + 1) % sys->nslots; /* it was the oldest freed */
    sys->fq_len--;
  }
  /* relaxed: counts, read as such (live's readers only want a number). */
  atomic_store_explicit(&sys->live, atomic_load_explicit(&sys->live, memory_order_relaxed) + 1, memory_order_relaxed);
  uint32_t n = atomic_load_explicit(&sys->started, memory_order_relaxed);
  if (n != UINT32_MAX) atomic_store_explicit(&sys->started, n + 1, memory_order_relaxed);
}

/* Under spawn_lock: the slot's process is gone (joined, or detached) and
 * the slot is free for reuse at the next generation: from now on its pid
 * is stale. */
static void free_slot(syncq_po_system *sys, struct syncq_po_proc *p) {
  uint32_t gen = (po_gen_of(sys, p->pid) + 1) & sys->gen_mask;
  p->spawned = false;
  p->joined = false;
  p->detached = false;
  /* release: pairs with a sender's acquire load (it then reads nothing of
   * the old process; ordering only for the word's own sake). */
  atomic_store_explicit(&p->state, PO_WORD(gen, PO_FREE), memory_order_release);
  sys->freeq[(sys->fq_head + sys->fq_len) % sys->nslots] = po_slot_of(sys, p->pid);
  sys->fq_len++;
  atomic_store_explicit(&sys->live, atomic_load_explicit(&sys->live, memory_order_relaxed) - 1,
                        memory_order_relaxed); /* a count, as in commit_slot */
}

void po_exit_notify(struct syncq_po_proc *p) {
  syncq_po_system *sys = p->sys;
  /* seq_cst RMW (writing back what it reads) after the caller's store of
   * PO_EXITED: RMWs of nwatch are totally ordered, so either it comes after
   * the increment of syncq_po_monitor (link, register) and reads it, or
   * that increment reads from it, synchronizes with it and its state load
   * sees PO_EXITED. (An RMW rather than a fence: the same in C11 terms,
   * and ThreadSanitizer models it.) */
  if (atomic_fetch_add(&p->nwatch, 0u) == 0) return; /* no monitor, link, name: no lock at exit */
  pthread_mutex_lock(&sys->spawn_lock);
  /* A kill's reason wins over the one the process set (doom is written
   * under this lock: relaxed). */
  uint64_t doom = atomic_load_explicit(&p->doom, memory_order_relaxed);
  int32_t reason = doom != 0 ? (int32_t)(uint32_t)doom : p->exit_reason;
  po_monitor *list = p->monitors;
  p->monitors = NULL;
  po_link *links = po_links_exit_locked(p, reason);
  po_names_exit_locked(p);
  atomic_store(&p->nwatch, 0u); /* seq_cst: as above */
  pthread_mutex_unlock(&sys->spawn_lock);
  po_links_exit_finish(p, links);
  while (list != NULL) {
    po_monitor *next = list->next;
    syncq_po_down d = {list->ref, p->pid, reason};
    po_post(sys, p, list->watcher, SYNCQ_PO_DOWN, &d, sizeof d, p->pid);
    free(list);
    list = next;
  }
}

void po_release_detached(struct syncq_po_proc *p) {
  syncq_po_system *sys = p->sys;
  pthread_mutex_lock(&sys->spawn_lock);
  free_slot(sys, p);
  sys->detached_held--;
  pthread_mutex_unlock(&sys->spawn_lock);
}

static void *trampoline(void *arg) {
  struct syncq_po_proc *p = arg;
  p->owner = pthread_self();
  /* Written before pthread_create, which orders it for this thread; read
   * before the exit, after which a joiner (not a detached one's) may free
   * and reuse the slot. */
  bool detached = p->detached;
  p->fn(p, p->arg);
  /* release: pairs with the acquire load of state by senders (EDEAD) and
   * by destroy. */
  atomic_store_explicit(&p->state, PO_WORD(po_gen_of(p->sys, p->pid), PO_EXITED), memory_order_release);
  po_exit_notify(p);
  if (detached) po_release_detached(p); /* the thread was created detached: nothing else to wait for */
  return NULL;
}

static int spawn(syncq_po_system *sys, syncq_po_fn fn, void *arg, syncq_po_pid *pid, bool detached) {
  if (sys == NULL || fn == NULL) return SYNCQ_EINVAL;
  pthread_mutex_lock(&sys->spawn_lock);
  struct syncq_po_proc *p;
  int r = prepare_slot(sys, sys->max_procs, &p);
  if (r != SYNCQ_OK) {
    pthread_mutex_unlock(&sys->spawn_lock);
    return r;
  }
  uint32_t gen = po_gen_of(sys, p->pid);
  /* The pid, read while the slot is surely this process's: a detached
   * one may exit and its slot be reused once the lock is released. */
  syncq_po_pid self_pid = p->pid;
  p->fn = fn;
  p->arg = arg;
  p->exit_reason = 0;
  p->spawned = true;
  p->joined = false;
  p->detached = detached;
  p->is_fiber = sys->fibers;
  /* The state is RUNNING before the process starts, so a process that
   * sends to itself (or is sent to) right away finds itself alive. */
  /* release: with pthread_create (or the run queue's push), publishes the
   * mailbox to the child and to whoever learns the pid from it (acquire
   * load of state in send). */
  atomic_store_explicit(&p->state, PO_WORD(gen, PO_RUNNING), memory_order_release);
  if (sys->fibers) {
    /* No stack yet: the scheduler that first runs it takes one (a
     * growing pool then stalls no spawn), and a process that cannot have
     * one exits with SYNCQ_PO_EXIT_NOMEM (fiber_sched.c, first_run). */
    po_fiber_spawn(sys->fiber_rt, p);
    /* Under the lock the fiber's exit waits for (po_release_detached):
     * the slot is counted taken before it can be freed. */
    commit_slot(sys, p);
    if (detached) sys->detached_held++;
    pthread_mutex_unlock(&sys->spawn_lock);
    po_fiber_spawned(sys->fiber_rt); /* the wake-up, out of the lock */
    if (pid) *pid = self_pid;
    return SYNCQ_OK;
  }
  pthread_attr_t attr;
  int e = pthread_attr_init(&attr);
  if (e == 0) e = pthread_attr_setstacksize(&attr, sys->stack_size);
  if (e == 0) e = pthread_attr_setguardsize(&attr, sys->guard_size);
  if (e == 0 && detached) e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (e == 0) e = pthread_create(&p->tid, &attr, trampoline, p);
  pthread_attr_destroy(&attr);
  if (e != 0) {
    atomic_store_explicit(&p->state, PO_WORD(gen, PO_FREE), memory_order_relaxed); /* never published */
    p->spawned = false;
    p->detached = false;
    set_limit(sys, po_limit_of(e));
    pthread_mutex_unlock(&sys->spawn_lock);
    return e == EINVAL ? SYNCQ_EINVAL : SYNCQ_ELIMIT;
  }
  commit_slot(sys, p); /* before the thread's exit can free the slot: it takes this lock */
  if (detached) sys->detached_held++;
  pthread_mutex_unlock(&sys->spawn_lock);
  if (pid) *pid = self_pid;
  return SYNCQ_OK;
}

int syncq_po_spawn(syncq_po_system *sys, syncq_po_fn fn, void *arg, syncq_po_pid *pid) {
  return spawn(sys, fn, arg, pid, false);
}

int syncq_po_spawn_detached(syncq_po_system *sys, syncq_po_fn fn, void *arg, syncq_po_pid *pid) {
  return spawn(sys, fn, arg, pid, true);
}

int syncq_po_attach(syncq_po_system *sys, syncq_po_proc **self) {
  if (sys == NULL || self == NULL || po_fiber_current() != NULL) return SYNCQ_EINVAL;
  pthread_mutex_lock(&sys->spawn_lock);
  struct syncq_po_proc *p;
  int r = prepare_slot(sys, sys->nslots, &p);
  if (r == SYNCQ_OK) {
    p->spawned = false;
    p->is_fiber = false;
    p->exit_reason = 0;
    p->owner = pthread_self();
    /* release: pairs with the senders' acquire load of the state. */
    atomic_store_explicit(&p->state, PO_WORD(po_gen_of(sys, p->pid), PO_RUNNING), memory_order_release);
    commit_slot(sys, p);
    *self = p;
  }
  pthread_mutex_unlock(&sys->spawn_lock);
  return r;
}

int syncq_po_detach(syncq_po_proc *self) {
  if (self == NULL || self->spawned) return SYNCQ_EINVAL;
  syncq_po_system *sys = self->sys;
  uint32_t expect = PO_WORD(po_gen_of(sys, self->pid), PO_RUNNING);
  /* release: as in trampoline. Only the owner detaches: no other thread
   * changes the word while it is RUNNING. */
  if (!atomic_compare_exchange_strong_explicit(&self->state, &expect, PO_WORD(PO_GEN(expect), PO_EXITED),
                                               memory_order_release, memory_order_relaxed))
    return SYNCQ_EINVAL;
  po_exit_notify(self); /* before the slot can be reused */
  pthread_mutex_lock(&sys->spawn_lock);
  free_slot(sys, self);
  pthread_mutex_unlock(&sys->spawn_lock);
  return SYNCQ_OK;
}

syncq_po_pid syncq_po_pid_of(const syncq_po_proc *self) { return self ? self->pid : -1; }

const char *syncq_po_limit_reason(const syncq_po_system *sys) {
  if (sys == NULL) return NULL;
  /* acquire: pairs with set_limit's release. */
  return atomic_load_explicit(&((syncq_po_system *)sys)->limit_reason, memory_order_acquire);
}

uint32_t syncq_po_count(const syncq_po_system *sys) {
  if (sys == NULL) return 0;
  /* relaxed: a count (written under spawn_lock). */
  return atomic_load_explicit(&((syncq_po_system *)sys)->started, memory_order_relaxed);
}

uint32_t syncq_po_live(const syncq_po_system *sys) {
  if (sys == NULL) return 0;
  /* relaxed: a count (written under spawn_lock). */
  return atomic_load_explicit(&((syncq_po_system *)sys)->live, memory_order_relaxed);
}

uint32_t syncq_po_pid_generations(const syncq_po_system *sys) { return sys != NULL ? sys->gen_mask + 1 : 0; }

int syncq_po_join(syncq_po_system *sys, syncq_po_pid pid) {
  if (sys == NULL || pid < 0 || po_slot_of(sys, pid) >= sys->nslots) return SYNCQ_EINVAL;
  pthread_mutex_lock(&sys->spawn_lock);
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, pid)];
  /* relaxed: the word changes generation only under spawn_lock, and we
   * only need its generation and whether it is FREE. */
  uint32_t w = atomic_load_explicit(&p->state, memory_order_relaxed);
  int r = SYNCQ_OK;
  if (PO_GEN(w) != po_gen_of(sys, pid) || PO_ST(w) == PO_FREE || p->joined)
    r = SYNCQ_ENOENT; /* not had yet, stale, or claimed by another joiner */
  else if (!p->spawned || p->detached ||
           (p->is_fiber ? po_fiber_current() == &p->fiber : pthread_equal(p->tid, pthread_self())))
    r = SYNCQ_EINVAL; /* attached, detached (its exit frees the slot), or the caller itself */
  else if (p->is_fiber && po_fiber_done(p)) {
    /* A fiber that is gone already (a parent joining a child whose reply
     * it has: the common case) is freed under this same lock: one lock
     * round instead of two. */
    free_slot(sys, p);
    pthread_mutex_unlock(&sys->spawn_lock);
    return SYNCQ_OK;
  } else p->joined = true; /* claimed: a second joiner gets SYNCQ_ENOENT */
  pthread_mutex_unlock(&sys->spawn_lock);
  if (r != SYNCQ_OK) return r;
  if (p->is_fiber) r = po_fiber_join(p);
  else r = pthread_join(p->tid, NULL) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
  pthread_mutex_lock(&sys->spawn_lock);
  free_slot(sys, p);
  pthread_mutex_unlock(&sys->spawn_lock);
  return r;
}

typedef struct po_run_frame {
  syncq_po_main_fn fn;
  void *arg;
  int result; /* written by the process, read after join (which orders it) */
  bool ran;   /* as result: false when the fiber could not start (SYNCQ_PO_EXIT_NOMEM) */
} po_run_frame;

static void run_body(syncq_po_proc *self, void *arg) {
  po_run_frame *f = arg;
  f->ran = true;
  f->result = f->fn(self, f->arg);
}

int syncq_po_run(syncq_po_system *sys, syncq_po_main_fn fn, void *arg, int *result) {
  if (sys == NULL || fn == NULL) return SYNCQ_EINVAL;
  po_run_frame f = {fn, arg, 0, false};
  syncq_po_pid pid;
  int r = syncq_po_spawn(sys, run_body, &f, &pid);
  if (r != SYNCQ_OK) return r;
  r = syncq_po_join(sys, pid);
  if (r == SYNCQ_OK && !f.ran) return SYNCQ_ENOMEM;
  if (r == SYNCQ_OK && result != NULL) *result = f.result;
  return r;
}

int syncq_po_destroy(syncq_po_system *sys) {
  if (sys == NULL) return SYNCQ_EINVAL;
  /* acquire: pairs with commit_slot's release (the slots' mailboxes). */
  uint32_t n = atomic_load_explicit(&sys->high, memory_order_acquire);
  for (uint32_t i = 0; i < n; i++) /* acquire: pairs with the release store of PO_EXITED. */
    if (PO_ST(atomic_load_explicit(&sys->procs[i].state, memory_order_acquire)) == PO_RUNNING) return SYNCQ_EBUSY;
  /* Detached processes that have exited are on their way out (their
   * thread's last steps, their fiber's stack going back to the pool):
   * wait until every one has freed its slot (they take spawn_lock to). */
  for (;;) {
    pthread_mutex_lock(&sys->spawn_lock);
    uint32_t held = sys->detached_held;
    pthread_mutex_unlock(&sys->spawn_lock);
    if (held == 0) break;
    syncq_yield();
  }
  for (uint32_t i = 0; i < n; i++) {
    struct syncq_po_proc *p = &sys->procs[i];
    if (p->spawned && !p->joined && PO_ST(atomic_load_explicit(&p->state, memory_order_relaxed)) == PO_EXITED) {
      p->joined = true;                        /* relaxed above: read after the acquire loop, nothing else to see */
      if (p->is_fiber) (void)po_fiber_join(p); /* it has exited: waits only for its stack to be released */
      else pthread_join(p->tid, NULL);
    }
  }
  /* every fiber is done: stop the schedulers (their pending timers go too) */
  if (sys->fibers) po_fiber_rt_destroy(sys->fiber_rt);
  po_timer_thread_destroy(&sys->timers, sys); /* send_after's pending messages of a thread system */
  /* Slots up to `high` (that one too: a refused spawn's mailbox); the
   * others were never touched. */
  uint32_t used = n < sys->nslots ? n + 1 : sys->nslots;
  for (uint32_t i = 0; i < used; i++) {
    struct syncq_po_proc *p = &sys->procs[i];
    while (p->monitors != NULL) { /* none normally: an exit takes its monitors */
      po_monitor *next = p->monitors->next;
      free(p->monitors);
      p->monitors = next;
    }
    while (p->links != NULL) { /* and its links */
      po_link *next = p->links->next;
      free(p->links);
      p->links = next;
    }
    if (p->mailbox == NULL) continue;
    if (!sys->mb->free_list) { /* no type-stable headers: drain the inbox */
      syncq_po_msg *m;
      while (sys->mb->dequeue(p->mailbox, &m) == SYNCQ_OK) {
        po_payload_free(m);
        free(m);
      }
    }
    sys->mb->destroy(p->mailbox, sys); /* its memory goes with the slab */
  }
  po_headers_destroy(sys); /* their payloads, then the headers themselves */
  po_slab_destroy(&sys->mailboxes);
  po_names_destroy(sys);
  pthread_mutex_destroy(&sys->spawn_lock);
  table_unmap(sys, used);
  free(sys->freeq);
  free(sys);
  return SYNCQ_OK;
}
