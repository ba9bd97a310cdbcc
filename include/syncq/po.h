/*
 * syncq/po.h — the postoffice: thousands of lightweight processes that
 * share nothing but messages (002, LaForest 2007, §3-§4).
 *
 * A system (syncq_po_system) owns a process table sized at creation. A
 * process is a thread with a small stack (32 KB by default, with a guard
 * page) running fn(self, arg); `self` is its handle to its own postoffice:
 * an inbox queue (one of six mailbox algorithms, chosen per system) and a
 * free list of messages. A thread that was not spawned (e.g. main) may
 * join in as a process with syncq_po_attach().
 *
 *   get(self, len)           a free message with room for len bytes (from
 *                            the own free list, or allocated)
 *   send(self, pid, msg, m)  SYNCQ_PO_LINK: links msg into pid's inbox;
 *                            SYNCQ_PO_COPY: copies it into one of pid's free
 *                            messages, links that, and frees msg to the
 *                            sender's free list (002 §4 "Sending/Receiving")
 *   recv(self)               dequeue, yielding while the inbox is empty (002)
 *   recv_blocking(self)      dequeue, sleeping on a futex while empty; the
 *                            sender wakes it (beyond 002)
 *   try_recv(self)           dequeue once: SYNCQ_EMPTY when nothing is there
 *   free(self, msg)          give a message back to the own free list
 *
 * Pids: a pid is an index in the process table, 0 .. max_procs-1, handed
 * out in order and never reused while the system lives. A pid outside the
 * table is SYNCQ_EINVAL; a pid inside the table that no process has taken
 * is SYNCQ_ENOENT; a process that has exited (returned from fn, or
 * detached) is SYNCQ_EDEAD for send.
 *
 * Messages: a header (the fields below) and a separately allocated payload
 * buffer (`data`, `cap` bytes, `len` used). Headers are type-stable: while
 * the system lives a header is only ever a header of this system (recycled
 * through the processes' free lists, never returned to malloc), so a
 * sender that still holds a stale pointer into a mailbox may read it
 * safely; every header is freed by syncq_po_destroy(). The exception is the
 * "mutex-nofree" mailbox (002's "no free list" variant), where get
 * allocates and free releases header and payload every time.
 * A message belongs to one holder at a time: after a successful send it is
 * the recipient's (LINK) or back on a free list (COPY); after an error it is
 * still the caller's. The holder may read and write type, len (<= cap) and
 * the bytes of data; the other fields are the postoffice's.
 *
 * Thread safety: every function may be called concurrently from any
 * processes, except that the functions taking `self` must be called by the
 * process `self` itself (its inbox has a single consumer).
 */
#ifndef SYNCQ_PO_H
#define SYNCQ_PO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "syncq/pr.h"
#include "syncq/reclaim.h"
#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t syncq_po_pid;
typedef struct syncq_po_system syncq_po_system;
typedef struct syncq_po_proc syncq_po_proc;

/* A message. Allocate with syncq_po_get(), never by hand. */
typedef struct syncq_po_msg {
  /* -- the postoffice's (do not touch) -- */
  syncq_pr_dw_atomic cnext;          /* "nonblocking": counted next (lo: address, hi: count) */
  _Atomic(struct syncq_po_msg *) next; /* the other mailboxes' queue link */
  syncq_fl_link fl;                  /* free-list link */
  struct syncq_po_msg *all_next;     /* the system's list of every header */
  /* -- the holder's -- */
  uint32_t type;       /* the application's message type */
  syncq_po_pid sender; /* set by send */
  size_t len;          /* payload bytes in use (<= cap) */
  size_t cap;          /* payload capacity */
  void *data;          /* payload buffer */
} syncq_po_msg;

typedef enum syncq_po_send_mode {
  SYNCQ_PO_LINK = 0, /* link the message itself (one pointer moves) */
  SYNCQ_PO_COPY = 1  /* copy it into one of the recipient's free messages */
} syncq_po_send_mode;

/* Defaults and limits of a system. */
#define SYNCQ_PO_DEFAULT_STACK (32u * 1024u)   /* 002 §4: 32 KB stacks */
#define SYNCQ_PO_DEFAULT_MAX_PROCS 8192u
#define SYNCQ_PO_MAX_PROCS (1u << 20)          /* largest process table */
#define SYNCQ_PO_MAX_MSG ((size_t)1 << 30)     /* largest payload */

typedef struct syncq_po_config {
  const char *mailbox; /* "mutex" (NULL: the default), "nonblocking", "ttas", "two-lock",
                        * "mutex-nofree", "mpsc" (syncq_po_mailbox_info) */
  uint32_t max_procs;  /* process table size, 0: SYNCQ_PO_DEFAULT_MAX_PROCS; at most
                        * SYNCQ_PO_MAX_PROCS, else SYNCQ_EINVAL */
  size_t stack_size;   /* bytes of each spawned process's stack, 0: SYNCQ_PO_DEFAULT_STACK;
                        * below the system's minimum (PTHREAD_STACK_MIN): SYNCQ_EINVAL */
  size_t guard_size;   /* guard bytes below each stack, 0: one page */
} syncq_po_config;

/* A process body. Returning from it is the process's exit. */
typedef void (*syncq_po_fn)(syncq_po_proc *self, void *arg);

/* ---- the mailbox algorithms ---- */

/* How many mailbox algorithms there are (6). */
SYNCQ_API int syncq_po_mailbox_count(void);
/* The i-th one's name, one-line title and the 002 section/algorithms it
 * follows (any of the out pointers may be NULL). SYNCQ_EINVAL for i out of
 * range. */
SYNCQ_API int syncq_po_mailbox_info(int i, const char **name, const char **title, const char **paper);

/* ---- systems and processes ---- */

/* Create a system (cfg NULL: defaults). SYNCQ_EINVAL for a NULL out or a
 * bad config; SYNCQ_ENOENT for an unknown mailbox, or when the lock the
 * mailbox needs ("pthread-mutex", "ttas") is not in the lock registry;
 * SYNCQ_ENOTSUP without double-width CAS (the free lists need it);
 * SYNCQ_ENOMEM. */
SYNCQ_API int syncq_po_create(const syncq_po_config *cfg, syncq_po_system **out);

/* Destroy a system and free every message. Processes that have exited are
 * joined first. SYNCQ_EINVAL for NULL; SYNCQ_EBUSY (nothing freed) while a
 * process is running or attached. Messages of a "mutex-nofree" system that
 * a process still holds (not sent, not freed) are not freed. */
SYNCQ_API int syncq_po_destroy(syncq_po_system *sys);

/* Start a process running fn(self, arg); its pid in *pid (may be NULL).
 * SYNCQ_EINVAL for NULL sys or fn; SYNCQ_ENOMEM; SYNCQ_ELIMIT when the
 * process table is full or a system limit stopped the thread: then
 * syncq_po_limit_reason() names the limit. */
SYNCQ_API int syncq_po_spawn(syncq_po_system *sys, syncq_po_fn fn, void *arg, syncq_po_pid *pid);

/* Wait for a spawned process to exit. SYNCQ_EINVAL for NULL sys or a pid
 * outside the table, or a pid that is attached, not spawned; SYNCQ_ENOENT
 * for a pid no process has taken or one already joined. A thread joining
 * itself gets SYNCQ_EINVAL. */
SYNCQ_API int syncq_po_join(syncq_po_system *sys, syncq_po_pid pid);

/* Make the calling thread a process of sys (it gets a pid, an inbox and a
 * free list, and may send and receive). SYNCQ_EINVAL for NULL; SYNCQ_ELIMIT
 * ("max_procs") when the table is full; SYNCQ_ENOMEM. */
SYNCQ_API int syncq_po_attach(syncq_po_system *sys, syncq_po_proc **self);

/* The attached thread leaves: its pid is dead from now on (sends get
 * SYNCQ_EDEAD). SYNCQ_EINVAL for NULL, a spawned process's handle, or a
 * process already detached. */
SYNCQ_API int syncq_po_detach(syncq_po_proc *self);

/* The process's pid; -1 for NULL. */
SYNCQ_API syncq_po_pid syncq_po_pid_of(const syncq_po_proc *self);

/* The limit that stopped the last refused spawn or attach of this system:
 * "max_procs", "RLIMIT_NPROC", "kernel.threads-max", "kernel.pid_max",
 * "cgroup pids.max", "vm.max_map_count", "memory", or "unknown (errno ...)";
 * NULL when no spawn has been refused (or sys is NULL). A static string. */
SYNCQ_API const char *syncq_po_limit_reason(const syncq_po_system *sys);

/* How many processes have been started (spawned or attached) so far. */
SYNCQ_API uint32_t syncq_po_count(const syncq_po_system *sys);

/* ---- messages ---- */

/* A message with room for len bytes (its len set to len, type 0) in *out.
 * SYNCQ_EINVAL for NULL or len > SYNCQ_PO_MAX_MSG; SYNCQ_ENOMEM. */
SYNCQ_API int syncq_po_get(syncq_po_proc *self, size_t len, syncq_po_msg **out);

/* Send msg to process `to` (its sender field is set to self's pid).
 * SYNCQ_EINVAL for NULL, a bad mode, msg->len > msg->cap, or `to` outside
 * the table; SYNCQ_ENOENT when no process has that pid; SYNCQ_EDEAD when it
 * has exited; SYNCQ_ENOMEM (COPY when no message could be had). On any
 * error the message is still the caller's. */
SYNCQ_API int syncq_po_send(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *msg, syncq_po_send_mode mode);

/* Receive the next message of the inbox into *out, yielding the processor
 * while the inbox is empty (002 §4). SYNCQ_EINVAL for NULL. */
SYNCQ_API int syncq_po_recv(syncq_po_proc *self, syncq_po_msg **out);

/* The same, but sleeping on a futex while the inbox is empty; the next
 * send to this process wakes it. SYNCQ_EINVAL for NULL. */
SYNCQ_API int syncq_po_recv_blocking(syncq_po_proc *self, syncq_po_msg **out);

/* One attempt: SYNCQ_OK with *out, or SYNCQ_EMPTY. SYNCQ_EINVAL for NULL.
 * (In "mpsc", a message whose sender is between its two steps is not yet
 * visible: try_recv may report SYNCQ_EMPTY until that sender resumes.) */
SYNCQ_API int syncq_po_try_recv(syncq_po_proc *self, syncq_po_msg **out);

/* Give a message back to the own free list. SYNCQ_EINVAL for NULL. */
SYNCQ_API int syncq_po_free(syncq_po_proc *self, syncq_po_msg *msg);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_PO_H */
