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
 *   Progress:    spawn, attach, join and exit take and give slots
 *                without a lock: a reservation of the live count against
 *                the limit and, while there is one and no more than
 *                SYNCQ_PO_REUSE_DISTANCE freed slots wait, a never-used
 *                slot, in one CAS (live and `high` share a word), else
 *                the oldest freed slot from free_slots (slot_ring.c,
 *                Vyukov's bounded MPMC queue); a free puts
 *                its slot back, then gives its count back, so a spawn
 *                that reserved always finds a slot, at worst after
 *                waiting out a put in flight (it yields). A fiber takes
 *                its stack when it first runs (fiber_sched.c), so a
 *                growing stack pool holds no spawn up. A reused slot
 *                whose inbox drain the mailbox's lock refuses goes back
 *                and the next free slot is tried (take_slot: at most
 *                SYNCQ_PO_SPAWN_SLOT_TRIES slots, each once).
 *                A join claims the process in its state word (one CAS
 *                that checks the generation: PO_CLAIMED); the common case,
 *                a fiber that is done, frees the slot with one CAS (EXITED
 *                of its generation -> FREE of the next) instead. A joiner
 *                of a process whose spawn is still making its fiber or
 *                thread waits (yielding) for PO_MADE; a join is blocking
 *                in any case (it waits for the exit). spawn_lock is left
 *                to monitors, links, names and exit signals, which count
 *                themselves in the target's nwatch so its exit takes the
 *                lock after them (the slot is freed only after that).
 *   Atomics:     uncontended spawn: a CAS of the counts (live and
 *                high), plus a take (CAS) from free_slots when it reuses
 *                a slot, the state's release store, an RMW setting
 *                PO_MADE (joinable ones), an add to `running` (which
 *                also reads the shutdowns under way; on the counts'
 *                line); an exit: a sub from `running` (the last one an
 *                add to exit_epoch, and a futex wake when
 *                syncq_po_wait_exited sleeps); join of a done fiber: a
 *                CAS of the state, a put (CAS) to free_slots, a sub from
 *                the counts.
 *   Shutdown:    syncq_po_wait_exited sleeps on exit_epoch (an
 *                eventcount: the exit that takes `running` to 0 bumps
 *                it) until no spawned process runs; syncq_po_shutdown
 *                raises the shutdown count in `running`'s high half,
 *                kills every RUNNING slot below `high` (po_kill,
 *                links.c) and waits; a spawn that published its process
 *                after that look reads the count and kills its child.
 *   Memory:      create maps the table (max_procs + the reserve entries,
 *                one cache-line group each) as zero pages, touched slot
 *                by slot at each one's first use; a slot's first spawn
 *                takes its mailbox from the system's slab (slab.c), as a
 *                message header takes its memory from another: both are
 *                freed with the system, chunk by chunk, not one by one.
 *                A slot is reused once its process is joined (or has
 *                exited detached, or detached), at the next generation
 *                (the pid's high bits:
 *                Erlang's and the kernel's answer to a stale pid): never-
 *                used slots while no more than SYNCQ_PO_REUSE_DISTANCE
 *                freed ones wait, else the one freed longest ago (a
 *                ring of 16-byte cells, capacity nslots rounded up to a
 *                power of two, zero pages until used), so the records
 *                touched follow the live processes (plus the distance),
 *                not max_procs, and a pid value repeats only after its
 *                slot's every generation, each reuse at least the
 *                distance of frees after the last. Mailboxes
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
 *   Linearizability: a spawn or attach refused for the table takes
 *                effect at its load of live (limit processes live or
 *                reserved); a join at its CAS of the state word (the
 *                generation checked and the process claimed or freed in
 *                one step: of two joiners one gets SYNCQ_OK, the other
 *                SYNCQ_ENOENT).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../race_internal.h"
#include "syncq/clock.h"
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
 * is at most TABLE_KEEP_BYTES, until syncq_po_cache_trim. */
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

size_t syncq_po_cache_trim(void) {
  size_t bytes = syncq_po_stack_cache_trim() + po_slab_kept_trim();
  pthread_mutex_lock(&table_lock);
  void *m = table_kept;
  size_t len = table_kept_len;
  table_kept = NULL;
  table_kept_len = 0;
  pthread_mutex_unlock(&table_lock);
  if (m != NULL) {
    munmap(m, len);
    bytes += len;
  }
  return bytes;
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
  int r = SYNCQ_ESYS;
  if (po_slab_init(&s->mailboxes, mb->size, mb->align) != SYNCQ_OK) goto undo_system;
  /* Headers a cache line apart at least: a slab hands consecutive ones to
   * processes on different schedulers, which must not share a line (malloc
   * kept them apart by its per-thread arenas). */
  if (po_slab_init(&s->headers, sizeof(syncq_po_msg), SYNCQ_CACHELINE) != SYNCQ_OK) goto undo_mailboxes;
  uint32_t nslots = max + SYNCQ_PO_ATTACH_RESERVE;
  uint32_t bits = 1;
  while ((1u << bits) < nslots) bits++;
  s->procs = table_map(nslots, &s->procs_len);
  int ring = po_slot_ring_init(&s->free_slots, nslots);
  if (s->procs == NULL || ring != SYNCQ_OK) {
    table_unmap(s, 0);
    if (ring == SYNCQ_OK) po_slot_ring_destroy(&s->free_slots);
    r = SYNCQ_ENOMEM;
    goto undo_headers;
  }
  /* No slot is initialised here: zero bytes are a slot nobody has had
   * (state PO_WORD(0, PO_FREE), no mailbox, no watchers), and
   * prepare_slot gives a slot the rest at its first use. */
  if (pthread_mutex_init(&s->spawn_lock, NULL) != 0) goto undo_table;
  if (po_timer_thread_init(&s->timers) != SYNCQ_OK) goto undo_spawn_lock;
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
  atomic_init(&s->counts, 0);
  atomic_init(&s->failed, 0);
  atomic_init(&s->detached_held, 0);
  atomic_init(&s->running, 0);
  atomic_init(&s->exit_epoch, 0);
  atomic_init(&s->exit_waiters, 0);
  atomic_init(&s->next_ref, 0);
  atomic_init(&s->limit_reason, NULL);
  if (fibers) {
    r = po_fiber_rt_create(s, c.schedulers, c.pin, stack, guard, &s->fiber_rt);
    if (r != SYNCQ_OK) goto undo_timers;
  }
  *out = s;
  return SYNCQ_OK;
  /* A failed step undoes the ones before it, last first. */
undo_timers:
  po_timer_thread_destroy(&s->timers, s);
undo_spawn_lock:
  pthread_mutex_destroy(&s->spawn_lock);
undo_table:
  table_unmap(s, 0);
  po_slot_ring_destroy(&s->free_slots);
undo_headers:
  po_slab_destroy(&s->headers);
undo_mailboxes:
  po_slab_destroy(&s->mailboxes);
undo_system:
  free(s);
  return r;
}

/* ---- slots ---- */

static void set_limit(syncq_po_system *sys, const char *why) {
  /* release: pairs with the acquire load in syncq_po_limit_reason (the
   * string is static; ordering only matters for the reader's sake). */
  atomic_store_explicit(&sys->limit_reason, why, memory_order_release);
}

#define COUNT_LIVE(c) ((uint32_t)(c))
#define COUNT_HIGH(c) ((uint32_t)((c) >> 32))

/* Count one more live process against `limit` (max_procs for spawn,
 * nslots for attach) and take a slot for it, or refuse: the one freed
 * longest ago once more than SYNCQ_PO_REUSE_DISTANCE freed slots wait
 * (high - live of the counts: every slot ever taken is live or waits in
 * free_slots), else the next never-used slot while there is one (a fresh
 * system hands out pids 0, 1, 2, ...), in the same CAS as the count, else
 * the oldest freed one. So a slot comes back only after at least
 * SYNCQ_PO_REUSE_DISTANCE later frees (fewer once every slot has been
 * used; never-used ones come again whenever no more than that many
 * wait), and the records a system touches follow its live processes, not
 * max_procs: a million-process tree on a table of a million slots, 60,000
 * of them live at most, touched every slot's record and mailbox (about
 * 600 MB) when never-used slots came first. A CAS loop,
 * not an add undone on refusal: a refused spawn never counts, so a spawn
 * is refused only while `limit` processes are live or on their way in.
 * Every slot out of free_slots is counted (a free puts its slot back
 * before it gives its count back), so one that counted finds a slot: it
 * takes from free_slots only where high > live (high - live above the
 * distance, or high = nslots >= limit > live), one more waiting slot
 * than reservations still to take one; the wait below only outlasts a
 * put still in flight. */
static bool reserve_slot(syncq_po_system *sys, uint32_t limit, uint32_t *slot, bool *fresh) {
  /* relaxed: a first guess, checked by the CAS. */
  uint64_t c = atomic_load_explicit(&sys->counts, memory_order_relaxed);
  bool f;
  do {
    if (COUNT_LIVE(c) >= limit) return false;
    f = COUNT_HIGH(c) < sys->nslots && COUNT_HIGH(c) - COUNT_LIVE(c) <= SYNCQ_PO_REUSE_DISTANCE;
    /* acquire: pairs with release_slot's release decrement, so the slot
     * that free gave back is in free_slots for the take below. A fresh
     * slot's record is zero (table_map) and the taker's alone. */
  } while (!atomic_compare_exchange_weak_explicit(&sys->counts, &c, c + 1u + (f ? (uint64_t)1 << 32 : 0u),
                                                  memory_order_acquire, memory_order_relaxed));
  *fresh = f;
  if (f) {
    *slot = COUNT_HIGH(c);
    return true;
  }
  while (po_slot_ring_take(&sys->free_slots, slot) != SYNCQ_OK) syncq_yield(); /* its put is in flight */
  return true;
}

/* The slot i's process is gone (joined, exited detached, or detached) and
 * its state word says FREE at the next generation, so its pid is stale:
 * the slot goes to the back of free_slots, then its count goes back (in
 * that order: see reserve_slot). */
static void release_slot(syncq_po_system *sys, uint32_t i) {
  po_slot_ring_put(&sys->free_slots, i);
  SYNCQ_RACE_POINT("po.slot.freed");
  /* release: pairs with reserve_slot's acquire CAS. live is at least 1
   * (this slot's), so the high half is untouched. */
  atomic_fetch_sub_explicit(&sys->counts, 1u, memory_order_release);
}

/* The state word that frees p's slot: FREE, one generation on. */
static uint32_t next_free(const syncq_po_system *sys, syncq_po_pid pid) {
  return PO_WORD((po_gen_of(sys, pid) + 1) & sys->gen_mask, PO_FREE);
}

/* Ready slot i (taken by reserve_slot; `fresh`: never used) for a new process:
 * its mailbox, its pid. On failure the caller gives the slot back;
 * *drain_refused says the failure was the mailbox lock's refusal of a
 * reused slot's drain (another slot may do). */
static int prepare_slot(syncq_po_system *sys, uint32_t i, bool fresh, struct syncq_po_proc **out, bool *drain_refused) {
  *drain_refused = false;
  struct syncq_po_proc *p = &sys->procs[i];
  if (fresh) p->sys = sys;  /* its first use: the rest of a fresh record is zero (see table_map) */
  if (p->mailbox == NULL) { /* a first use, or a refused one's (its mailbox failed) */
    /* From the system's slab: freed with the system, as a mailbox lives
     * as long as it. A failed init leaves its object in the slab until
     * then. */
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
     * late sender may still add one, or be between its two steps
     * ("mpsc": what it hides stays behind it); po_take drops those by
     * their pid.
     * Under the mailbox's lock even so: such a sender (it read the old
     * process's RUNNING before that exit) may be linking one now. A lock
     * that refuses stops the drain: the new process would start on an
     * inbox holding the earlier ones' messages, so it does not start
     * here: the caller gives the slot back (the messages wait there for
     * a take whose drain the lock admits) and tries another slot. */
    syncq_po_msg *m;
    int r;
    while ((r = sys->mb->dequeue(p->mailbox, &m)) == SYNCQ_OK) po_drop(sys, p, m);
    if (r != SYNCQ_EMPTY && r != PO_MBOX_ON_ITS_WAY) {
      *drain_refused = true;
      return r;
    }
  }
  /* relaxed: the slot is FREE and ours; the word's last store (its free)
   * is ordered before by free_slots (or it is a fresh zero word). */
  uint32_t gen = PO_GEN(atomic_load_explicit(&p->state, memory_order_relaxed));
  p->pid = (syncq_po_pid)(gen << sys->slot_bits | i);
  /* A new process neither traps exits nor has been killed. Signals are
   * decided under spawn_lock, and only for a RUNNING pid: none reaches
   * the slot before the state's release store publishes these, and a
   * signal to the slot's last process was decided before that process's
   * exit finished (syncq_po_exit and links count themselves in nwatch, so
   * the exit takes the lock after them), which the free follows.
   * relaxed: published by that store. */
  p->trap = false;
  atomic_store_explicit(&p->doom, 0u, memory_order_relaxed);
  *out = p;
  return SYNCQ_OK;
}

/* A refusal after reserve_slot, before the state was published: the slot
 * goes back at its generation (no process had its pid), and it does not
 * count as started. relaxed: a count. */
static void give_back(syncq_po_system *sys, uint32_t i) {
  atomic_fetch_add_explicit(&sys->failed, 1u, memory_order_relaxed);
  release_slot(sys, i);
}

/* A prepared slot for a new process, spawned or attached, while fewer
 * than `limit` are live: SYNCQ_ELIMIT ("max_procs") at the limit, or
 * prepare_slot's failure with the slot given back. A reused slot whose
 * drain the mailbox's lock refuses goes back to the end of free_slots
 * and the next slot is taken instead, up to SYNCQ_PO_SPAWN_SLOT_TRIES
 * slots, each tried once: a take that brings back a slot already tried
 * (the free slots have come round: no other is free) stops, as does the
 * last try, answering the last refusal (the lock's status). Every take
 * given back counts in `failed` (a take that started no process). */
static int take_slot(syncq_po_system *sys, uint32_t limit, struct syncq_po_proc **out) {
  uint32_t tried[SYNCQ_PO_SPAWN_SLOT_TRIES];
  int refusal = SYNCQ_OK;
  for (uint32_t n = 0;; n++) {
    uint32_t i;
    bool fresh, refused;
    if (!reserve_slot(sys, limit, &i, &fresh)) {
      if (refusal != SYNCQ_OK) return refusal; /* the slots we gave back went to other takes */
      set_limit(sys, "max_procs");
      return SYNCQ_ELIMIT;
    }
    for (uint32_t k = 0; k < n; k++) {
      if (tried[k] == i) {
        give_back(sys, i);
        return refusal;
      }
    }
    int r = prepare_slot(sys, i, fresh, out, &refused);
    if (r == SYNCQ_OK) return SYNCQ_OK;
    give_back(sys, i);
    if (!refused || n + 1 == SYNCQ_PO_SPAWN_SLOT_TRIES) return r;
    tried[n] = i;
    refusal = r;
  }
}

/* The notices of p's exit: its monitors, links and name. */
static void notify_watchers(struct syncq_po_proc *p) {
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
    /* An exit has nobody to answer: a down message that memory or the
     * watcher's mailbox lock refuses is lost (po.h, syncq_po_monitor). */
    (void)po_post(sys, p, list->watcher, SYNCQ_PO_DOWN, &d, sizeof d, p->pid);
    free(list);
    list = next;
  }
}

/* A spawned process has exited and its notices are out: one fewer for
 * syncq_po_wait_exited; the last wakes its sleepers. seq_cst (all
 * three), with the waiter's announcement in exit_waiters and its loads
 * of exit_epoch and running: either the waiter's load of running comes
 * after our decrement in their total order (it sees 0), or our load of
 * exit_waiters comes after its increment (we wake it, and its futex
 * wait finds exit_epoch moved on from the value it read). The system
 * outlives these touches: destroy joins every exited thread and fiber
 * (or waits for detached_held) first. */
#define RUNNING_OF(w) ((uint32_t)(w))
#define SHUTDOWN_ONE ((uint64_t)1 << 32)
static void exited(syncq_po_system *sys) {
  if (RUNNING_OF(atomic_fetch_sub(&sys->running, 1u)) != 1u) return;
  atomic_fetch_add(&sys->exit_epoch, 1u);
  if (atomic_load(&sys->exit_waiters) != 0) (void)syncq_futex_wake(&sys->exit_epoch, INT_MAX, false);
}

void po_exit_notify(struct syncq_po_proc *p) {
  /* Read before the notices: a spawned process's own flag (its slot is
   * freed only after this call: by its joiner, or by
   * po_release_detached). */
  bool spawned = p->spawned;
  notify_watchers(p);
  if (spawned) exited(p->sys);
}

void po_release_detached(struct syncq_po_proc *p) {
  syncq_po_system *sys = p->sys;
  /* release: pairs with a sender's acquire load (it then reads nothing of
   * the old process). Nobody else writes a detached process's word. */
  atomic_store_explicit(&p->state, next_free(sys, p->pid), memory_order_release);
  release_slot(sys, po_slot_of(sys, p->pid));
  /* release: pairs with destroy's acquire load (the slot's last writes). */
  atomic_fetch_sub_explicit(&sys->detached_held, 1u, memory_order_release);
}

/* The thread backend's process running on this thread (join refuses a
 * process joining itself by it: the id in its record may be a later
 * process's while join looks). */
static _Thread_local struct syncq_po_proc *thread_self;

static void *trampoline(void *arg) {
  struct syncq_po_proc *p = arg;
  p->owner = pthread_self();
  thread_self = p;
  /* Written before pthread_create, which orders it for this thread; read
   * before the exit, after which a joiner (not a detached one's) may free
   * and reuse the slot. */
  bool detached = p->detached;
  p->fn(p, p->arg);
  po_state_exit(p); /* RUNNING -> EXITED, a joiner's claim kept */
  po_exit_notify(p);
  thread_self = NULL;
  if (detached) po_release_detached(p); /* the thread was created detached: nothing else to wait for */
  return NULL;
}

/* A spawn whose thread or fiber could not be made, after its RUNNING
 * store: a sender may have seen the pid (and a joiner guessing it claimed
 * it: it sees the word move on and answers SYNCQ_ENOENT), so the slot
 * moves on a generation, as after an exit. */
static void unspawn(syncq_po_system *sys, struct syncq_po_proc *p, bool detached) {
  p->spawned = false;
  p->detached = false;
  atomic_store_explicit(&p->is_fiber, false, memory_order_relaxed); /* relaxed: ordered by the store below */
  /* release: as in po_release_detached. */
  atomic_store_explicit(&p->state, next_free(sys, p->pid), memory_order_release);
  if (detached) atomic_fetch_sub_explicit(&sys->detached_held, 1u, memory_order_relaxed); /* ours: counted above */
  exited(sys); /* it never ran: counted in spawn, given back as an exit would */
  give_back(sys, po_slot_of(sys, p->pid));
}

static int spawn(syncq_po_system *sys, syncq_po_fn fn, void *arg, syncq_po_pid *pid, bool detached) {
  if (sys == NULL || fn == NULL) return SYNCQ_EINVAL;
  struct syncq_po_proc *p;
  int r = take_slot(sys, sys->max_procs, &p);
  if (r != SYNCQ_OK) return r;
  /* The pid, read while the slot is surely this process's: a detached
   * one may exit and its slot be reused once it is made. */
  syncq_po_pid self_pid = p->pid;
  p->fn = fn;
  p->arg = arg;
  p->exit_reason = 0;
  p->spawned = true;
  p->detached = detached;
  /* relaxed: published by the state's release store below. */
  atomic_store_explicit(&p->is_fiber, sys->fibers, memory_order_relaxed);
  /* Before its exit can release it (destroy waits for the count). */
  if (detached) atomic_fetch_add_explicit(&sys->detached_held, 1u, memory_order_relaxed);
  /* The state is RUNNING before the process starts, so a process that
   * sends to itself (or is sent to) right away finds itself alive.
   * release: with pthread_create (or the run queue's push), publishes the
   * mailbox to the child and to whoever learns the pid from it (acquire
   * load of state in send). */
  atomic_store_explicit(&p->state, PO_WORD(po_gen_of(sys, self_pid), PO_RUNNING) | (detached ? 0u : PO_JOINABLE),
                        memory_order_release);
  /* Counted as running before it can run (and exit), and after the
   * store of RUNNING: seq_cst (writing the count and reading the
   * shutdowns under way), as in exited(), and with shutdown's RMW before
   * its look at the slots: RMWs of the word are totally ordered, so
   * either this one reads the shutdown's count (and kills the process
   * below), or the shutdown's reads ours, synchronizes with it and its
   * look sees this process RUNNING (and kills it). */
  bool closing = atomic_fetch_add(&sys->running, 1u) >= SHUTDOWN_ONE;
  if (sys->fibers) {
    /* No stack yet: the scheduler that first runs it takes one (a
     * growing pool then stalls no spawn), and a process that cannot have
     * one exits with SYNCQ_PO_EXIT_NOMEM (fiber_sched.c, first_run). */
    po_fiber_spawn(sys->fiber_rt, p);
  } else {
    pthread_attr_t attr;
    pthread_t detached_tid; /* nobody joins it: not in the record, which its exit may hand on */
    int e = pthread_attr_init(&attr);
    if (e == 0) e = pthread_attr_setstacksize(&attr, sys->stack_size);
    if (e == 0) e = pthread_attr_setguardsize(&attr, sys->guard_size);
    if (e == 0 && detached) e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (e == 0) e = pthread_create(detached ? &detached_tid : &p->tid, &attr, trampoline, p);
    pthread_attr_destroy(&attr);
    if (e != 0) {
      unspawn(sys, p, detached);
      set_limit(sys, po_limit_of(e));
      return e == EINVAL ? SYNCQ_EINVAL : SYNCQ_ELIMIT;
    }
  }
  /* A joinable process's slot stays its own until a joiner frees it, and
   * no joiner reads its fiber or thread before PO_MADE: an RMW (its exit
   * may be storing EXITED, a joiner PO_CLAIMED). release: pairs with the
   * joiner's acquire load of the word (the fiber's done word and join
   * fields as po_fiber_spawn left them, the thread's id). */
  if (!detached) atomic_fetch_or_explicit(&p->state, PO_MADE, memory_order_release);
  if (sys->fibers) po_fiber_spawned(sys->fiber_rt); /* the wake-up */
  /* A spawn while a shutdown is under way: the process starts killed
   * (made first: the kill wakes it as any process). */
  if (closing) (void)po_kill(sys, self_pid);
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
  struct syncq_po_proc *p;
  int r = take_slot(sys, sys->nslots, &p);
  if (r != SYNCQ_OK) return r;
  p->spawned = false;
  p->detached = false;
  atomic_store_explicit(&p->is_fiber, false, memory_order_relaxed); /* relaxed: as in spawn */
  p->exit_reason = 0;
  p->owner = pthread_self();
  /* release: pairs with the senders' acquire load of the state. No
   * PO_JOINABLE: join answers SYNCQ_EINVAL. */
  atomic_store_explicit(&p->state, PO_WORD(po_gen_of(sys, p->pid), PO_RUNNING), memory_order_release);
  *self = p;
  return SYNCQ_OK;
}

int syncq_po_detach(syncq_po_proc *self) {
  if (self == NULL || self->spawned) return SYNCQ_EINVAL;
  syncq_po_system *sys = self->sys;
  uint32_t expect = PO_WORD(po_gen_of(sys, self->pid), PO_RUNNING);
  /* release: as in trampoline. Only the owner detaches: no other thread
   * changes the word while it is RUNNING (no flags: attached). */
  if (!atomic_compare_exchange_strong_explicit(&self->state, &expect, PO_WORD(PO_GEN(expect), PO_EXITED),
                                               memory_order_release, memory_order_relaxed))
    return SYNCQ_EINVAL;
  po_exit_notify(self); /* before the slot can be reused */
  /* release: as in po_release_detached. */
  atomic_store_explicit(&self->state, next_free(sys, self->pid), memory_order_release);
  release_slot(sys, po_slot_of(sys, self->pid));
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
  /* relaxed: counts (every process started took one slot, fresh or from
   * free_slots; one that then failed is counted in failed). */
  syncq_po_system *s = (syncq_po_system *)sys;
  uint64_t taken =
    COUNT_HIGH(atomic_load_explicit(&s->counts, memory_order_relaxed)) + po_slot_ring_taken(&s->free_slots);
  uint64_t failed = atomic_load_explicit(&s->failed, memory_order_relaxed);
  uint64_t n = taken > failed ? taken - failed : 0;
  return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

uint32_t syncq_po_live(const syncq_po_system *sys) {
  if (sys == NULL) return 0;
  /* relaxed: a count (with the slots of spawns under way). */
  return COUNT_LIVE(atomic_load_explicit(&((syncq_po_system *)sys)->counts, memory_order_relaxed));
}

uint32_t syncq_po_pid_generations(const syncq_po_system *sys) { return sys != NULL ? sys->gen_mask + 1 : 0; }

/* Is the caller the process p (it cannot join itself)? Addresses only:
 * p's fields may be a later process's while join looks. */
static bool is_self(const syncq_po_system *sys, const struct syncq_po_proc *p) {
  return sys->fibers ? po_fiber_current() == &p->fiber : thread_self == p;
}

int syncq_po_join(syncq_po_system *sys, syncq_po_pid pid) {
  if (sys == NULL || pid < 0 || po_slot_of(sys, pid) >= sys->nslots) return SYNCQ_EINVAL;
  uint32_t i = po_slot_of(sys, pid), g = po_gen_of(sys, pid);
  struct syncq_po_proc *p = &sys->procs[i];
  uint32_t freed = next_free(sys, pid);
  /* acquire: pairs with the spawner's release of PO_MADE (what
   * po_fiber_done and po_fiber_join read) and the exit's release. */
  uint32_t w = atomic_load_explicit(&p->state, memory_order_acquire);
  for (;;) {
    /* Every answer is decided on w, a word the CAS below checks is still
     * there (a generation comes back only after gen_mask + 1 reuses, when
     * the pid's value names the slot's process again). */
    if (PO_GEN(w) != g || PO_ST(w) == PO_FREE || (w & PO_CLAIMED) != 0)
      return SYNCQ_ENOENT; /* not had yet, stale, or claimed by another joiner */
    if ((w & PO_JOINABLE) == 0 || is_self(sys, p))
      return SYNCQ_EINVAL; /* attached, detached (its exit frees the slot), or the caller itself */
    if (sys->fibers && (w & PO_MADE) != 0 && PO_ST(w) == PO_EXITED && po_fiber_done(p)) {
      /* A fiber that is gone already (a parent joining a child whose reply
       * it has: the common case): one CAS frees the slot, a concurrent
       * joiner's CAS then fails and it sees the next generation.
       * release: pairs with the senders' acquire load (they read nothing
       * of the old process); acquire on failure: as the load above. */
      if (atomic_compare_exchange_strong_explicit(&p->state, &w, freed, memory_order_release, memory_order_acquire)) {
        release_slot(sys, i);
        return SYNCQ_OK;
      }
      /* acquire (both): as the load above. */
    } else if (atomic_compare_exchange_strong_explicit(&p->state, &w, w | PO_CLAIMED, memory_order_acquire,
                                                       memory_order_acquire)) {
      break; /* claimed: a second joiner gets SYNCQ_ENOENT; only we free the slot */
    }
  }
  SYNCQ_RACE_POINT("po.join.claimed");
  while ((w & PO_MADE) == 0) { /* its spawn is still making the fiber or thread */
    syncq_yield();
    w = atomic_load_explicit(&p->state, memory_order_acquire);      /* acquire: as above */
    if (PO_GEN(w) != g || PO_ST(w) == PO_FREE) return SYNCQ_ENOENT; /* that failed: no process had the pid */
  }
  int r;
  if (sys->fibers) r = po_fiber_join(p);
  else r = pthread_join(p->tid, NULL) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
  /* release: as the CAS above. Ours alone now: the process has exited
   * and its spawner set PO_MADE. */
  atomic_store_explicit(&p->state, freed, memory_order_release);
  release_slot(sys, i);
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

/* Is the caller a spawned process of sys (a fiber of its, or the thread
 * of one of its thread processes)? */
static bool is_spawned_of(const syncq_po_system *sys) {
  po_fiber *f = po_fiber_current();
  if (f != NULL) return SYNCQ_FL_CONTAINER(f, struct syncq_po_proc, fiber)->sys == sys;
  return thread_self != NULL && thread_self->sys == sys;
}

/* Sleep until sys->running is 0 or `due` (syncq_now_ns time; UINT64_MAX:
 * no deadline) has passed. */
static int wait_exited(syncq_po_system *sys, uint64_t due) {
  /* seq_cst: as in exited(). */
  if (RUNNING_OF(atomic_load(&sys->running)) == 0) return SYNCQ_OK;
  if (due != UINT64_MAX && syncq_now_ns() >= due) return SYNCQ_ETIMEDOUT;
  /* A fiber of another system sleeps its scheduler thread: announced as
   * a blocking call, so its queue goes to a spare scheduler at once. */
  po_fiber *f = po_fiber_current();
  syncq_po_proc *fiber = f != NULL ? SYNCQ_FL_CONTAINER(f, struct syncq_po_proc, fiber) : NULL;
  bool bracket = fiber != NULL && syncq_po_blocking_begin(fiber) == SYNCQ_OK;
  int r = SYNCQ_OK;
  atomic_fetch_add(&sys->exit_waiters, 1u); /* seq_cst: as in exited() */
  for (;;) {
    uint32_t seen = atomic_load(&sys->exit_epoch);          /* seq_cst: as in exited() */
    if (RUNNING_OF(atomic_load(&sys->running)) == 0) break; /* seq_cst: as in exited() */
    int64_t left = -1;
    if (due != UINT64_MAX) {
      uint64_t now = syncq_now_ns();
      if (now >= due) {
        r = SYNCQ_ETIMEDOUT;
        break;
      }
      left = due - now > (uint64_t)INT64_MAX ? -1 : (int64_t)(due - now);
    }
    (void)syncq_futex_wait(&sys->exit_epoch, seen, left, false);
  }
  atomic_fetch_sub(&sys->exit_waiters, 1u); /* seq_cst: as in exited() */
  if (bracket) (void)syncq_po_blocking_end(fiber);
  return r;
}

static uint64_t deadline(uint64_t timeout_ns) {
  if (timeout_ns == UINT64_MAX) return UINT64_MAX;
  uint64_t now = syncq_now_ns();
  return timeout_ns >= UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

int syncq_po_wait_exited(syncq_po_system *sys, uint64_t timeout_ns) {
  if (sys == NULL || is_spawned_of(sys)) return SYNCQ_EINVAL;
  return wait_exited(sys, deadline(timeout_ns));
}

int syncq_po_shutdown(syncq_po_system *sys, uint64_t timeout_ns) {
  if (sys == NULL || is_spawned_of(sys)) return SYNCQ_EINVAL;
  uint64_t due = deadline(timeout_ns);
  /* seq_cst RMW: see spawn's count. From here a spawn's process starts
   * killed. */
  atomic_fetch_add(&sys->running, SHUTDOWN_ONE);
  /* seq_cst: after the RMW above (a slot a spawn took before it is below
   * high, or that spawn sees the shutdown). */
  uint32_t n = COUNT_HIGH(atomic_load(&sys->counts));
  for (uint32_t i = 0; i < n; i++) {
    uint32_t w = atomic_load(&sys->procs[i].state); /* seq_cst: as above */
    if (PO_ST(w) == PO_RUNNING) (void)po_kill(sys, (syncq_po_pid)(PO_GEN(w) << sys->slot_bits | i));
  }
  int r = wait_exited(sys, due);
  atomic_fetch_sub(&sys->running, SHUTDOWN_ONE); /* seq_cst: as above */
  return r;
}

int syncq_po_destroy(syncq_po_system *sys) {
  if (sys == NULL) return SYNCQ_EINVAL;
  /* relaxed: the caller has seen every spawn return (destroy follows
   * them), which orders the slots they took. */
  uint32_t n = COUNT_HIGH(atomic_load_explicit(&sys->counts, memory_order_relaxed));
  for (uint32_t i = 0; i < n; i++) /* acquire: pairs with the release store of PO_EXITED. */
    if (PO_ST(atomic_load_explicit(&sys->procs[i].state, memory_order_acquire)) == PO_RUNNING) return SYNCQ_EBUSY;
  /* Detached processes that have exited are on their way out (their
   * thread's last steps, their fiber's stack going back to the pool):
   * wait until every one has freed its slot. acquire: pairs with
   * po_release_detached's release decrement. */
  while (atomic_load_explicit(&sys->detached_held, memory_order_acquire) != 0) syncq_yield();
  for (uint32_t i = 0; i < n; i++) {
    struct syncq_po_proc *p = &sys->procs[i];
    /* relaxed: read after the acquire loop, nothing else to see. */
    uint32_t w = atomic_load_explicit(&p->state, memory_order_relaxed);
    if ((w & PO_JOINABLE) != 0 && (w & PO_CLAIMED) == 0 && PO_ST(w) == PO_EXITED) { /* exited, never joined */
      atomic_store_explicit(&p->state, w | PO_CLAIMED, memory_order_relaxed);       /* relaxed: nobody else looks now */
      if (p->is_fiber) (void)po_fiber_join(p); /* it has exited: waits only for its stack to be released */
      else pthread_join(p->tid, NULL);
    }
  }
  /* every fiber is done: stop the schedulers (their pending timers go too) */
  if (sys->fibers) po_fiber_rt_destroy(sys->fiber_rt);
  po_timer_thread_destroy(&sys->timers, sys); /* send_after's pending messages of a thread system */
  /* Slots below `high` (a refused spawn's too: taken, then given back);
   * the others were never touched. */
  uint32_t used = n;
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
    /* Its memory goes with the slab; a system without a free list has the
     * mailbox free what its inbox still holds, without the lock (which
     * may refuse): no sender can reach an inbox now. A sender is a
     * process inside send, po_deliver or po_post: every process has
     * exited (none RUNNING above; an attached one detached), the exited
     * ones are joined, and the schedulers and the timer thread, whose
     * timers deliver, are stopped. */
    sys->mb->destroy(p->mailbox, sys);
  }
  po_headers_destroy(sys); /* their payloads, then the headers themselves */
  po_slab_destroy(&sys->mailboxes);
  po_names_destroy(sys);
  pthread_mutex_destroy(&sys->spawn_lock);
  table_unmap(sys, used);
  po_slot_ring_destroy(&sys->free_slots);
  free(sys);
  return SYNCQ_OK;
}
