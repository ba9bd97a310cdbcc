/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/po.h — the postoffice: thousands of lightweight processes that
 * share nothing but messages (002, LaForest 2007, §3-§4).
 *
 * A system (syncq_po_system) owns a process table sized at creation. A
 * process runs fn(self, arg) on a small stack with a guard page below it;
 * `self` is its handle to its own postoffice: an inbox queue (one of six
 * mailbox algorithms, chosen per system) and a free list of messages. A
 * thread that was not spawned (e.g. main) may join in as a process with
 * syncq_po_attach(), or run its main logic as the first process with
 * syncq_po_run().
 *
 * Backends (chosen per system, syncq_po_config.backend):
 *   "thread"  002's design: every process is a kernel thread (32 KB stack).
 *             Each hop of a message between processes goes through the
 *             kernel's scheduler.
 *   "fiber"   processes are user-level contexts (Boost.Context fcontext,
 *             16 KB stacks from a pool) multiplexed M:N onto one scheduler
 *             thread per processing unit; run queues are NBLFQs; recv on
 *             an empty inbox parks the fiber and a send makes it runnable
 *             again, to run next on the sender's scheduler; idle
 *             schedulers spin briefly, then sleep on a futex. Each
 *             receive that waits (recv, recv_blocking, recv_timeout)
 *             first yields once to the other runnable fibers of its
 *             scheduler, not to the kernel, and then parks.
 *             The default when the library was built with Boost.Context.
 *             Blocking calls: a fiber that makes a blocking system call
 *             (read, sleep(3) -- syncq_po_sleep parks instead --, a
 *             pthread mutex held elsewhere, ...) or computes without a
 *             switch blocks its scheduler thread. A monitor thread per
 *             fiber system looks every 5 ms for a scheduler that has run
 *             one fiber for 10 ms or more (while every scheduler sleeps,
 *             it sleeps too, until one wakes: an idle system costs no
 *             wake-ups) and, while it has queued
 *             fibers, timers or a woken process, starts (or wakes) a
 *             spare scheduler thread that steals its queue and fires its
 *             timers (at most one spare per scheduler). A blocked
 *             scheduler's deadlines so fire once the monitor has seen the
 *             block (10 to 15 ms after it began; at once after
 *             syncq_po_blocking_begin), and a deadline that a plain
 *             thread arms on it after that up to 5 ms late. When the
 *             blocked fiber returns its scheduler goes on as before and
 *             the spare retires (once its own timers are gone): the
 *             running schedulers settle back to `schedulers`.
 *             syncq_po_blocking_begin/_end hand the queue off at once.
 *             A scheduler with fibers of its own does not steal; the
 *             monitor's hand-off is what serves a blocked one. A fiber
 *             that busy-waits for another fiber must yield
 *             (syncq_po_yield; syncq_po_recv does). A fiber may resume on
 *             another thread after recv, yield or join: it must not keep
 *             the address of a thread-local variable (errno included)
 *             across them.
 *             Stacks: a fiber whose stack overflows into its guard
 *             region (16 KB of PROT_NONE by default, no memory) is
 *             reported by pid on stderr before the program dies (a
 *             handler on an alternate signal stack). On Linux 6.13 and
 *             later guards are page-table markers (MADV_GUARD_INSTALL,
 *             64 per system call through process_madvise): they split no
 *             mapping and every stack has one. Older kernels, qemu-user
 *             (which accepts the advice and installs nothing: the first
 *             marker is checked), or SYNCQ_PO_GUARD=mprotect in the
 *             environment: guards are mprotect'ed,
 *             and each costs two of the kernel's vm.max_map_count
 *             mappings: stacks get guards while that budget lasts (the
 *             limit, less the program's mappings when measured, less an
 *             eighth kept for the program) and, past it, come from one
 *             mapping per 64
 *             stacks with a canary word at each stack's lowest address,
 *             checked at every switch out of the fiber: a smashed canary
 *             is reported by pid and the program is stopped (abort), as
 *             a guard's fault stops it. Unprotected: a frame larger than
 *             the guard that skips it without touching it (build fiber
 *             code with -fstack-clash-protection: GCC and Clang then
 *             probe every page of a large frame or alloca, so it faults
 *             in the guard); on a canary stack, an overrun between two
 *             switches writes into the neighbour stack below before it
 *             is seen, and one that skips the canary word is not seen.
 *             Creating a fiber system installs that SIGSEGV/SIGBUS handler
 *             (again if the program replaced it since); faults that are
 *             not a fiber's overflow go to the handler it replaced.
 *             Processes attached with syncq_po_attach stay threads.
 *
 *   get(self, len)           a free message with room for len bytes (a
 *                            fiber's from its scheduler's cache first; else
 *                            from the own free list, or allocated)
 *   send(self, pid, msg, m)  SYNCQ_PO_LINK: links msg into pid's inbox;
 *                            SYNCQ_PO_COPY: copies it into a free message
 *                            (the scheduler's cached one, else one of pid's),
 *                            links that, and frees msg as free() does
 *                            (002 §4 "Sending/Receiving")
 *   recv(self)               dequeue, yielding while the inbox is empty (002)
 *   recv_blocking(self)      dequeue, sleeping on a futex while empty; the
 *                            sender wakes it (beyond 002)
 *   try_recv(self)           dequeue once: SYNCQ_EMPTY when nothing is there
 *                            and nothing on its way ("mpsc": SYNCQ_EBUSY
 *                            while a sender is between its two steps)
 *   recv_timeout(self, ns)   dequeue, waiting at most ns (SYNCQ_ETIMEDOUT)
 *   sleep(self, ns)          a fiber parks, its scheduler runs the others
 *   send_after(self, pid, msg, ns)  delivered ns from now
 *   free(self, msg)          give a message back: a fiber's to its
 *                            scheduler's cache while it has room, else to
 *                            the own free list
 *   monitor(self, pid, &ref) one SYNCQ_PO_DOWN message when pid exits
 *                            (demonitor(self, pid, ref) takes it back)
 *   exit(self, pid, reason)  an exit signal (Erlang's exit/2)
 *   link(self, pid)          linked processes die together (unlink undoes),
 *                            unless they trap exits (trap_exits)
 *   register(sys, name, pid) a name for a process (whereis, unregister)
 *
 * Pids: a pid names one process, never its successor. It is a slot of the
 * process table (the low bits) and that slot's generation (the high bits):
 * a slot is reused once its process has been joined (spawned), has
 * exited (spawned detached) or has detached (attached), and each reuse takes the next generation, so a pid
 * kept after its process is gone never reaches the slot's next process
 * (as Erlang's and the kernel's pids). A fresh system hands out slots
 * 0, 1, 2, ... in order (generation 0: pids 0, 1, 2, ...). A spawn or
 * attach takes the slot freed longest ago whenever more than
 * SYNCQ_PO_REUSE_DISTANCE freed slots wait to be reused (or every slot
 * has been used), else the next never-used slot: the two alternate as
 * the live count moves. So a freed slot comes back only after at least
 * SYNCQ_PO_REUSE_DISTANCE later frees (fewer only once every slot has
 * been used and fewer than that are free), and the records a system
 * touches follow its most live processes plus that distance, not
 * max_procs. The
 * slot takes ceil(log2(max_procs + SYNCQ_PO_ATTACH_RESERVE)) bits and the
 * generation the rest of the 31: a slot has 2^(31 - those bits)
 * generations before a pid value repeats (131,072 with the default table
 * of 8,192 + 16 slots, 1,024 with SYNCQ_PO_MAX_PROCS); syncq_po_pid_generations()
 * gives a system's number. A pid value therefore comes back after at
 * least that many times SYNCQ_PO_REUSE_DISTANCE + 1 frees, however large
 * the table (some 537 million with the default table, 4.2 million with
 * SYNCQ_PO_MAX_PROCS). A pid whose slot lies outside the table is
 * SYNCQ_EINVAL; a pid no process has had yet is SYNCQ_ENOENT; the pid of
 * a process that has exited (returned from fn, or detached), joined or
 * not, is SYNCQ_EDEAD for send and SYNCQ_ENOENT for join once joined.
 * A message sent to a process that exits (or whose slot is reused) before
 * it receives it is dropped, never delivered to the slot's next process:
 * each message carries its recipient's pid, a receive drops those
 * addressed to an earlier generation, and a slot starts a process only
 * once what its earlier processes left unread is drained (a spawn or
 * attach whose drain a lock-based mailbox's lock refuses fails with the
 * lock's status, and the slot waits for a later one).
 *
 * Messages: a header (the fields below) and a payload buffer (`data`,
 * `cap` bytes, `len` used): inside the header for up to
 * SYNCQ_PO_INLINE_MSG bytes, else allocated separately (kept with the
 * header for its next use). Headers are type-stable: while
 * the system lives a header is only ever a header of this system (recycled
 * through the processes' free lists and a bounded cache per fiber
 * scheduler, never returned to malloc), so a
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
 *
 * Killed processes: once an exit signal has killed a process (see "exit
 * signals and links" below), its calls that wait or act on others return
 * SYNCQ_EKILLED, and it must return from its body.
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

/* Payload bytes a message header holds inline (syncq_po_msg's data
 * points into the header for a payload this small). */
#define SYNCQ_PO_INLINE_MSG 16u

/* A message. Allocate with syncq_po_get(), never by hand. */
typedef struct syncq_po_msg {
  /* -- the postoffice's (do not touch) -- */
  syncq_pr_dw_atomic cnext;            /* "nonblocking": counted next (lo: address, hi: count) */
  _Atomic(struct syncq_po_msg *) next; /* the other mailboxes' queue link */
  syncq_fl_link fl;                    /* free-list link */
  syncq_po_pid to;                     /* the recipient's pid (a stale one's message is dropped) */
  /* -- the holder's -- */
  uint32_t type;       /* the application's message type */
  syncq_po_pid sender; /* set by send */
  size_t len;          /* payload bytes in use (<= cap) */
  size_t cap;          /* payload capacity */
  void *data;          /* payload buffer */
  /* -- the postoffice's (do not touch) -- */
  /* A payload of up to SYNCQ_PO_INLINE_MSG bytes lives here (data points
   * at it): no allocation, and it shares the header's cache line. The
   * long double aligns it as malloc would. */
  union {
    long double align;
    unsigned char bytes[SYNCQ_PO_INLINE_MSG];
  } inline_payload;
} syncq_po_msg;

typedef enum syncq_po_send_mode {
  SYNCQ_PO_LINK = 0, /* link the message itself (one pointer moves) */
  SYNCQ_PO_COPY = 1  /* copy it into one of the recipient's free messages */
} syncq_po_send_mode;

/* Defaults and limits of a system. */
#define SYNCQ_PO_DEFAULT_STACK (32u * 1024u)       /* 002 §4: 32 KB stacks (thread backend) */
#define SYNCQ_PO_DEFAULT_FIBER_STACK (16u * 1024u) /* fiber backend */
#define SYNCQ_PO_MIN_FIBER_STACK (8u * 1024u)      /* smallest fiber stack accepted */
#define SYNCQ_PO_NO_GUARD ((size_t)-1)             /* guard_size: no guard pages */
/* A fiber stack's default guard: 16 KB of PROT_NONE address space (no
 * memory), as large as the default stack: a frame that overruns the
 * default stack by up to 16 KB (a 20 KB local buffer) lands in it and is
 * reported; a larger one, unless the code is built with
 * -fstack-clash-protection, can jump it into the stack below. A larger
 * guard_size catches larger frames and costs more per spawn: the kernel
 * writes one page-table entry per guard page when it makes the guard
 * (docs/contents.md, the cold spawn). */
#define SYNCQ_PO_DEFAULT_FIBER_GUARD (16u * 1024u)
/* Fiber stacks of destroyed systems are kept for the next system with the
 * same stack and guard sizes (as glibc keeps thread stacks), up to the
 * larger of this many bytes of stacks (guards not counted: they are
 * address space only) and all the stacks of the system destroyed last
 * (its peak) half again (a system repeated with a peak that varies from
 * run to run keeps the stacks of its larger runs), at most
 * SYNCQ_PO_STACK_CACHE_MAX_BYTES; the oldest past
 * that are unmapped. Kept stacks keep their guards and the pages their
 * fibers touched (resident: a reused stack costs no page fault); they go
 * when a later system takes them, when a smaller system's destroy lowers
 * the bound, or at syncq_po_stack_cache_trim() or syncq_po_cache_trim(). */
#define SYNCQ_PO_STACK_CACHE_BYTES ((size_t)256 << 20)
#define SYNCQ_PO_STACK_CACHE_MAX_BYTES ((size_t)2 << 30)
#define SYNCQ_PO_DEFAULT_MAX_PROCS 8192u
#define SYNCQ_PO_MAX_PROCS (1u << 20) /* largest process table */
/* Slots beyond max_procs that only syncq_po_attach may take: a thread can
 * still join a system whose spawned processes fill max_procs (to send
 * what the parked ones wait for, so they can exit and be joined). */
#define SYNCQ_PO_ATTACH_RESERVE 16u
/* Freed slots that may wait while never-used ones are handed out (see
 * "Pids" in the file comment): each reuse of a slot follows at least this many frees. */
#define SYNCQ_PO_REUSE_DISTANCE 4096u
/* Slots a spawn or attach tries, each once, when the mailbox lock of a
 * reused slot refuses the drain of the inbox that slot's earlier
 * processes left (syncq_po_spawn: SYNCQ_ESYS). */
#define SYNCQ_PO_SPAWN_SLOT_TRIES 8u
#define SYNCQ_PO_MAX_MSG ((size_t)1 << 30) /* largest payload */
#define SYNCQ_PO_MAX_SCHEDULERS 1024u      /* most scheduler threads of a fiber system */

typedef struct syncq_po_config {
  const char *mailbox; /* "mutex" (NULL: the default), "nonblocking", "ttas", "two-lock",
                        * "mutex-nofree", "mpsc" (syncq_po_mailbox_info) */
  uint32_t max_procs;  /* most live processes (spawned and attached; joined or detached
                        * ones leave), 0: SYNCQ_PO_DEFAULT_MAX_PROCS; at most
                        * SYNCQ_PO_MAX_PROCS, else SYNCQ_EINVAL. The table has
                        * SYNCQ_PO_ATTACH_RESERVE more slots, for attach only. */
  size_t stack_size;   /* bytes of each spawned process's stack, 0: the backend's default
                        * (SYNCQ_PO_DEFAULT_STACK, SYNCQ_PO_DEFAULT_FIBER_STACK); below
                        * the backend's minimum (PTHREAD_STACK_MIN,
                        * SYNCQ_PO_MIN_FIBER_STACK): SYNCQ_EINVAL */
  size_t guard_size;   /* guard bytes below each stack, 0: the default (threads: one
                        * page; fibers: SYNCQ_PO_DEFAULT_FIBER_GUARD);
                        * SYNCQ_PO_NO_GUARD: none. Fibers: each guard costs two of
                        * the kernel's vm.max_map_count mappings (65,530 by default,
                        * shared with the whole program); stacks get guards while
                        * that budget lasts and a canary past it (see "Stacks"
                        * above), so the limit on fibers is memory. */
  const char *backend; /* "thread" or "fiber" (syncq_po_backend_info); NULL: the default
                        * (syncq_po_default_backend) */
  uint32_t schedulers; /* fiber: scheduler threads, 0: one per processing unit (hwloc),
                        * or as many of those as the kernel lets start (at least one:
                        * see syncq_po_schedulers_reason); a number given here starts
                        * in full or the system is refused (SYNCQ_ELIMIT) */
  bool pin;            /* fiber: bind scheduler i to processing unit i (hwloc) */
} syncq_po_config;

/* A process body. Returning from it is the process's exit. */
typedef void (*syncq_po_fn)(syncq_po_proc *self, void *arg);

/* ---- the mailbox algorithms ---- */

/* How many mailbox algorithms there are (6).
 * Thread safety: any thread, any time, from a signal handler too (constant
 * tables).
 * Progress: wait-free. */
SYNCQ_API int syncq_po_mailbox_count(void);
/* The i-th one's name, one-line title and the 002 section/algorithms it
 * follows (any of the out pointers may be NULL).
 * SYNCQ_EINVAL: i is negative or not below syncq_po_mailbox_count().
 * Thread safety: any thread, any time, from a signal handler too (constant
 * tables).
 * Progress: wait-free. */
SYNCQ_API int syncq_po_mailbox_info(int i, const char **name, const char **title, const char **paper);

/* ---- the backends ---- */

/* How many backends there are (2: "thread", "fiber").
 * Thread safety: any thread, any time, from a signal handler too (constant
 * tables).
 * Progress: wait-free. */
SYNCQ_API int syncq_po_backend_count(void);
/* The i-th one's name and one-line title (out pointers may be NULL).
 * SYNCQ_ENOTSUP: this build of the library lacks the backend (fiber: built
 * without Boost.Context); name and title are set all the same.
 * SYNCQ_EINVAL: i is negative or not below syncq_po_backend_count().
 * Thread safety: any thread, any time, from a signal handler too (constant
 * tables).
 * Progress: wait-free. */
SYNCQ_API int syncq_po_backend_info(int i, const char **name, const char **title);
/* The backend a config with backend == NULL gets: "fiber" when built with
 * Boost.Context, else "thread".
 * Thread safety: any thread, any time, from a signal handler too (constant
 * tables).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_po_default_backend(void);
/* The backend of a system ("thread" or "fiber"); NULL for NULL.
 * Thread safety: any thread, process or not, any time the system exists,
 * concurrently with every call on it. Not from a signal handler (the
 * postoffice is not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_po_backend_of(const syncq_po_system *sys);
/* Scheduler threads of a fiber system (0 for a thread system or NULL).
 * Thread safety: any thread, process or not, any time the system exists,
 * concurrently with every call on it. Not from a signal handler (the
 * postoffice is not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API uint32_t syncq_po_schedulers(const syncq_po_system *sys);
/* Why a fiber system asked for one scheduler per processing unit
 * (schedulers = 0) runs on fewer: the limit that refused the next thread
 * (syncq_po_limit_reason's names: "RLIMIT_NPROC", "kernel.threads-max",
 * "cgroup pids.max", ...); NULL when every one started, for a thread
 * system, or for NULL. A static string.
 * Thread safety: any thread, process or not, any time the system exists,
 * concurrently with every call on it. Not from a signal handler (the
 * postoffice is not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API const char *syncq_po_schedulers_reason(const syncq_po_system *sys);

/* ---- the clock of deadlines ---- */

/* Bytes that always hold syncq_po_clock_gate's line, its NUL included. */
#define SYNCQ_PO_CLOCK_GATE_LEN 128u

/* How this process's fiber schedulers look for passed deadlines. A
 * scheduler with a deadline pending (a fiber in syncq_po_recv_timeout or
 * syncq_po_sleep, a syncq_po_send_after) looks between every two fibers
 * whether it has passed. With a usable cycle counter (x86-64: an
 * invariant TSC that the kernel lists among its clocksources; AArch64:
 * cntvct_el0), calibrated once against CLOCK_MONOTONIC, a look reads the
 * counter and the clock only as the earliest deadline nears; without
 * one, every switch reads the clock while a deadline waits (tens of
 * nanoseconds a switch: docs/reliability.md, "Postoffice: deadlines on a
 * busy scheduler"). Deadlines fire on time either way, while the counter
 * keeps its calibrated rate; thread systems do not look (their waits are
 * timed futex waits).
 * *counter (unless counter is NULL): true when the counter gates the
 * clock's reads, false when every switch reads the clock.
 * why (unless NULL): the same as a NUL-terminated line, truncated to len
 * bytes: "counter: 2.596 ticks/ns" (its calibrated rate, 4 digits), or "clock at
 * every switch: " and the first reason found, in this order: no cycle
 * counter on this architecture, the kernel's available clocksources
 * leave out the TSC (it marked it unstable), cpuid reports no invariant
 * TSC, the counter costs more than half a clock read (a hypervisor traps
 * it), its calibration against the clock was refused; or, once the
 * running check below has found the rate changed, "clock at every
 * switch: the counter's rate drifted from 2.596 to 1.298 ticks/ns" (the
 * calibrated rate and the one found, 4 digits each). A buffer of
 * SYNCQ_PO_CLOCK_GATE_LEN bytes always holds the line.
 * The process decides once (at this call or a fiber scheduler's first
 * deadline, whichever comes first): the kernel's list is not read again.
 * While fiber systems run, the counter's rate is checked against the
 * clock wherever they read it anyway (a scheduler's look at a deadline,
 * the blocked-scheduler monitor's tick); a rate more than 1/16 off its
 * calibration (a virtual machine migrated to another host without TSC
 * scaling, a counter that slowed or sped up) is found within about
 * 30 ms of the change while fibers run, and from then on, for the
 * process's lifetime, every switch reads the clock and *counter is
 * false. Until then a counter slowed below 7/8 of its rate makes busy
 * schedulers' deadlines late (docs/reliability.md, "A rate that changes
 * under the process").
 * SYNCQ_ELIMIT: the line needs more than len bytes: why holds its first
 * len - 1 bytes and a NUL; *counter is set all the same.
 * SYNCQ_EINVAL: counter and why are both NULL, why is NULL with len
 * above 0, or why is not NULL with len 0 (no room for the NUL); nothing
 * is written.
 * Thread safety: any thread, any time, with or without a system. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: the process's first decision times the counter
 * against the clock (about a millisecond; concurrent first callers wait
 * for it); every later call only writes the line.
 * Example: `char why[SYNCQ_PO_CLOCK_GATE_LEN]; bool counter;`
 *   `if (syncq_po_clock_gate(&counter, why, sizeof why) == SYNCQ_OK) printf("deadlines: %s\n", why);` */
SYNCQ_API int syncq_po_clock_gate(bool *counter, char *why, size_t len);

/* ---- systems and processes ---- */

/* Create a system (cfg NULL: defaults).
 * SYNCQ_EINVAL: out is NULL, or a bad config: max_procs above
 * SYNCQ_PO_MAX_PROCS, stack_size below the backend's minimum or above
 * 2^34, guard_size above 2^30, schedulers above SYNCQ_PO_MAX_SCHEDULERS.
 * SYNCQ_ENOENT: an unknown mailbox or backend, or the lock the mailbox
 * needs ("pthread-mutex", "ttas") is not in the lock registry.
 * SYNCQ_ENOTSUP: no double-width CAS (the free lists need it), or the
 * fiber backend in a build without it.
 * SYNCQ_ENOMEM: the system, its process table, or a fiber system's
 * scheduler records or stacks could not be allocated.
 * SYNCQ_ESYS: a mutex, the thread system's timer thread, or a fiber
 * system's signal stack or handler could not be set up; errno holds why.
 * SYNCQ_ELIMIT: a fiber system's scheduler threads could not start (not
 * even one, or fewer than a number given in cfg->schedulers): every
 * thread started is stopped again, nothing is kept.
 * Thread safety: any thread (each call makes a system of its own). Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: it allocates the process table and, for a fiber
 * system, starts the scheduler threads and waits for them.
 * Example: `syncq_po_system *sys; int r = syncq_po_create(NULL, &sys);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "postoffice: %s\n", syncq_strerror(r));`
 *   `else { work(); syncq_po_destroy(sys); }` */
SYNCQ_API int syncq_po_create(const syncq_po_config *cfg, syncq_po_system **out);

/* Destroy a system and free every message. Processes that have exited are
 * joined first (and a fiber system's schedulers stopped). Messages left
 * in inboxes are freed without taking the mailboxes' locks (no sender is
 * left), so a lock that refuses leaks none. Messages of a
 * "mutex-nofree" system that a process still holds (not sent, not freed)
 * are not freed.
 * SYNCQ_EINVAL: sys is NULL.
 * SYNCQ_EBUSY: a process is running, parked in recv, or attached; nothing
 * is freed: end the system's processes first (syncq_po_shutdown kills
 * them and waits for them; syncq_po_wait_exited waits for processes that
 * end by themselves), have attached threads detach, then destroy.
 * Thread safety: any thread that is not one of sys's processes, once every
 * process has exited (or detached) and no other thread calls into sys. Not
 * from a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: it joins the exited processes and stops a fiber
 * system's schedulers; it does not wait for a running process
 * (SYNCQ_EBUSY: syncq_po_wait_exited and syncq_po_shutdown do).
 * Example: `syncq_po_system *sys2; if (syncq_po_create(NULL, &sys2) == SYNCQ_OK) { work();`
 *   `syncq_po_destroy(sys2); }` */
SYNCQ_API int syncq_po_destroy(syncq_po_system *sys);

/* Unmap every fiber stack kept from destroyed systems (see
 * SYNCQ_PO_STACK_CACHE_BYTES), returning its memory to the kernel; the
 * next fiber system maps fresh stacks. Returns the bytes of stacks
 * released (guards not counted); 0 when none were kept or the fiber
 * backend is not built. Stacks of live systems are not touched.
 * Thread safety: any thread, at any time (the cache has its own lock).
 * Not from a signal handler.
 * Progress: blocking: takes the cache's mutex, then unmaps. */
SYNCQ_API size_t syncq_po_stack_cache_trim(void);

/* Unmap everything the postoffice keeps from destroyed systems for the
 * next one: the fiber stacks (as syncq_po_stack_cache_trim), the
 * process table of the last destroyed system (kept zeroed, with its
 * touched records resident, when those are at most 64 MB), and the
 * chunks that held destroyed systems' mailboxes and message headers (at
 * most 32 MB). Returns the bytes released: the stacks' (guards not
 * counted), the table mapping's length and the chunks' sizes; 0 when
 * nothing was kept. A program that has run a
 * large system and goes on to other work (or to fork(): a child copies
 * the page tables of every kept mapping and frees them at its exit) calls
 * it once the systems are destroyed. Live systems are not touched.
 * Thread safety: any thread, at any time (each cache has its own lock).
 * Not from a signal handler.
 * Progress: blocking: takes the caches' mutexes, then unmaps. */
SYNCQ_API size_t syncq_po_cache_trim(void);

/* Start a process running fn(self, arg); its pid in *pid (may be NULL).
 * A fiber takes its stack when a scheduler first runs it: a process that
 * cannot have one then exits without running, with reason
 * SYNCQ_PO_EXIT_NOMEM (its monitors and links are told; join returns). The slot of a spawned process
 * is freed by syncq_po_join (or destroy): a process nobody joins keeps it
 * (spawn it detached instead). Fiber system: a fiber's child runs next on
 * the spawner's scheduler; the children it displaces wait there and run
 * newest first (a tree of processes is walked depth first), while an idle
 * scheduler takes the oldest; a plain thread's children are spread round
 * robin over the schedulers.
 * SYNCQ_EINVAL: sys or fn is NULL, or pthread_create refused the
 * system's stack or guard size (a thread system).
 * SYNCQ_ENOMEM: the process's mailbox could not be allocated.
 * SYNCQ_ELIMIT: max_procs processes are live (not yet joined or
 * detached), or a system limit stopped the thread:
 * syncq_po_limit_reason() names the limit.
 * SYNCQ_ESYS: the "mutex" mailbox's pthread mutex could not be made, or
 * the lock of a lock-based mailbox refused the drain of a reused slot's
 * inbox (errno says why) at every slot tried: a refused slot keeps its
 * messages (no process starts on them) and goes to the back of the free
 * slots, and the spawn takes the next free slot, up to
 * SYNCQ_PO_SPAWN_SLOT_TRIES slots, each once (it stops early when the
 * free slots come round to one it tried, or when max_procs fills
 * meanwhile); no process started. (A lock that refuses with another
 * status, such as SYNCQ_ELIMIT, answers that status.)
 * Thread safety: any thread, process or not (a fiber may spawn),
 * concurrently with every other call on sys. Not from a signal handler (the
 * postoffice is not async-signal-safe).
 * Progress: blocking: no lock (its count and slot are taken by CAS,
 * src/po/process.c), but it may wait (yielding) for a concurrent exit
 * that is putting its slot back; a thread system starts a thread.
 * Example: `syncq_po_pid pid; syncq_po_spawn(sys, worker, arg, &pid); syncq_po_join(sys, pid);` */
SYNCQ_API int syncq_po_spawn(syncq_po_system *sys, syncq_po_fn fn, void *arg, syncq_po_pid *pid);

/* Start a detached process: as syncq_po_spawn, but nobody joins it: its
 * slot is freed when it exits, as every Erlang
 * process's is (a thread: created detached, its slot freed as its thread
 * returns; a fiber: once its stack is back in the pool), so a server that
 * spawns a process per request and never joins does not run out of
 * max_procs. It counts as live (syncq_po_live, max_procs) until then.
 * Its exit is seen as any process's: monitors get their SYNCQ_PO_DOWN,
 * links their exit signal, its name goes; its pid is dead (a send finds
 * it exited) from its exit, and stale once the slot is freed. join of its
 * pid never waits: it refuses the pid as invalid while the slot still
 * holds it (running, or exited and on its way out), and finds no such
 * process once the slot has been freed (a stale pid). *pid (may be NULL)
 * is written before the call returns, when the process may have exited
 * already. destroy waits for detached processes that have exited to free
 * their slots (and refuses, busy, while one runs: syncq_po_wait_exited
 * waits for them to exit, syncq_po_shutdown kills them and waits).
 * SYNCQ_EINVAL: sys or fn is NULL, or pthread_create refused the
 * system's stack or guard size (a thread system).
 * SYNCQ_ENOMEM: the process's mailbox could not be allocated.
 * SYNCQ_ELIMIT: max_procs processes are live, or a system limit stopped
 * the thread: syncq_po_limit_reason() names the limit.
 * SYNCQ_ESYS: as syncq_po_spawn.
 * Thread safety: any thread, process or not (a fiber may spawn),
 * concurrently with every other call on sys. Not from a signal handler (the
 * postoffice is not async-signal-safe).
 * Progress: blocking, as syncq_po_spawn: no lock, but it may wait for a
 * slot being put back; a thread system starts a thread.
 * Example: `syncq_po_spawn_detached(sys, worker, arg, NULL);` */
SYNCQ_API int syncq_po_spawn_detached(syncq_po_system *sys, syncq_po_fn fn, void *arg, syncq_po_pid *pid);

/* Wait for a spawned process to exit, then free its slot for reuse (its
 * pid is stale from then on). A thread sleeps; a fiber parks (its
 * scheduler runs the other fibers) and the process's exit wakes it.
 * SYNCQ_EINVAL: sys is NULL, pid is negative or its slot is outside the
 * table, pid is attached, not spawned, or spawned detached
 * (syncq_po_spawn_detached) with its slot holding it still, or pid is the
 * caller's own.
 * SYNCQ_ENOENT: no process has had pid, it has been joined already (or is
 * being joined), or it is stale.
 * SYNCQ_ESYS: a thread system's pthread_join failed; the slot is freed
 * all the same.
 * Thread safety: any thread or process but the one joined, once per spawned
 * pid (a second join gets SYNCQ_ENOENT). Not from a signal handler (the
 * postoffice is not async-signal-safe). From a fiber: yes, it parks (its
 * scheduler runs the other fibers).
 * Progress: blocking by purpose: it waits for the process to exit (a thread
 * sleeps, a fiber parks; a fiber that has exited is freed at once, with
 * one CAS), for a spawn of the pid still under way, and for a spawn still
 * reading the ring cell the freed slot goes to; it takes no lock
 * (src/po/process.c). */
SYNCQ_API int syncq_po_join(syncq_po_system *sys, syncq_po_pid pid);

/* Make the calling thread a process of sys (it gets a pid, an inbox and a
 * free list, and may send and receive; in a fiber system it stays a
 * thread, sleeping on a futex in recv_blocking). It may take one of the
 * SYNCQ_PO_ATTACH_RESERVE slots when max_procs processes are live.
 * SYNCQ_EINVAL: sys or self is NULL, or the caller is a fiber (it is a
 * process already).
 * SYNCQ_ELIMIT: every slot, the reserve included, is live
 * (syncq_po_limit_reason: "max_procs").
 * SYNCQ_ENOMEM: the process's mailbox could not be allocated.
 * SYNCQ_ESYS: as syncq_po_spawn (a mailbox's mutex, or a reused slot's
 * drain that the mailbox's lock refused at every slot tried, up to
 * SYNCQ_PO_SPAWN_SLOT_TRIES).
 * Thread safety: a thread that is not a process yet, for itself (not from a
 * fiber: SYNCQ_EINVAL), concurrently with every other call on sys. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking, as syncq_po_spawn: no lock, but it may wait for a
 * slot being put back (src/po/process.c). */
SYNCQ_API int syncq_po_attach(syncq_po_system *sys, syncq_po_proc **self);

/* The attached thread leaves: its pid is dead from now on (sends to it
 * find it dead) and its slot is free for reuse; the handle must not be
 * used again.
 * SYNCQ_EINVAL: self is NULL, a spawned process's handle, or a process
 * already detached.
 * Thread safety: the attached thread itself, once. Not from a signal
 * handler (the postoffice is not async-signal-safe).
 * Progress: blocking: the process-table mutex only if a monitor, link or
 * name watches it (its exit's notices); its slot goes back without a lock,
 * possibly waiting (yielding) for a spawn still reading the ring cell it
 * needs (src/po/process.c). */
SYNCQ_API int syncq_po_detach(syncq_po_proc *self);

/* The body of a system's first process under syncq_po_run: its return
 * value is the run's result (as main's is the program's). */
typedef int (*syncq_po_main_fn)(syncq_po_proc *self, void *arg);

/* Run fn(self, arg) as a process of sys (a fiber in a fiber system, so a
 * program whose main logic lives there pays fiber hops, not a thread's
 * futex wake-up per message), wait for it to exit, and store its return
 * value in *result (result may be NULL). The caller sleeps meanwhile (a
 * fiber caller yields, as in join). The process may spawn, send, receive
 * and join like any other; what it spawns may outlive it (join it;
 * syncq_po_wait_exited waits for every spawned process, detached ones
 * included, and syncq_po_shutdown ends them; then destroy). Any thread
 * may call it, several at once. Returns SYNCQ_OK once the process has
 * exited.
 * SYNCQ_EINVAL: sys or fn is NULL, or spawn refused the system's stack
 * size (as syncq_po_spawn).
 * SYNCQ_ELIMIT: as syncq_po_spawn: max_procs processes are live, or a
 * system limit stopped the thread.
 * SYNCQ_ENOMEM: the process's mailbox could not be allocated, or the
 * fiber could not have a stack (SYNCQ_PO_EXIT_NOMEM): fn did not run.
 * SYNCQ_ESYS: as syncq_po_spawn, or pthread_join failed.
 * Thread safety: any thread, several at once; from a fiber too
 * (it yields, as join). Not from a signal handler (the postoffice is not
 * async-signal-safe).
 * Progress: blocking by purpose: it waits for fn's process to exit.
 * Example: `int rc; syncq_po_run(sys, main_process, NULL, &rc);` */
SYNCQ_API int syncq_po_run(syncq_po_system *sys, syncq_po_main_fn fn, void *arg, int *result);

/* Wait until every spawned process of sys (spawned or spawned detached,
 * syncq_po_run's included) has exited, or timeout_ns nanoseconds
 * (monotonic clock) have passed. An exited process counts once its
 * monitors and links have been told (its DOWN and exit messages are
 * posted); a joinable one need not have been joined (destroy joins it).
 * Attached threads are not waited for (they leave by syncq_po_detach,
 * which the postoffice cannot make them call). timeout_ns 0: look once;
 * UINT64_MAX: wait for ever. Processes spawned while it waits are waited
 * for too: it returns when none is left running. Once it returns
 * SYNCQ_OK, and while nothing spawns and no thread attaches, syncq_po_destroy
 * succeeds. A thread sleeps on a futex, woken by the exit of the last
 * running process (no polling); a fiber of another system sleeps its
 * scheduler thread, the call bracketed as by syncq_po_blocking_begin/_end
 * (its scheduler's queue is handed to a spare scheduler at once).
 * SYNCQ_ETIMEDOUT: timeout_ns passed with a process still running
 * (syncq_po_live counts it).
 * SYNCQ_EINVAL: sys is NULL, or the caller is a spawned process of sys (a
 * fiber of sys, or the thread of one of its thread processes): it would
 * wait for itself. An attached thread of sys may call it.
 * Thread safety: any thread, process or not (but sys's spawned ones),
 * several at once, concurrently with every other call on sys. Not from a
 * signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking by purpose: it sleeps until the running processes
 * have exited (each exit is one atomic decrement; the last one bumps a
 * futex word and wakes the waiters), at most timeout_ns.
 * Example: `syncq_po_system *s2; int rc; if (syncq_po_create(NULL, &s2) == SYNCQ_OK) {`
 *   `syncq_po_run(s2, main_process, NULL, &rc);` (what main_process spawned detached may still run)
 *   `if (syncq_po_wait_exited(s2, 5000000000u) == SYNCQ_OK) syncq_po_destroy(s2); }` */
SYNCQ_API int syncq_po_wait_exited(syncq_po_system *sys, uint64_t timeout_ns);

/* End every process of sys: send each live one an exit signal of reason
 * SYNCQ_PO_EXIT_KILL (as syncq_po_exit would, from no process: see "exit
 * signals and links"), then wait as syncq_po_wait_exited does, at most
 * timeout_ns, for every spawned process to exit. The signal is untrappable
 * (Erlang's `kill`): a process that traps exits is killed too, receiving
 * no message; every killed process exits with reason SYNCQ_PO_EXIT_KILLED
 * (unless an earlier killing signal fixed another), which its monitors and
 * links are told. A process parked or asleep in the postoffice (recv,
 * recv_blocking, recv_timeout, sleep) is woken and its call answers that
 * it has been killed; a process in a loop, in join, inside a call
 * bracketed by syncq_po_blocking_begin/_end (a read, a lock), or in a
 * system call, notices at its next postoffice call, the first after that
 * call returns; it must then return from its body: a process that never
 * calls the postoffice again keeps running, and the wait times out. A
 * process spawned while the call runs (by a killed process on its way out,
 * say) starts killed. Attached threads, but the caller's own, are killed
 * too (their calls answer that they have been killed: they should detach),
 * and are not waited for: destroy answers busy until they detach. Once it
 * returns SYNCQ_OK (and every attached thread has detached)
 * syncq_po_destroy succeeds. timeout_ns 0: signal, then look once;
 * UINT64_MAX: wait for ever.
 * SYNCQ_ETIMEDOUT: timeout_ns passed with a process still running (it
 * has been signalled; a later shutdown or wait_exited may wait again).
 * SYNCQ_EINVAL: sys is NULL, or the caller is a spawned process of sys
 * (it would kill and wait for itself). An attached thread of sys may call
 * it (it is spared).
 * Thread safety: any thread, process or not (but sys's spawned ones),
 * several at once, concurrently with every other call on sys. Not from a
 * signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: the system's process-table mutex once per live
 * process (the signal, src/po/links.c), then blocking by purpose as
 * syncq_po_wait_exited, at most timeout_ns.
 * Example: `syncq_po_system *s2; if (syncq_po_create(NULL, &s2) == SYNCQ_OK) {`
 *   `syncq_po_spawn_detached(s2, worker, NULL, NULL);`
 *   `if (syncq_po_shutdown(s2, 1000000000u) == SYNCQ_OK) syncq_po_destroy(s2); }`
 *   `else fputs("a process ignores the postoffice: not destroyed\n", stderr);` */
SYNCQ_API int syncq_po_shutdown(syncq_po_system *sys, uint64_t timeout_ns);

/* The process's pid; -1 for NULL.
 * Thread safety: any thread, any time the handle is valid (the pid is fixed
 * at spawn or attach). Not from a signal handler (the postoffice is not
 * async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API syncq_po_pid syncq_po_pid_of(const syncq_po_proc *self);

/* The limit that stopped the last refused spawn or attach of this system:
 * "max_procs", "RLIMIT_NPROC", "kernel.threads-max", "kernel.pid_max",
 * "cgroup pids.max", "vm.max_map_count" (threads' or fibers' guard pages),
 * "memory", or "unknown (errno ...)";
 * NULL when no spawn has been refused (or sys is NULL). A static string.
 * Thread safety: any thread, process or not, any time the system exists,
 * concurrently with every call on it. Not from a signal handler (the
 * postoffice is not async-signal-safe).
 * Progress: wait-free (one load). */
SYNCQ_API const char *syncq_po_limit_reason(const syncq_po_system *sys);

/* How many processes have been started (spawned or attached) over the
 * system's life, live or not (saturates at UINT32_MAX); 0 for NULL.
 * Thread safety: any thread, process or not, any time the system exists,
 * concurrently with every call on it. Not from a signal handler (the
 * postoffice is not async-signal-safe). The count may be stale at once.
 * Progress: wait-free (one load). */
SYNCQ_API uint32_t syncq_po_count(const syncq_po_system *sys);

/* How many processes are live now: spawned and not yet joined (exited
 * ones included), spawned detached and not yet gone (see
 * syncq_po_spawn_detached), or attached and not detached; 0 for NULL.
 * Thread safety: any thread, process or not, any time the system exists,
 * concurrently with every call on it. Not from a signal handler (the
 * postoffice is not async-signal-safe). The count may be stale at once.
 * Progress: wait-free (one load). */
SYNCQ_API uint32_t syncq_po_live(const syncq_po_system *sys);

/* How many generations a slot of sys has before one of its pid values
 * repeats (see "Pids" in syncq/po.h's file comment); 0 for NULL.
 * Thread safety: any thread, process or not, any time the system exists,
 * concurrently with every call on it. Not from a signal handler (the
 * postoffice is not async-signal-safe).
 * Progress: wait-free. */
SYNCQ_API uint32_t syncq_po_pid_generations(const syncq_po_system *sys);

/* ---- monitors (Erlang's erlang:monitor/2) ---- */

/* The type of a "down" message; its payload is a syncq_po_down. */
#define SYNCQ_PO_DOWN 0xFFFF0D01u
/* The reason of a down message for a process that was not there to watch
 * (exited already, stale, or never had). A process's own reasons are
 * other values: 0 ("normal") unless it set one. */
#define SYNCQ_PO_NOPROC INT32_MIN

typedef struct syncq_po_down {
  uint64_t ref;     /* the monitor's reference, as syncq_po_monitor gave it */
  syncq_po_pid pid; /* the process that went down */
  int32_t reason;   /* its exit reason, or SYNCQ_PO_NOPROC */
} syncq_po_down;

/* Watch pid from self: exactly one message of type SYNCQ_PO_DOWN (payload a
 * syncq_po_down, sender pid) arrives in self's inbox when pid exits
 * (returns from fn, or detaches), carrying its exit reason; at once, with
 * reason SYNCQ_PO_NOPROC, when pid has exited already, is stale, or no
 * process has had it. A reference unique in the system goes to *ref (may
 * be NULL). Several monitors of one pid each get their message. A
 * watcher that exits first just leaves its message undelivered. The down
 * message is allocated and linked at the exit, which has nobody to tell
 * of a failure: it is lost if memory runs out there, or if self's mailbox
 * is lock-based and its lock refuses (a pthread mutex that fails: the
 * "exactly one" does not hold then). The message posted at once (pid not
 * there) is answered instead: SYNCQ_ENOMEM or SYNCQ_ESYS, no monitor,
 * *ref untouched.
 * SYNCQ_EINVAL: self is NULL, the caller is not self, or pid is negative
 * or its slot is outside the table.
 * SYNCQ_EKILLED: self has been killed by an exit signal: return from the
 * body.
 * SYNCQ_ENOMEM: the monitor's record, or the down message for a pid not
 * there, could not be allocated.
 * SYNCQ_ESYS: pid not there, and self's mailbox lock refused the down
 * message (as in syncq_po_send).
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: the system's process-table mutex, held for a scan of
 * self's and pid's links or monitors (src/po/links.c); it never waits for
 * pid itself; it allocates the monitor's record.
 * Example: `uint64_t ref; syncq_po_msg *m; bool down = false;`
 *   `if (syncq_po_monitor(self, pid, &ref) == SYNCQ_OK) while (!down && syncq_po_recv(self, &m) == SYNCQ_OK) {`
 *   `down = m->type == SYNCQ_PO_DOWN; syncq_po_free(self, m); }` (the DOWN message freed too) */
SYNCQ_API int syncq_po_monitor(syncq_po_proc *self, syncq_po_pid pid, uint64_t *ref);

/* Stop watching pid from self (the monitor `ref` that syncq_po_monitor gave
 * it): no down message for it will be posted from now on (one already
 * posted stays in the inbox). It works in a killed process too.
 * SYNCQ_ENOENT: there is no such monitor of self's (pid has exited and
 * its message is posted or on its way, or ref is not one of self's
 * monitors of pid).
 * SYNCQ_EINVAL: self is NULL, the caller is not self, or pid is negative
 * or its slot is outside the table.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: the system's process-table mutex, held for a scan of
 * self's and pid's links or monitors (src/po/links.c); it never waits for
 * pid itself. */
SYNCQ_API int syncq_po_demonitor(syncq_po_proc *self, syncq_po_pid pid, uint64_t ref);

/* The reason the calling process's monitors (and links) will be told
 * when it exits (the last value set before it returns or detaches; 0,
 * SYNCQ_PO_EXIT_NORMAL, by default; a process killed by an exit signal
 * exits with the signal's reason instead).
 * SYNCQ_EINVAL: self is NULL, the caller is not self, or reason is
 * SYNCQ_PO_NOPROC or SYNCQ_PO_EXIT_KILL.
 * SYNCQ_EKILLED: the process has been killed by an exit signal; nothing
 * is set: return from the body.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: wait-free (one store). */
SYNCQ_API int syncq_po_set_exit_reason(syncq_po_proc *self, int32_t reason);

/* ---- exit signals and links (Erlang's exit/2, link/1, trap_exit) ----
 *
 * Exit reasons are int32_t: SYNCQ_PO_EXIT_NORMAL (0) is a normal exit,
 * anything else is abnormal. An exit signal (from syncq_po_exit, or from
 * a linked process's exit) with reason R reaching a process P does, as in
 * Erlang:
 *   - nothing, when P has exited (or is stale), or has been killed already
 *     (the first killing signal fixes its reason);
 *   - R == SYNCQ_PO_EXIT_KILL (sent by syncq_po_exit only): P is killed
 *     with reason SYNCQ_PO_EXIT_KILLED, whether it traps exits or not;
 *   - P traps exits: a message of type SYNCQ_PO_EXIT (payload a
 *     syncq_po_exit_msg: the signal's sender and R; sender field the same)
 *     is posted to P (allocated then); when memory runs out or P's mailbox
 *     is lock-based and its lock refuses, syncq_po_exit answers the
 *     status, and a linked process's exit, with nobody to tell, loses the
 *     message (P is not killed either: it traps);
 *   - R == SYNCQ_PO_EXIT_NORMAL: nothing, unless P sent it to itself
 *     (then P is killed with reason normal);
 *   - otherwise P is killed with reason R.
 * A killed process is not stopped where it runs (a fiber or a thread
 * cannot be unwound safely from outside): it is marked, woken if it
 * sleeps or is parked (recv, recv_blocking, recv_timeout, sleep), and
 * its next postoffice call returns SYNCQ_EKILLED without doing anything:
 * get, send, send_after, recv, recv_blocking, try_recv (even with
 * messages in the inbox), recv_timeout, sleep, yield, monitor, exit,
 * link, trap_exits, set_exit_reason. free, unlink, demonitor, pid_of,
 * stack and detach still work, to release what it holds. The process
 * must then return from its body (an attached thread: detach); it exits
 * with the signal's reason, which its monitors and links are told. A
 * process that makes no postoffice call (a loop that never receives, a
 * join, a system call) notices only at its next call: until it returns
 * it is live (syncq_po_destroy says SYNCQ_EBUSY).
 */

/* The type of an exit signal turned into a message (a trapping process);
 * its payload is a syncq_po_exit_msg. */
#define SYNCQ_PO_EXIT 0xFFFF0E01u
/* Exit reasons with a meaning (SYNCQ_PO_NOPROC too: a link to a pid that
 * was not there). */
#define SYNCQ_PO_EXIT_NORMAL 0
#define SYNCQ_PO_EXIT_KILL (INT32_MIN + 1)   /* an untrappable signal (syncq_po_exit only) */
#define SYNCQ_PO_EXIT_KILLED (INT32_MIN + 2) /* the reason of a process a KILL signal killed */
/* The reason of a fiber process that could not start: a fiber takes its
 * stack when a scheduler first runs it, not at spawn (a spawned process
 * still queued holds none), and when no memory could be had for one the
 * process exits there without running its body; syncq_po_limit_reason()
 * then names the limit. */
#define SYNCQ_PO_EXIT_NOMEM (INT32_MIN + 3)

typedef struct syncq_po_exit_msg {
  syncq_po_pid pid; /* the signal's sender: the linked process that exited, or exit's caller */
  int32_t reason;   /* its reason (SYNCQ_PO_NOPROC: link found no process) */
} syncq_po_exit_msg;

/* Send an exit signal with `reason` from self to pid (the rules of
 * syncq/po.h's "exit signals and links" section);
 * pid may be self's own pid (exit of oneself). Any process may signal any
 * other. Returns SYNCQ_OK once the signal has had its effect (killed pid,
 * posted a message, or nothing: a normal signal to a process that does
 * not trap).
 * SYNCQ_EKILLED: the signal killed the caller itself, or the caller had
 * been killed before (nothing sent): return from the body.
 * SYNCQ_EINVAL: self is NULL, the caller is not self, pid is negative or
 * its slot is outside the table, or reason is SYNCQ_PO_NOPROC.
 * SYNCQ_ENOENT: no process has had pid.
 * SYNCQ_EDEAD: pid has exited or is stale.
 * SYNCQ_ENOMEM: pid traps exits and no message could be had for it: the
 * signal had no effect.
 * SYNCQ_ESYS: pid traps exits and its mailbox lock refused the message
 * (as in syncq_po_send): the signal had no effect.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). Any process
 * may signal any other.
 * Progress: blocking: the system's process-table mutex, held for a scan of
 * self's and pid's links or monitors (src/po/links.c); it never waits for
 * pid itself; a killed process is only marked and woken, never waited for. */
SYNCQ_API int syncq_po_exit(syncq_po_proc *self, syncq_po_pid pid, int32_t reason);

/* Link self and pid (both ways; linking twice is one link; linking to
 * oneself does nothing): when either exits, the other gets an exit
 * signal with its reason, so an abnormal exit kills the partner (which
 * exits, signalling its own links in turn) unless it traps exits, and a
 * normal one reaches trapping partners only, as a message (lost when
 * memory runs out or the partner's mailbox lock refuses it: the exit
 * has nobody to tell). pid not there: a caller that traps exits gets SYNCQ_OK and at once a
 * SYNCQ_PO_EXIT message with reason SYNCQ_PO_NOPROC (Erlang); one that
 * does not gets a status and is not killed (Erlang raises noproc in the
 * caller: here the caller decides).
 * SYNCQ_EDEAD: pid has exited or is stale, and self does not trap exits.
 * SYNCQ_ENOENT: no process has had pid, and self does not trap exits.
 * SYNCQ_EINVAL: self is NULL, the caller is not self, or pid is negative
 * or its slot is outside the table.
 * SYNCQ_ENOMEM: the link's records, or a trapping caller's message for a
 * pid not there, could not be allocated.
 * SYNCQ_ESYS: pid not there, self traps exits, and self's mailbox lock
 * refused the message (as in syncq_po_send).
 * SYNCQ_EKILLED: self has been killed by an exit signal: return from the
 * body.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: the system's process-table mutex, held for a scan of
 * self's and pid's links or monitors (src/po/links.c); it never waits for
 * pid itself; it allocates the link.
 * Example: `syncq_po_trap_exits(self, true);`
 *   `if (syncq_po_link(self, pid) == SYNCQ_OK) puts("linked");` (its exit arrives as a SYNCQ_PO_EXIT message) */
SYNCQ_API int syncq_po_link(syncq_po_proc *self, syncq_po_pid pid);

/* Remove the link between self and pid: once it returns, pid's exit no
 * longer signals self (nor self's exit pid). A trapping self may still
 * find a SYNCQ_PO_EXIT message that pid's exit posted before. Works in a
 * killed process.
 * SYNCQ_ENOENT: they were not linked (never, or the link has fired: pid
 * has exited).
 * SYNCQ_EINVAL: self is NULL, the caller is not self, or pid is negative
 * or its slot is outside the table.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). It works in a
 * killed process too.
 * Progress: blocking: the system's process-table mutex, held for a scan of
 * self's and pid's links or monitors (src/po/links.c); it never waits for
 * pid itself. */
SYNCQ_API int syncq_po_unlink(syncq_po_proc *self, syncq_po_pid pid);

/* Trap exit signals (on) or not (off, the default): a trapping process
 * receives them as SYNCQ_PO_EXIT messages, except SYNCQ_PO_EXIT_KILL.
 * SYNCQ_EINVAL: self is NULL or the caller is not self.
 * SYNCQ_EKILLED: self has been killed already (too late): return from the
 * body.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: the system's process-table mutex, held for a scan of
 * self's and pid's links or monitors (src/po/links.c); it never waits for
 * pid itself. */
SYNCQ_API int syncq_po_trap_exits(syncq_po_proc *self, bool on);

/* ---- registered names (Erlang's register/2, whereis/1, unregister/1) ----
 * A system's names map to live processes: a name is 1 to
 * SYNCQ_PO_NAME_MAX bytes (a NUL-terminated string, compared bytewise), a
 * process has at most one name, and the name goes when the process exits
 * (returns, is killed and returns, or detaches): whereis never answers
 * with a pid that has exited. Any thread may call these, not only
 * processes; they take the system's process-table lock. */
#define SYNCQ_PO_NAME_MAX 63u

/* Name pid.
 * SYNCQ_EEXIST: the name is taken by a live process, or pid has a name
 * already.
 * SYNCQ_EINVAL: sys or name is NULL, name is empty or longer than
 * SYNCQ_PO_NAME_MAX, or pid is negative or its slot is outside the table.
 * SYNCQ_ENOENT: no process has had pid.
 * SYNCQ_EDEAD: pid has exited or is stale.
 * SYNCQ_ENOMEM: the name's entry or the name table could not be
 * allocated.
 * Thread safety: any thread, process or not, concurrently with every other
 * call on sys (the system's process-table lock orders them). Not from a signal handler (the postoffice is not
 * async-signal-safe).
 * Progress: blocking: the system's process-table mutex (src/po/names.c).
 * Example: `syncq_po_register(sys, "logger", pid);` */
SYNCQ_API int syncq_po_register(syncq_po_system *sys, const char *name, syncq_po_pid pid);

/* The pid registered under name, in *pid.
 * SYNCQ_ENOENT: no live process has the name.
 * SYNCQ_EINVAL: sys, name or pid is NULL, or name is empty or longer than
 * SYNCQ_PO_NAME_MAX.
 * Thread safety: any thread, process or not, concurrently with every other
 * call on sys (the system's process-table lock orders them). Not from a signal handler (the postoffice is not
 * async-signal-safe).
 * Progress: blocking: the system's process-table mutex (src/po/names.c).
 * Example: `syncq_po_pid logger;`
 *   `if (syncq_po_whereis(sys, "logger", &logger) == SYNCQ_ENOENT) puts("no logger");` */
SYNCQ_API int syncq_po_whereis(syncq_po_system *sys, const char *name, syncq_po_pid *pid);

/* Take name away from its process (which may register another).
 * SYNCQ_ENOENT: no live process has the name.
 * SYNCQ_EINVAL: sys or name is NULL, or name is empty or longer than
 * SYNCQ_PO_NAME_MAX.
 * Thread safety: any thread, process or not, concurrently with every other
 * call on sys (the system's process-table lock orders them). Not from a signal handler (the postoffice is not
 * async-signal-safe).
 * Progress: blocking: the system's process-table mutex (src/po/names.c). */
SYNCQ_API int syncq_po_unregister(syncq_po_system *sys, const char *name);

/* ---- messages ---- */

/* A message with room for len bytes (its len set to len, type 0) in *out.
 * SYNCQ_EINVAL: self or out is NULL, or len is above SYNCQ_PO_MAX_MSG.
 * SYNCQ_EKILLED: self has been killed by an exit signal: return from the
 * body.
 * SYNCQ_ENOMEM: no message header or payload buffer could be had.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: lock-free: a fiber takes a message its scheduler cached (no
 * atomics), else a pop from self's free list (src/po/postoffice.c); it
 * allocates when both are empty or the payload buffer is too small
 * ("mutex-nofree": every time).
 * Example: `syncq_po_msg *m; if (syncq_po_get(self, 5, &m) == SYNCQ_OK) { memcpy(m->data, "ping", 5); handle(m);`
 *   `syncq_po_free(self, m); }` (a message not sent goes back with syncq_po_free) */
SYNCQ_API int syncq_po_get(syncq_po_proc *self, size_t len, syncq_po_msg **out);

/* Send msg to process `to` (its sender field is set to self's pid). On
 * any error the message is still the caller's.
 * SYNCQ_EINVAL: self or msg is NULL, mode is neither SYNCQ_PO_LINK nor
 * SYNCQ_PO_COPY, msg->len is above msg->cap, or `to` is negative or its
 * slot is outside the table.
 * SYNCQ_ENOENT: no process has had that pid yet.
 * SYNCQ_EDEAD: `to` has exited (or its slot has been reused: a stale pid).
 * SYNCQ_ENOMEM: SYNCQ_PO_COPY, and no message could be had for the copy.
 * SYNCQ_EKILLED: self has been killed by an exit signal: return from the
 * body.
 * SYNCQ_ESYS: the lock of a lock-based mailbox ("mutex", "mutex-nofree",
 * "two-lock": a pthread mutex) could not be taken (errno says why);
 * nothing was enqueued.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). Any number of
 * processes may send to one process at the same time.
 * Progress: the system's mailbox's enqueue (syncq_po_mailbox_info,
 * src/po/mbox_<name>.c): wait-free for "mpsc", lock-free for "nonblocking",
 * blocking for "mutex", "mutex-nofree", "ttas" and "two-lock"; COPY adds a
 * lock-free pop and push (and may allocate); waking a sleeping receiver is
 * one futex wake or one push onto a fiber run queue.
 * Example: `syncq_po_msg *m; if (syncq_po_get(self, 5, &m) == SYNCQ_OK) {`
 *   `memcpy(m->data, "ping", 5); m->len = 5; m->type = 1;`
 *   `if (syncq_po_send(self, to, m, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, m); }`
 *   (LINK: once sent, m belongs to the receiver; not sent, it is still ours) */
SYNCQ_API int syncq_po_send(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *msg, syncq_po_send_mode mode);

/* Receive the next message of the inbox into *out, yielding the processor
 * while the inbox is empty (002 §4). A thread yields to the kernel
 * (sched_yield) and looks again, until a message is there. A fiber
 * yields once to the other runnable fibers of its scheduler (often the
 * one its last send woke, which may answer) and then parks until a
 * message arrives (polling would make each message wait for a pass over
 * every fiber); its yield wakes no idle scheduler and is not stolen for.
 * A fiber's recv_blocking and recv_timeout wait the same way.
 * SYNCQ_EINVAL: self or out is NULL, or the caller is not the process
 * `self` (another thread or fiber: the inbox has one consumer).
 * SYNCQ_EKILLED: self has been killed by an exit signal (before or while
 * it waited): return from the body.
 * SYNCQ_ESYS: the mailbox's lock could not be taken (as in syncq_po_send);
 * nothing was taken from the inbox.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). The inbox has
 * one consumer: only self receives from it. From a fiber: it yields to the
 * other fibers of its scheduler, then parks.
 * Progress: blocking by purpose: it waits for a message (a thread yields
 * the processor in a loop, a fiber parks); the dequeue itself is the
 * mailbox's (see syncq_po_send).
 * Example: `syncq_po_msg *m; while (syncq_po_recv(self, &m) == SYNCQ_OK) { handle(m); syncq_po_free(self, m); }` */
SYNCQ_API int syncq_po_recv(syncq_po_proc *self, syncq_po_msg **out);

/* Receive the next message of the inbox into *out, sleeping while the inbox
 * is empty: as syncq_po_recv, but a thread sleeps on a futex, costing no
 * CPU; the next send to this process wakes it. A fiber waits as in
 * syncq_po_recv: it yields once to the other runnable fibers of its
 * scheduler (a reply from one of them is taken without a park), then
 * parks until a send wakes it.
 * SYNCQ_EINVAL: self or out is NULL, or the caller is not the process
 * `self`.
 * SYNCQ_EKILLED: self has been killed by an exit signal (before or while
 * it slept): return from the body.
 * SYNCQ_ESYS: the mailbox's lock could not be taken (as in syncq_po_send);
 * nothing was taken from the inbox.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). The inbox has
 * one consumer: only self receives from it.
 * Progress: blocking by purpose: it sleeps (a thread on a futex, a fiber
 * parked) until a send wakes it.
 * Example: `syncq_po_msg *m; if (syncq_po_recv_blocking(self, &m) == SYNCQ_OK) { handle(m);`
 *   `syncq_po_free(self, m); }` */
SYNCQ_API int syncq_po_recv_blocking(syncq_po_proc *self, syncq_po_msg **out);

/* Take the next message of the inbox into *out if there is one, without
 * waiting.
 * SYNCQ_EMPTY: the inbox held no message and none was on its way: every
 * send that returned before this call began has been taken (a
 * send_after's message counts from its delivery); an exact answer, with
 * every mailbox.
 * SYNCQ_EBUSY: "mpsc" only: a message is on its way: a sender is between
 * the two steps of its send (its exchange of the inbox's tail and its
 * link), so neither its message nor any sent after it (nor one before it
 * that is not yet taken) can be taken until that sender goes on; try
 * again (yield first: the sender may need the processor). The other
 * mailboxes never answer it: a send under a lock is one step for the
 * receiver, and "nonblocking"'s send is linked by one CAS.
 * SYNCQ_EINVAL: self or out is NULL, or the caller is not the process
 * `self`.
 * SYNCQ_EKILLED: self has been killed by an exit signal (even with
 * messages in the inbox): return from the body.
 * SYNCQ_ESYS: the mailbox's lock could not be taken (as in syncq_po_send);
 * nothing was taken from the inbox.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). The inbox has
 * one consumer: only self receives from it.
 * Progress: it never waits for a message (SYNCQ_EMPTY, SYNCQ_EBUSY); the
 * dequeue is the mailbox's: wait-free for "mpsc" (which answers
 * SYNCQ_EBUSY behind a preempted sender), lock-free for "nonblocking",
 * blocking for the lock-based mailboxes.
 * Example: `syncq_po_msg *m; int r;`
 *   `while ((r = syncq_po_try_recv(self, &m)) == SYNCQ_OK || r == SYNCQ_EBUSY) {`
 *   `if (r == SYNCQ_EBUSY) { (void)syncq_po_yield(self); continue; } handle(m); syncq_po_free(self, m); }`
 *   (a final drain: it takes every message sent before it began, under
 *   every mailbox, and ends at SYNCQ_EMPTY, or SYNCQ_EKILLED) */
SYNCQ_API int syncq_po_try_recv(syncq_po_proc *self, syncq_po_msg **out);

/* Receive with a deadline: the next message of the inbox into *out, or
 * SYNCQ_ETIMEDOUT once timeout_ns nanoseconds (monotonic clock) have
 * passed with the inbox empty. timeout_ns 0: look once, as try_recv
 * (SYNCQ_OK; SYNCQ_ETIMEDOUT where try_recv finds the inbox empty; or
 * SYNCQ_EBUSY: "mpsc", a message on its way); UINT64_MAX: wait for ever (recv_blocking). A
 * wait (timeout_ns above 0) waits out a sender between its two steps as
 * recv does, and answers SYNCQ_ETIMEDOUT if its deadline passes first
 * (the message is taken by a later receive). A fiber
 * yields once to the other runnable fibers of its scheduler, as
 * syncq_po_recv does (a reply from one of them is taken without a park
 * or a timer), then parks, woken by a send or by its scheduler's timer
 * heap when the deadline passes (late by as long as that scheduler is
 * busy running a fiber that does not switch); a thread sleeps on a timed
 * futex wait.
 * Erlang's `receive ... after T`.
 * SYNCQ_ETIMEDOUT: timeout_ns passed with no message taken (timeout_ns 0:
 * the inbox empty, none on its way).
 * SYNCQ_EBUSY: timeout_ns 0 only, "mpsc" only: a message on its way, as
 * in syncq_po_try_recv.
 * SYNCQ_EINVAL: self or out is NULL, or the caller is not the process
 * `self`.
 * SYNCQ_ENOMEM: a fiber's scheduler's timer heap could not grow.
 * SYNCQ_EKILLED: self has been killed by an exit signal (before or while
 * it waited): return from the body.
 * SYNCQ_ESYS: the mailbox's lock could not be taken (as in syncq_po_send);
 * nothing was taken from the inbox.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). The inbox has
 * one consumer: only self receives from it.
 * Progress: blocking by purpose, at most timeout_ns (a fiber's wake-up is
 * late by as long as its scheduler runs a fiber that does not switch).
 * Example: `syncq_po_msg *m; int r = syncq_po_recv_timeout(self, 1000000000, &m);`
 *   `if (r == SYNCQ_OK) { handle(m); syncq_po_free(self, m); } else if (r == SYNCQ_ETIMEDOUT) puts("no message in 1 s");` */
SYNCQ_API int syncq_po_recv_timeout(syncq_po_proc *self, uint64_t timeout_ns, syncq_po_msg **out);

/* Sleep ns nanoseconds. A fiber parks on its scheduler's timer heap (the
 * other fibers run meanwhile: never call sleep(3) or nanosleep from a
 * fiber, which blocks its scheduler thread); messages that arrive stay in
 * the inbox. A thread sleeps on a timed futex wait (a killing exit signal
 * ends the sleep).
 * SYNCQ_EINVAL: self is NULL or the caller is not `self`.
 * SYNCQ_ENOMEM: a fiber's scheduler's timer heap could not grow.
 * SYNCQ_EKILLED: self has been killed by an exit signal (before or while
 * it slept): return from the body.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe). From a fiber:
 * it parks (never call sleep(3) there).
 * Progress: blocking by purpose: it waits ns nanoseconds. */
SYNCQ_API int syncq_po_sleep(syncq_po_proc *self, uint64_t ns);

/* Announce a call that will block the calling thread (read on a pipe, a
 * pthread mutex held elsewhere, a long computation): between begin and
 * end, the fibers queued on the caller's scheduler are served at once by
 * a spare scheduler thread instead of waiting for the fiber system's
 * monitor to notice the block (it does after about 10 ms without a
 * switch). Make no postoffice call that waits (recv, sleep, yield, join)
 * in between. A thread process (attached, or of a thread system) blocks
 * only itself: both return SYNCQ_OK and do nothing. Call on the process's
 * own thread or fiber, with its own handle.
 * SYNCQ_EINVAL: self is NULL, or (a fiber) a begin after a begin with no
 * end between.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking, briefly: the fiber system's mutex to hand the
 * caller's queue to a spare scheduler thread; a thread process does nothing
 * (wait-free).
 * Example: `syncq_po_blocking_begin(self); work(); syncq_po_blocking_end(self);` (work: a read, a lock) */
SYNCQ_API int syncq_po_blocking_begin(syncq_po_proc *self);
/* End what syncq_po_blocking_begin announced: the caller's scheduler is
 * no longer taken to be blocked, and the spare serving it retires once
 * it has handed its fibers back. Call on the process's own thread or
 * fiber, with its own handle.
 * SYNCQ_EINVAL: self is NULL, or (a fiber) an end with no begin.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: as syncq_po_blocking_begin. */
SYNCQ_API int syncq_po_blocking_end(syncq_po_proc *self);

/* Send msg to `to` after delay_ns nanoseconds (linked, as SYNCQ_PO_LINK;
 * delay 0: syncq_po_send at once). The message is the postoffice's from a
 * successful call on: it is delivered when its time comes if `to` still
 * lives, else dropped (and freed with the system if it is destroyed
 * first). It is dropped too, with nobody to tell, when `to`'s mailbox is
 * lock-based and its lock refuses then (a pthread mutex that fails). Fiber system: the timer waits on the heap of the caller's
 * scheduler (a plain thread's: one chosen round robin); thread system: on
 * a timer thread the system starts on first use. Any process may call it
 * for its own `self`. The statuses are checked now; on an error the
 * message is still the caller's.
 * SYNCQ_EINVAL: self or msg is NULL, msg->len is above msg->cap, or `to`
 * is negative or its slot is outside the table.
 * SYNCQ_ENOENT: no process has had that pid yet.
 * SYNCQ_EDEAD: `to` has exited or is stale.
 * SYNCQ_ENOMEM: the timer, or room for it in its heap, could not be
 * allocated.
 * SYNCQ_ELIMIT: the thread system's timer thread could not start.
 * SYNCQ_EKILLED: self has been killed by an exit signal: return from the
 * body.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: blocking: it allocates the timer and takes the mutex of the
 * timer heap it joins (the caller's scheduler's, or the thread system's
 * timer thread's, started on first use: src/po/timer.c). */
SYNCQ_API int syncq_po_send_after(syncq_po_proc *self, syncq_po_pid to, syncq_po_msg *msg, uint64_t delay_ns);

/* Let other processes run: a fiber yields to the other runnable fibers of
 * its scheduler (returning at once when there are none), a thread to the
 * kernel (sched_yield). For processes that wait on something other than
 * their inbox (a fiber must not spin without yielding).
 * SYNCQ_EINVAL: self is NULL or the caller is not the process `self`.
 * SYNCQ_EKILLED: self has been killed by an exit signal (before or while
 * the others ran): return from the body.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: wait-free as far as the postoffice goes: one switch to the next
 * runnable fiber (or sched_yield); it returns when the scheduler runs the
 * caller again. */
SYNCQ_API int syncq_po_yield(syncq_po_proc *self);

/* The calling process's stack: its lowest address in *lo and its size
 * (either may be NULL). A fiber: its pooled stack; a thread: its thread's
 * stack.
 * SYNCQ_EINVAL: self is NULL or the caller is not `self`.
 * SYNCQ_ESYS: the thread's stack cannot be read (pthread_getattr_np).
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: wait-free for a fiber; a thread's stack is read from the system
 * (pthread_getattr_np). */
SYNCQ_API int syncq_po_stack(const syncq_po_proc *self, void **lo, size_t *size);

/* Give a message back for reuse (the calling fiber's scheduler's cache or
 * the own free list).
 * SYNCQ_EINVAL: self or msg is NULL.
 * Thread safety: by the process self itself (its own thread or fiber, with
 * its own handle), concurrently with every other process's calls. Not from
 * a signal handler (the postoffice is not async-signal-safe).
 * Progress: lock-free: a fiber's message goes to its scheduler's cache
 * while it has room (no atomics), else a push onto self's free list
 * ("mutex-nofree": free()).
 * Example: `syncq_po_msg *m; if (syncq_po_recv(self, &m) == SYNCQ_OK) { handle(m); syncq_po_free(self, m); }` */
SYNCQ_API int syncq_po_free(syncq_po_proc *self, syncq_po_msg *msg);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_PO_H */
