/* po_internal.h — the postoffice's private structures: processes, the
 * system, and the mailbox algorithms' ops table. */
#ifndef SYNCQ_PO_INTERNAL_H
#define SYNCQ_PO_INTERNAL_H

#include <pthread.h>

#include "fiber_internal.h"
#include "syncq/lock.h"
#include "syncq/platform.h"
#include "syncq/po.h"

struct po_mailbox_ops;

enum { PO_FREE = 0, PO_RUNNING = 1, PO_EXITED = 2 };

struct syncq_po_proc {
  /* The first cache line holds what a message hop touches: the state and
   * mailbox every sender reads, and a fiber's park state and context (a
   * sender's RMW, the scheduler's resume). Written by senders too, but
   * every hop touches all of it anyway: one line, not three. */
  SYNCQ_CACHELINE_ALIGNED _Atomic(int) state;
  syncq_po_pid pid;
  bool is_fiber; /* a spawned process of a fiber system */
  bool spawned;
  bool joined;
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
};

struct syncq_po_system {
  const struct po_mailbox_ops *mb;
  bool fibers;             /* the fiber backend: spawned processes are fibers */
  po_fiber_rt *fiber_rt;   /* its schedulers (NULL: thread backend) */
  const syncq_lock_ops *lock; /* the mailbox's lock, from the lock registry (NULL: none) */
  size_t stack_size;
  size_t guard_size;
  uint32_t max_procs;
  pthread_mutex_t spawn_lock; /* serialises spawn/attach (not a hot path) */
  _Atomic(uint32_t) nprocs;   /* slots taken, 0 .. max_procs */
  _Atomic(syncq_po_msg *) all; /* every type-stable header ever allocated (push only) */
  _Atomic(const char *) limit_reason;
  struct syncq_po_proc *procs; /* [max_procs] */
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
  void (*destroy)(void *mb, syncq_po_system *sys);
  void (*enqueue)(void *mb, syncq_po_msg *m);
  /* SYNCQ_OK with *out, or SYNCQ_EMPTY. Never allocates. */
  int (*dequeue)(void *mb, syncq_po_msg **out);
} po_mailbox_ops;

extern const po_mailbox_ops po_mailbox_mutex;
extern const po_mailbox_ops po_mailbox_nonblocking;
extern const po_mailbox_ops po_mailbox_ttas;
extern const po_mailbox_ops po_mailbox_two_lock;
extern const po_mailbox_ops po_mailbox_mutex_nofree;
extern const po_mailbox_ops po_mailbox_mpsc;

/* The limit behind a failed thread or mapping creation (errno err): the
 * names of syncq_po_limit_reason(). */
const char *po_limit_of(int err);

/* A new type-stable header of sys (payload empty), recorded for destroy;
 * NULL when memory is short. */
syncq_po_msg *po_header_new(syncq_po_system *sys);

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
void po_lock1_enqueue(void *mb, syncq_po_msg *m);
int po_lock1_dequeue(void *mb, syncq_po_msg **out);

/* Copy-out of the dummy-node queues: `fresh` (the old dummy, now out of
 * the queue) takes the holder's fields of `node` (the new dummy), and the
 * two exchange payload buffers, so the payload bytes are not copied. */
static inline void po_copy_out(syncq_po_msg *fresh, syncq_po_msg *node) {
  fresh->type = node->type;
  fresh->sender = node->sender;
  fresh->len = node->len;
  void *d = fresh->data;
  size_t c = fresh->cap;
  fresh->data = node->data;
  fresh->cap = node->cap;
  node->data = d;
  node->cap = c;
  node->len = 0;
}

#endif
