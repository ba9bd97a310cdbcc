/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syncq/mp/sched.h — multiprogramming: the pseudo-scheduler of 001 §4 and the
 * kernel interface that preemption-safe and scheduler-conscious locks
 * assume (001 §2, Symunix-style no-preemption requests; 003 §3.4, a
 * readable "preempted" state per thread).
 *
 * The pseudo-scheduler time-slices the registered threads of m
 * applications ("multiprogramming level" m) over p virtual processors:
 * every quantum (default 10 ms, 001 §4) each processor is given to one
 * application, and the threads of the other applications on that
 * processor are preempted. A preemption is a signal whose handler blocks
 * on a futex until the scheduler resumes the thread, as in 001 (whose
 * handler spun on a flag; blocking leaves the real core to the threads
 * that run). Two policies:
 *   SYNCQ_MP_TIMESHARE  processors rotate independently, staggered: in
 *                       slice s processor c runs application (s + c) mod m
 *   SYNCQ_MP_GANG       co-scheduling: every processor runs application
 *                       s mod m in slice s (003 §3.4, "gang scheduling")
 * An application with no thread registered on a processor stands for one
 * that is not measured (001 measures one application; the other m - 1 are
 * the time its handler spends waiting).
 *
 * The interface the locks use (all async-signal-safe, all cheap no-ops
 * for a thread that is not registered with a running scheduler: the
 * request then costs one thread-local load and a branch each way):
 *   syncq_mp_nopreempt_begin / _end   ask not to be preempted (a store
 *       to the thread's own record, as 001 §2's flag): a preemption that
 *       comes while the request stands is deferred (the preemption
 *       handler, on the thread itself, sees the request), for at most
 *       nopreempt_limit_ns after the scheduler's decision, and then taken
 *       anyway; at _end a thread whose preemption was decided meanwhile
 *       gives up its processor itself.
 *   syncq_mp_self / syncq_mp_is_preempted   who am I; is that thread
 *       stopped in the handler right now.
 *
 * Limits: one signal number (default SIGRTMIN + SYNCQ_MP_SIGNAL_OFFSET) is
 * taken over from the first syncq_mp_create on (the handler stays
 * installed, ignoring threads that are not registered); registered
 * threads must not block it. Handles hold pointers: not process-shared. The Linux rseq time-slice
 * extension, a real kernel no-preemption request, is not used: the
 * kernel headers of the build machine (linux/rseq.h) describe none;
 * syncq_mp_rseq_slice_available() says so at run time.
 *
 * This header sits below the locks and the families (docs/contributing.md,
 * "Layers"): the preemption-safe and scheduler-conscious locks include it;
 * it includes none of them. syncq/mp.h adds the families' preemption-safe
 * registry entries.
 */
#ifndef SYNCQ_MP_SCHED_H
#define SYNCQ_MP_SCHED_H

#include "syncq/export.h"

#include <stdbool.h>
#include <stdint.h>

#include "syncq/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYNCQ_MP_DEFAULT_QUANTUM_NS 10000000ull  /* 001 §4: 10 ms */
#define SYNCQ_MP_DEFAULT_NOPREEMPT_NS 2000000ull /* honour a request for up to 2 ms */
#define SYNCQ_MP_DEFAULT_MAX_THREADS 64u
#define SYNCQ_MP_MAX_THREADS 1024u
#define SYNCQ_MP_MAX_LEVEL 64u
#define SYNCQ_MP_MAX_PROCS 1024u
#define SYNCQ_MP_SIGNAL_OFFSET 7 /* default signal: SIGRTMIN + this */

typedef enum syncq_mp_policy { SYNCQ_MP_TIMESHARE = 0, SYNCQ_MP_GANG = 1 } syncq_mp_policy;

typedef struct syncq_mp_config {
  unsigned level;              /* applications per processor, 1 .. SYNCQ_MP_MAX_LEVEL */
  unsigned procs;              /* virtual processors, 1 .. SYNCQ_MP_MAX_PROCS */
  uint64_t quantum_ns;         /* > 0 (0 is SYNCQ_EINVAL) */
  uint64_t nopreempt_limit_ns; /* bound of a no-preemption request; 0: the default */
  unsigned max_threads;        /* registrations at once; 0: the default; > MAX: EINVAL */
  int policy;                  /* syncq_mp_policy */
  int signo;                   /* preemption signal; 0: SIGRTMIN + SYNCQ_MP_SIGNAL_OFFSET */
} syncq_mp_config;

/* Fill *cfg with the defaults for level m on p processors.
 * Thread safety: any thread (it writes only *cfg); from a signal handler
 * too.
 * Progress: wait-free. */
SYNCQ_API void syncq_mp_config_default(syncq_mp_config *cfg, unsigned level, unsigned procs);

typedef struct syncq_mp_sched syncq_mp_sched;
typedef struct syncq_mp_thread syncq_mp_thread;

/* Counters of a scheduler (since it started). */
typedef struct syncq_mp_stats {
  uint64_t slices;           /* quanta elapsed */
  uint64_t preemptions;      /* preemptions not deferred, plus those forced at the bound */
  uint64_t deferrals;        /* preemptions that found the thread in a no-preemption request */
  uint64_t forced;           /* deferred preemptions forced at the bound (requests overrun) */
  uint64_t self_preemptions; /* threads that gave up the processor at _end */
  uint64_t resumes;          /* resumptions */
} syncq_mp_stats;

/* Create and start a scheduler (its thread runs until syncq_mp_destroy).
 * SYNCQ_EINVAL: cfg or out is NULL, level 0 or above SYNCQ_MP_MAX_LEVEL,
 * procs 0 or above SYNCQ_MP_MAX_PROCS, quantum_ns 0, max_threads above
 * SYNCQ_MP_MAX_THREADS, an unknown policy, or a signal number that is not
 * one (above SIGRTMAX, SIGKILL, SIGSTOP).
 * SYNCQ_ENOMEM: the scheduler or its thread table could not be allocated.
 * SYNCQ_ESYS: sigaction or pthread_create failed; nothing is left made.
 * Thread safety: any thread; not from a signal handler (malloc,
 * pthread_create, sigaction). Schedulers are private to the process.
 * Progress: not a concurrent operation (the scheduler is new); it starts a
 * thread and installs the signal handler.
 * Example: `syncq_mp_config cfg; syncq_mp_config_default(&cfg, 2, 1); syncq_mp_sched *s;`
 *   `int r = syncq_mp_create(&cfg, &s);`
 *   `if (r != SYNCQ_OK) fprintf(stderr, "mp: %s\n", syncq_strerror(r)); else { work(); syncq_mp_destroy(s); }` */
SYNCQ_API int syncq_mp_create(const syncq_mp_config *cfg, syncq_mp_sched **out);

/* Stop the scheduler (as syncq_mp_stop) and free it. Every thread must
 * have unregistered first.
 * SYNCQ_EINVAL: s is NULL.
 * SYNCQ_EBUSY: a thread is still registered; the scheduler is stopped
 * (that thread is left running) but nothing is freed.
 * Thread safety: once every registered thread has unregistered, by one
 * thread (another call on s must not run meanwhile); not from a signal
 * handler.
 * Progress: blocking: it stops the scheduler as syncq_mp_stop does (joins
 * its thread, takes its mutex); SYNCQ_EBUSY rather than wait for a
 * registered thread. */
SYNCQ_API int syncq_mp_destroy(syncq_mp_sched *s);

/* Stop scheduling: the scheduler thread ends and every registered thread
 * is resumed and left running. Idempotent. Registered threads may then
 * unregister and exit.
 * SYNCQ_EINVAL: s is NULL.
 * Thread safety: any thread, concurrently with other stops and with
 * registered threads' calls (a second stop does not join again); not from a
 * signal handler.
 * Progress: blocking: it joins the scheduler thread and takes the
 * scheduler's mutex to resume the stopped threads. */
SYNCQ_API int syncq_mp_stop(syncq_mp_sched *s);

/* Register the calling thread as application app's thread on processor
 * proc. From now on it runs only when its application holds its
 * processor: when it does not hold it in the current slice, the call
 * returns only once its turn comes. *out (out may be NULL) gets the
 * thread's handle.
 * SYNCQ_EINVAL: s is NULL, app >= level, proc >= procs, or the calling
 * thread is registered already (with any scheduler).
 * SYNCQ_ELIMIT: max_threads threads are registered with s.
 * Thread safety: the calling thread registers itself, concurrently with
 * other threads' register and unregister on the same scheduler; not from a
 * signal handler (a mutex).
 * Progress: blocking: it takes the scheduler's mutex and, when its
 * application does not hold its processor in the current slice, returns
 * only once its turn comes. */
SYNCQ_API int syncq_mp_register(syncq_mp_sched *s, unsigned app, unsigned proc, syncq_mp_thread **out);

/* Unregister the calling thread (it must be the one that registered t);
 * it is never preempted afterwards.
 * SYNCQ_EINVAL: t is NULL or is not the calling thread's handle.
 * Thread safety: by the thread that registered t only, concurrently with
 * other threads' calls; not from a signal handler.
 * Progress: blocking (the scheduler's mutex, held briefly). */
SYNCQ_API int syncq_mp_unregister(syncq_mp_thread *t);

/* The calling thread's handle, NULL when it is not registered.
 * Thread safety: any thread, for itself; from a signal handler too
 * (src/mp/sched.c: signal-safe).
 * Progress: wait-free (a thread-local load). */
SYNCQ_API syncq_mp_thread *syncq_mp_self(void);

/* True when t is stopped by the scheduler right now (in the preemption
 * handler, or given up at the end of a request). False for NULL. A hint
 * that may be stale by the time it is used.
 * Thread safety: any thread, concurrently with the scheduler (one load; the
 * answer may be stale at once); from a signal handler too.
 * Progress: wait-free. */
SYNCQ_API bool syncq_mp_is_preempted(const syncq_mp_thread *t);

/* How many times t has been stopped (preempted or given up); 0 for NULL.
 * Thread safety: any thread, concurrently with the scheduler (one load);
 * from a signal handler too.
 * Progress: wait-free. */
SYNCQ_API uint64_t syncq_mp_preempt_count(const syncq_mp_thread *t);

/* Ask not to be preempted (nests). No-op for unregistered threads. The
 * request is a store to the calling thread's own record, read by the
 * preemption handler on the same thread (no atomic read-modify-write, no
 * hardware fence; src/mp/sched.c).
 * Thread safety: the calling thread, for itself (requests nest); from a
 * signal handler too (src/mp/sched.c: signal-safe).
 * Progress: wait-free (a load and a store).
 * Example: `syncq_mp_nopreempt_begin(); work(); syncq_mp_nopreempt_end();` (work: a short critical section) */
SYNCQ_API void syncq_mp_nopreempt_begin(void);
/* End the request; when the outermost request ends and the scheduler
 * deferred a preemption meanwhile, stop now until resumed.
 * Thread safety: the calling thread, once per begin; from a signal handler
 * too (src/mp/sched.c: signal-safe).
 * Progress: wait-free (a load and a store; the outermost end one more load)
 * unless the scheduler decided a preemption during the request: then the
 * outermost end stops the thread until the scheduler resumes it (blocking,
 * by design). */
SYNCQ_API void syncq_mp_nopreempt_end(void);

/* A copy of the scheduler's counters, into *out.
 * SYNCQ_EINVAL: s or out is NULL.
 * Thread safety: any thread, concurrently with the scheduler (each counter
 * is one atomic load: the copy is not one snapshot); from a signal handler
 * too.
 * Progress: wait-free. */
SYNCQ_API int syncq_mp_get_stats(const syncq_mp_sched *s, syncq_mp_stats *out);

/* True when the running kernel offers the rseq time-slice extension and
 * this build can use it. Always false in this build: the kernel headers it
 * was built with (linux/rseq.h) describe no such extension.
 * Thread safety: any thread, any time, from a signal handler too.
 * Progress: wait-free. */
SYNCQ_API bool syncq_mp_rseq_slice_available(void);

#ifdef __cplusplus
}
#endif
#endif /* SYNCQ_MP_SCHED_H */
