/* SPDX-License-Identifier: BSD-2-Clause */
/* po_internal.h — the postoffice's private structures: processes, the
 * system, and the mailbox algorithms' ops table.
 *
 * The files of src/po in layers, bottom first: a file calls functions of
 * its own layer's helpers and of the layers below, never of one above
 * (tests/docs/structure_test.py checks that no two files call each other
 * in a circle). Where a lower layer must act on an upper one's data (a
 * timer fires a delivery, a fiber's exit notifies its monitors) it calls
 * through the system's upcalls (po_upcalls below), set by process.c.
 *
 *   1  limit.c          which system limit refused a thread or mapping
 *      slab.c           objects of one size, freed all at once
 *      fiber_current.c  the fiber running on this thread
 *      slot_ring.c      the process table's free slots, oldest first
 *   2  header.c         the type-stable message headers (on slab.c)
 *      fiber_stack.c    pooled fiber stacks, the overflow report
 *      timer.c          deadline heaps and the thread system's timer thread
 *   3  mbox_mutex.c     the single-lock mailbox; mbox_ttas.c and
 *                       mbox_mutex_nofree.c on it; mbox_nonblocking.c,
 *                       mbox_two_lock.c, mbox_mpsc.c
 *      fiber_sched.c    schedulers, park and wake, fiber spawn and join
 *   4  postoffice.c     send, receive, wake, send_after, monitors
 *   5  links.c          links and exit signals
 *      names.c          registered names
 *   6  process.c        the system, its process table, spawn and exit
 */
#ifndef SYNCQ_PO_INTERNAL_H
#define SYNCQ_PO_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "fiber_internal.h"
#include "slot_ring.h"
#include "timer.h"
#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/po.h"

struct po_mailbox_ops;

/* A slot's state word: its generation (the high bits of the pids it has
 * handed out) times 32, three flags, and one of the states. One word, so
 * a sender reads "this generation, running" in one load, and a join
 * checks the generation and claims the process in one CAS. It fits: a
 * table has at least SYNCQ_PO_ATTACH_RESERVE + 1 slots, so the slot
 * takes at least 5 of a pid's 31 bits and the generation at most 26. */
enum { PO_FREE = 0, PO_RUNNING = 1, PO_EXITED = 2 };
#define PO_JOINABLE 4u /* spawned, not detached (set with RUNNING at spawn) */
#define PO_MADE 8u     /* ... and its thread or fiber is made: join may read it */
#define PO_CLAIMED 16u /* ... and a joiner has it (a second one gets SYNCQ_ENOENT) */
#define PO_WORD(gen, st) ((uint32_t)(gen) << 5 | (uint32_t)(st))
#define PO_ST(w) ((w)&3u)
#define PO_GEN(w) ((w) >> 5)

struct syncq_po_proc {
  /* The first cache line holds what a message hop touches: the state and
   * mailbox every sender reads, and a fiber's park state and context (a
   * sender's RMW, the scheduler's resume). Written by senders too, but
   * every hop touches all of it anyway: one line, not three. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) state; /* PO_WORD(generation, PO_FREE/RUNNING/EXITED) */
  syncq_po_pid pid;                                /* of the slot's current (or last) process: slot | generation */
  /* A spawned process of a fiber system. Atomic because a late sender
   * holding a stale pid reads it while the slot is being reused; written
   * (relaxed) by spawn and attach before the state's release store. */
  _Atomic(bool) is_fiber;
  /* Written by the spawn or attach that takes the slot, before the state's
   * release store of RUNNING; read by the process itself, its scheduler
   * and destroy (join reads the state word's flags instead). */
  bool spawned;
  bool detached; /* spawned detached: its exit frees the slot */
  void *mailbox; /* the inbox, of sys->mb's algorithm */
  syncq_po_system *sys;
  /* A fiber process's park state, context and stack (fiber backend). */
  po_fiber fiber;
  syncq_po_fn fn;
  void *arg;
  pthread_t tid;   /* thread backend: the process's thread (joined) */
  pthread_t owner; /* a thread process: the thread that may recv (set at start or attach) */
  /* Pushed by the owner (free, recv's copy-out) and popped by copying senders. */
  SYNCQ_CACHELINE_ALIGNED syncq_freelist free;
  /* The eventcount of recv_blocking: written by senders when the owner sleeps. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint32_t) epoch;
  _Atomic(uint32_t) sleeping;
  /* The deadline of the process's own recv_timeout or sleep (a fiber's;
   * the owner's alone, except the heap's fields under its lock). */
  SYNCQ_CACHELINE_ALIGNED po_timer tmr;
  po_timers *tmr_heap; /* where tmr was added (NULL: not armed) */
  /* Monitors, links and the registered name of the slot's current
   * process (under sys->spawn_lock); nwatch counts them for the exit's
   * lock-free look (see po_exit_notify): an exit with none takes no lock. */
  struct po_monitor *monitors;
  struct po_link *links;
  struct po_name *name;
  _Atomic(uint32_t) nwatch;
  /* trap and doom: written under spawn_lock, and reset by the spawn or
   * attach that takes the slot before it publishes the process (no signal
   * to the slot's last process is still being decided then: a signaller
   * counts itself in nwatch, so that exit took the lock after it). */
  bool trap; /* traps exit signals (syncq_po_trap_exits) */
  /* An exit signal that kills: 0, or PO_DOOM_SET | (uint32_t)reason.
   * Written by the signal's sender (once per process: the first one
   * wins), read by the owner at its postoffice calls. */
  _Atomic(uint64_t) doom;
  int32_t exit_reason; /* the owner's; read by its exit */
};

#define PO_DOOM_SET ((uint64_t)1 << 32)

/* One end of a link: `pid` is the partner (each end holds one). */
typedef struct po_link {
  struct po_link *next;
  syncq_po_pid pid;
  int action;     /* the exit's decision for the partner (links.c) */
  int32_t reason; /* ... and the reason it carries */
} po_link;

/* A registered name (names.c): in a chain of sys->names. */
typedef struct po_name {
  struct po_name *next;
  syncq_po_pid pid;
  uint32_t hash;
  char text[SYNCQ_PO_NAME_MAX + 1];
} po_name;

typedef struct po_monitor {
  struct po_monitor *next;
  syncq_po_pid watcher;
  uint64_t ref;
} po_monitor;

/* Objects of one size, freed all at once (slab.c). */
struct po_slab_chunk;
typedef struct po_slab {
  size_t stride, align;
  _Atomic(struct po_slab_chunk *) cur; /* the chunk being carved */
  struct po_slab_chunk *chunks;        /* all of them (under grow) */
  size_t next_cap;                     /* the next chunk's objects (under grow) */
  pthread_mutex_t grow;
} po_slab;

/* A chunk of one caller's own (a scheduler thread's), carved with no
 * shared word: objs[next .. cap) are still free. Zeroed by
 * po_slab_cursor_init; valid for one slab, until its destroy. */
typedef struct po_slab_cursor {
  struct po_slab_chunk *chunk;
  char *objs;
  size_t next, cap;
} po_slab_cursor;

int po_slab_init(po_slab *s, size_t size, size_t align);
/* Free the chunks destroyed slabs left for later ones; the bytes freed. */
size_t po_slab_kept_trim(void);
void *po_slab_alloc(po_slab *s); /* NULL: out of memory */
void po_slab_cursor_init(po_slab_cursor *cur);
/* An object from cur's chunk, or from a new chunk that becomes cur's
 * (NULL: out of memory). One thread at a time per cursor. */
void *po_slab_alloc_local(po_slab *s, po_slab_cursor *cur);
/* Call fn on every object s has handed out (no allocation may run
 * meanwhile, and every allocator's writes must be visible: a joined
 * thread's). */
void po_slab_each(po_slab *s, void (*fn)(void *obj));
void po_slab_destroy(po_slab *s);

/* The entry points of upper layers that a lower file calls on their
 * data (see the layers above): set by process.c when it creates the
 * system; a call through them is off the message hop's path (a timer's
 * firing, a fiber's exit). */
typedef struct po_upcalls {
  /* A WAKE timer's deadline has come (timer.c): po_fiber_wake. */
  void (*wake)(struct syncq_po_proc *waker, struct syncq_po_proc *dst);
  /* A SEND timer's message is due (timer.c): po_deliver. */
  int (*deliver)(struct syncq_po_system *sys, syncq_po_pid to, syncq_po_msg *msg);
  /* A fiber has stored PO_EXITED (fiber_sched.c): po_exit_notify. */
  void (*exit_notify)(struct syncq_po_proc *p);
  /* A detached fiber's stack is back in the pool (fiber_sched.c):
   * po_release_detached. */
  void (*release_detached)(struct syncq_po_proc *p);
} po_upcalls;

struct syncq_po_system {
  const struct po_mailbox_ops *mb;
  const po_upcalls *up;       /* the upper layers' entry points (process.c) */
  bool fibers;                /* the fiber backend: spawned processes are fibers */
  po_fiber_rt *fiber_rt;      /* its schedulers (NULL: thread backend) */
  const syncq_lock_ops *lock; /* the mailbox's lock, from the lock registry (NULL: none) */
  size_t stack_size;
  size_t guard_size;
  uint32_t max_procs; /* most live processes (spawn's limit) */
  uint32_t nslots;    /* max_procs + SYNCQ_PO_ATTACH_RESERVE (attach's limit) */
  uint32_t slot_bits; /* a pid's low bits: its slot */
  uint32_t gen_mask;  /* generations wrap at gen_mask + 1 */
  /* Monitors, links, names and exit signals (not spawn's or join's slot
   * work: that is lock-free, process.c). */
  pthread_mutex_t spawn_lock;
  /* What every spawn and join updates, on a line of its own (not the
   * fields above, which every send reads). `counts`: the slots reserved
   * now (live: the low 32 bits) and the slots ever taken (high: the high
   * 32 bits, 0 .. nslots), so a spawn reserves and takes a never-used
   * slot in one CAS, and high - live slots wait in free_slots (or in a
   * put in flight); a free gives its count back after its slot is in
   * free_slots. Processes started are high + free_slots' takes - failed. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(uint64_t) counts;
  _Atomic(uint64_t) failed;        /* slots taken by spawns or attaches that then failed */
  _Atomic(uint32_t) detached_held; /* detached processes whose slot is not yet freed */
  /* One word, so a spawn counts its process and looks for a shutdown in
   * one RMW: the low 32 bits, spawned processes (detached or not) that
   * have not yet exited (syncq_po_wait_exited): counted by the spawn
   * after it publishes RUNNING and before the process can run, given
   * back at the end of the exit's notices (po_exit_notify); the high 32
   * bits, syncq_po_shutdown calls under way (a spawn's process then
   * starts killed). */
  _Atomic(uint64_t) running;
  _Atomic(uint32_t) exit_epoch;   /* the waiters' futex word: bumped when running reaches 0 */
  _Atomic(uint32_t) exit_waiters; /* threads in syncq_po_wait_exited's futex wait */
  _Atomic(uint64_t) next_ref;     /* monitor references */
  po_slot_ring free_slots;        /* freed slots, oldest first (slot_ring.c) */
  po_slab mailboxes;              /* the slots' mailboxes (taken at a slot's first use) */
  po_slab headers;                /* the type-stable headers (po_header_new) */
  _Atomic(const char *) limit_reason;
  po_timer_thread timers; /* thread backend: send_after's heap and thread */
  po_name **names;        /* registered names: [nnames_buckets] chains (spawn_lock) */
  uint32_t names_buckets, nnames;
  struct syncq_po_proc *procs; /* [nslots], one mapping (table_map in process.c) */
  size_t procs_len;
};

/* One mailbox algorithm. The inbox has many producers (senders) and one
 * consumer (its owner). */
typedef struct po_mailbox_ops {
  const char *name;
  const char *title;
  const char *paper;
  const char *lock_name; /* lock taken from the registry, or NULL */
  bool free_list;        /* false: get allocates and free releases (no free list) */
  size_t size, align;    /* of the mailbox */
  /* init may take a dummy header with po_header_new (returns SYNCQ_ENOMEM). */
  int (*init)(void *mb, syncq_po_system *sys);
  /* Called when no other thread can reach the inbox (the system's
   * destroy, or an init that the slot then gave up): where free_list is
   * false it frees the messages still linked (their headers are malloc's,
   * not the system's), taking no lock, so a lock that refuses leaks none. */
  void (*destroy)(void *mb, syncq_po_system *sys);
  /* SYNCQ_OK: m is linked. A lock-based mailbox whose lock refuses
   * answers the lock's status (SYNCQ_ESYS from a failing pthread mutex;
   * a lock of fixed places would say SYNCQ_ELIMIT): m is not linked and
   * is still the caller's. */
  int (*enqueue)(void *mb, syncq_po_msg *m);
  /* SYNCQ_OK with *out, or SYNCQ_EMPTY (no message, and none on its
   * way); PO_MBOX_ON_ITS_WAY ("mpsc" only: a sender is between its two
   * steps, so nothing can be taken although the inbox is not empty); or
   * the lock's status, as in enqueue (the inbox not read). Never
   * allocates. */
  int (*dequeue)(void *mb, syncq_po_msg **out);
} po_mailbox_ops;

/* A dequeue's answer, never a syncq_status: a message is on its way (its
 * sender is between the two steps of a send), none can be taken yet.
 * syncq_po_try_recv reports it as SYNCQ_EBUSY; a receive that waits
 * waits on as for SYNCQ_EMPTY (the sender's wake-up follows its link). */
#define PO_MBOX_ON_ITS_WAY 0x100

extern const po_mailbox_ops po_mailbox_mutex;
extern const po_mailbox_ops po_mailbox_nonblocking;
extern const po_mailbox_ops po_mailbox_ttas;
extern const po_mailbox_ops po_mailbox_two_lock;
extern const po_mailbox_ops po_mailbox_mutex_nofree;
extern const po_mailbox_ops po_mailbox_mpsc;

/* The slot a pid names (may be >= nslots: check), and its generation. */
static inline uint32_t po_slot_of(const syncq_po_system *sys, syncq_po_pid pid) {
  return (uint32_t)pid & ((1u << sys->slot_bits) - 1u);
}
static inline uint32_t po_gen_of(const syncq_po_system *sys, syncq_po_pid pid) {
  return (uint32_t)pid >> sys->slot_bits;
}
/* Where a pid stands against its slot's state word w: SYNCQ_OK (w is that
 * process, running), SYNCQ_EDEAD (it has exited, or the slot has moved on
 * to a later generation), SYNCQ_ENOENT (no process has had it yet). */
static inline int po_pid_status(const syncq_po_system *sys, syncq_po_pid pid, uint32_t w) {
  uint32_t g = po_gen_of(sys, pid), cur = PO_GEN(w);
  if (g == cur) return PO_ST(w) == PO_RUNNING ? SYNCQ_OK : PO_ST(w) == PO_EXITED ? SYNCQ_EDEAD : SYNCQ_ENOENT;
  /* The nearer way round the generation circle: behind the slot is stale. */
  uint32_t behind = (cur - g) & sys->gen_mask;
  return behind != 0 && behind <= (sys->gen_mask >> 1) + 1 ? SYNCQ_EDEAD : SYNCQ_ENOENT;
}

/* Take the next message addressed to self's current pid from its inbox,
 * dropping (back to the free list) any sent to an earlier process of the
 * slot. SYNCQ_OK with *out, or SYNCQ_EMPTY; PO_MBOX_ON_ITS_WAY (a
 * message on its way: po_mailbox_ops.dequeue); SYNCQ_EKILLED; or the
 * status of a mailbox lock that refused. */
int po_look(struct syncq_po_proc *self, syncq_po_msg **out);
/* po_look for a receive that waits: PO_MBOX_ON_ITS_WAY becomes
 * SYNCQ_EMPTY (the sender wakes the receiver once it has linked). */
int po_take(struct syncq_po_proc *self, syncq_po_msg **out);
/* A message that will not be delivered goes back to p's free list (or is
 * freed: "mutex-nofree"). */
void po_drop(syncq_po_system *sys, struct syncq_po_proc *p, syncq_po_msg *m);

/* The process p (running) has returned: RUNNING becomes EXITED, its flags
 * kept (a joiner may be setting PO_CLAIMED, the spawner PO_MADE, at the
 * same time: an add, not a store). release: pairs with the senders'
 * acquire load of the state (SYNCQ_EDEAD), a joiner's and destroy's. */
static inline void po_state_exit(struct syncq_po_proc *p) {
  atomic_fetch_add_explicit(&p->state, (uint32_t)(PO_EXITED - PO_RUNNING), memory_order_release);
}

/* A process has just stored PO_EXITED: tell its monitors and links, drop
 * its name (process.c; the scheduler calls it through sys->up). */
void po_exit_notify(struct syncq_po_proc *p);
/* A detached process is gone for good (its thread returns next; its
 * fiber's stack is back in the pool): free its slot for reuse
 * (process.c; lock-free; the scheduler calls it through sys->up). */
void po_release_detached(struct syncq_po_proc *p);

/* Is the caller the process `self` (the only one allowed to take from its
 * inbox)? A fiber process: the fiber running here; a thread process: the
 * thread that started it or attached it. */
static inline bool po_is_caller(const struct syncq_po_proc *self) {
  if (self->is_fiber) return po_fiber_current() == &self->fiber;
  return pthread_equal(self->owner, pthread_self()) != 0;
}

/* Has an exit signal killed the process? Its owner asks at every
 * postoffice call that waits or acts on others (and signallers under
 * spawn_lock, where every store of doom is made but a new process's
 * reset to 0, before it is published). relaxed: the word
 * carries its reason itself; an owner asleep or parked sees it through
 * the wake-up's RMW that follows the store (po_wake), as it sees a
 * message. */
static inline bool po_killed(const struct syncq_po_proc *self) {
  return atomic_load_explicit(&((struct syncq_po_proc *)self)->doom, memory_order_relaxed) != 0;
}

/* Wake `to` if it sleeps or is parked: a message or an exit signal is
 * there for it (postoffice.c). `from`: the waking process, or NULL. */
void po_wake(struct syncq_po_proc *from, struct syncq_po_proc *to);

/* Links and exit signals (links.c), under spawn_lock: the exiting p takes
 * its links (removing the partners' ends) and decides each partner's
 * signal with reason; po_links_exit_finish delivers them after unlock
 * and frees the list. */
po_link *po_links_exit_locked(struct syncq_po_proc *p, int32_t reason);
void po_links_exit_finish(struct syncq_po_proc *p, po_link *list);
/* Kill pid with an exit signal of reason SYNCQ_PO_EXIT_KILL from no
 * process (links.c; syncq_po_shutdown): untrappable, its reason
 * SYNCQ_PO_EXIT_KILLED, the first killing signal's reason standing. The
 * calling thread's own attached process is spared. Takes spawn_lock.
 * true: this call killed it (doom set, woken). */
bool po_kill(syncq_po_system *sys, syncq_po_pid pid);
/* Names (names.c): drop p's name under spawn_lock; free the table. */
void po_names_exit_locked(struct syncq_po_proc *p);
void po_names_destroy(syncq_po_system *sys);
/* Post a message of `type` with len bytes of data to `to`, its header
 * taken from `from`'s free list, sender `sender` (postoffice.c); dropped
 * when `to` is gone, memory is short or `to`'s mailbox lock refuses.
 * SYNCQ_OK: posted; else SYNCQ_ENOMEM or po_deliver's status. */
int po_post(syncq_po_system *sys, struct syncq_po_proc *from, syncq_po_pid to, uint32_t type, const void *data,
            size_t len, syncq_po_pid sender);

/* The limit behind a failed thread or mapping creation (errno err): the
 * names of syncq_po_limit_reason() (limit.c). */
const char *po_limit_of(int err);

/* A new type-stable header of sys (payload empty), from the shared slab
 * (any thread); NULL when memory is short (header.c). */
syncq_po_msg *po_header_new(syncq_po_system *sys);
/* A fiber scheduler's headers (header.c), its thread's alone: free ones
 * (a bounded LIFO, the newest last) and its own slab chunk. Zero bytes
 * are an empty cache. */
enum { PO_HDR_CACHE = 64 };
typedef struct po_header_cache {
  po_slab_cursor slab;
  uint32_t n;
  syncq_po_msg *free[PO_HDR_CACHE];
} po_header_cache;
/* A free header from c, else a new one from c's slab chunk (payload
 * empty); NULL when memory is short. */
syncq_po_msg *po_header_take(syncq_po_system *sys, po_header_cache *c);
/* The header cache of the scheduler running the calling fiber, when that
 * fiber is a process of sys; NULL on a plain thread, on a scheduler
 * between fibers, or for another system's headers. Valid until the
 * fiber next switches (the scheduler's after_switch sets hdrs). */
static inline po_header_cache *po_header_cache_here(const syncq_po_system *sys) {
  po_fiber *f = po_fiber_current();
  if (f == NULL) return NULL;
  return SYNCQ_FL_CONTAINER(f, struct syncq_po_proc, fiber)->sys == sys ? f->hdrs : NULL;
}
/* Keep a free header of sys in c: false when c is full. */
bool po_header_keep(po_header_cache *c, syncq_po_msg *m);
/* At destroy, every process joined and every scheduler stopped: free
 * the payload buffers of every header sys has had, then the headers. */
void po_headers_destroy(syncq_po_system *sys);
/* Zero a header and initialise its atomic links (every header's first
 * state, whichever allocator gave it); its payload is the inline one. */
void po_header_clear(syncq_po_msg *m);
/* Free a header's payload buffer unless it is the inline one. */
void po_payload_free(syncq_po_msg *m);

/* The single-lock queue of 002 Algorithms 3-4, shared by "mutex", "ttas" and
 * "mutex-nofree" (which differ in their lock and in the free list). */
typedef struct po_lock1_mailbox {
  SYNCQ_CACHELINE_ALIGNED syncq_po_msg *head;
  syncq_po_msg *tail;
  const syncq_lock_ops *lock_ops;
  void *lock;
} po_lock1_mailbox;
int po_lock1_init(void *mb, syncq_po_system *sys);
void po_lock1_destroy(void *mb, syncq_po_system *sys);
int po_lock1_enqueue(void *mb, syncq_po_msg *m);
int po_lock1_dequeue(void *mb, syncq_po_msg **out);
/* The storage and queue functions of a po_mailbox_ops built on it: the
 * three differ only in name, lock and free list. */
#define PO_LOCK1_MAILBOX_OPS                                                                    \
  .size = sizeof(po_lock1_mailbox), .align = _Alignof(po_lock1_mailbox), .init = po_lock1_init, \
  .destroy = po_lock1_destroy, .enqueue = po_lock1_enqueue, .dequeue = po_lock1_dequeue

/* Copy-out of the dummy-node queues: `fresh` (the old dummy, now out of
 * the queue) takes the holder's fields of `node` (the new dummy), and the
 * two exchange payload buffers, so the payload bytes are not copied;
 * but a buffer inside a header stays with its header: an inline payload
 * (at most SYNCQ_PO_INLINE_MSG bytes) is copied into fresh's, and a
 * separate buffer of fresh's passes to node. */
static inline void po_copy_out(syncq_po_msg *fresh, syncq_po_msg *node) {
  fresh->type = node->type;
  fresh->sender = node->sender;
  fresh->to = node->to;
  fresh->len = node->len;
  bool fresh_inline = fresh->data == fresh->inline_payload.bytes;
  void *d = fresh_inline ? node->inline_payload.bytes : fresh->data;
  size_t c = fresh_inline ? sizeof node->inline_payload.bytes : fresh->cap;
  if (node->data == node->inline_payload.bytes) {
    memcpy(fresh->inline_payload.bytes, node->inline_payload.bytes, node->len);
    fresh->data = fresh->inline_payload.bytes;
    fresh->cap = sizeof fresh->inline_payload.bytes;
  } else {
    fresh->data = node->data;
    fresh->cap = node->cap;
  }
  node->data = d;
  node->cap = c;
  node->len = 0;
}

#endif
