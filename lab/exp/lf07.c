/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lf07.c — LaForest 2007 (paper 002): the parallel sort micro-benchmark of
 * §5 on the postoffice (syncq/po.h), Figures 8-14.
 *
 * lf07-sort: a Controller process spawns a Slicer and N Sorter processes
 * (each answers with a handshake message), then tells the Slicer to sort.
 * The Slicer owns the array of A integers (rand() % A after srand(1), 002
 * footnote 7; A = 100,000 as in 002, smaller for --quick) and sorts it by
 * even-odd bubble sort of slices (Figures 6-7): 2N phases; in even phases
 * slice i is [i*A/N, (i+1)*A/N), in odd phases the slices are shifted by
 * half a slice (the last Sorter gets an empty slice, 002 footnote 5). Each
 * phase the Slicer sends every Sorter a copy of its slice and takes the N
 * sorted replies back into the array: (2N)^2 messages of about A/N
 * integers in all. A Sorter bubble-sorts the slice (with the "already
 * sorted" flag: a pass without a swap ends it) and sends the message
 * back. Receiving is 002's Recv(): dequeue, yielding while empty.
 *
 * Variants: each of the six mailboxes, sending by LINK or COPY; the
 * "empty" work that moves the same messages but does not sort; and the
 * sequential baseline: one thread doing each slice of each phase in turn,
 * no messages. Time is from the Controller's start message to the
 * Slicer's reply (spawning not included). Every run's result is checked
 * against qsort of the same input (empty work: against the input itself),
 * and a mismatch aborts the run.
 *
 * The watch over the control messages (lab/po_faults.h): each process
 * counts its handshake before sending it, the Slicer marks the start it
 * took and the done it sent, and each process marks the quit it took;
 * the Controller reads those marks only while it waits (for the
 * handshakes, for the done, for every quit to be taken before it joins),
 * with the Slicer's watch's bound: a handshake sent and not received, a
 * start not taken or a done not received, a quit not taken, once nothing
 * has moved for LAB_QUEUE_LOST_MS, fails the run naming it, and the
 * Controller sends quits (uncounted) to whoever still waits, so every
 * process returns. A handshake more than the processes, a second start or
 * a second done fails it as a duplicate; a second quit is dropped unread
 * at its receiver's return and is not seen.
 *
 * Memory per process: each Sorter counts the resident pages of its own
 * stack (mincore) before it exits; the Controller also records VmRSS
 * before spawning and after every handshake.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../lab.h"
#include "../po_faults.h"
#include "lf07.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/po.h"
#include "syncq/pr.h"

#define LF07_LENGTH 100000 /* 002 §5 */
#define LF07_QUICK_LENGTH 20000
#define LF07_SMOKE_LENGTH 2000
#define NS_PER_MS 1e6

enum { T_HELLO = 1, T_START, T_SLICE, T_DONE, T_QUIT };

typedef struct slice_hdr {
  int32_t index; /* which Sorter's slice of the current phase */
  int32_t phase; /* the phase it belongs to: a reply from another phase is a duplicate */
  int32_t swapped;
} slice_hdr;

/* A Sorter's counts, on a line of its own: only that Sorter writes them,
 * so counting costs no cache line another core holds; the Slicer sums
 * them only while it waits (slicer_wait). */
struct sorter_count {
  _Alignas(SYNCQ_CACHELINE) _Atomic(uint64_t) taken;
  _Atomic(uint64_t) replied;
  _Atomic(int) quit; /* took its quit (seq_cst: once, read by the Controller's watch) */
};

typedef struct prog {
  const lf07_params *p;
  syncq_po_system *sys;
  int *array;
  int length;
  syncq_po_pid controller, slicer;
  syncq_po_pid *sorters;
  uint64_t t0, t1;
  long rss_before, rss_after;
  _Atomic(uint64_t) stack_bytes; /* resident stack bytes, summed over Sorters */
  _Atomic(int) stack_unknown;
  int status; /* first failure, SYNCQ_OK if none (Controller and Slicer only) */
  const char *what;
  pthread_mutex_t fail_lock;
  /* The watch over the Slicer's waits (lab/po_faults.h): each Sorter's
   * count of the slices it took and the replies it sent; the Slicer's
   * own sends and receipts; its verdict, if any. */
  struct sorter_count *counts; /* [sorters] */
  uint64_t sent, received;
  unsigned char *seen; /* [sorters]: this phase's replies so far */
  char why[200];       /* the first verdict (under fail_lock) */
  /* The watch over the control messages (seq_cst: each written once or
   * a few times a run, read by the Controller while it waits). */
  _Atomic(int) hellos;      /* handshakes sent */
  _Atomic(int) took_start;  /* the Slicer took its start */
  _Atomic(int) sent_done;   /* the Slicer sent its done */
  _Atomic(int) slicer_quit; /* the Slicer took its quit */
  _Atomic(int) quits;       /* quits taken */
} prog;

/* ---- slices ---- */

static int64_t block_start(int64_t i, int64_t n, int64_t length) { return i * length / n; }

/* Slice i of a phase: [*lo, *hi). */
static void slice_bounds(int phase, int i, int n, int length, int64_t *lo, int64_t *hi) {
  if (phase % 2 == 0) {
    *lo = block_start(i, n, length);
    *hi = block_start(i + 1, n, length);
  } else if (i == n - 1) {
    *lo = *hi = length; /* 002 footnote 5: the last Sorter neither moves nor sorts */
  } else {
    *lo = (block_start(i, n, length) + block_start(i + 1, n, length)) / 2;
    *hi = (block_start(i + 1, n, length) + block_start(i + 2, n, length)) / 2;
  }
}

/* Bubble sort with the "already sorted" flag (002 §5, footnote 3): passes
 * over a shrinking prefix until one makes no swap. Each pass carries the
 * larger of two neighbours forward with min/max instead of a branch (the
 * same comparisons and the same result as the textbook swap, without a
 * mispredicted branch per element on random data). Returns 1 if it swapped. */
static int bubble(int *a, int64_t n) {
  int any = 0;
  for (int64_t end = n; end > 1; end--) {
    int carry = a[0], swapped = 0;
    for (int64_t j = 1; j < end; j++) {
      int x = a[j];
      swapped |= x < carry;
      a[j - 1] = x < carry ? x : carry;
      carry = x < carry ? carry : x;
    }
    a[end - 1] = carry;
    if (!swapped) break;
    any = 1;
  }
  return any;
}

void lf07_sort_sequential(int sorters, bool empty, int *array, int length) {
  if (empty || sorters < 1) return;
  for (int phase = 0; phase < 2 * sorters; phase++)
    for (int i = 0; i < sorters; i++) {
      int64_t lo, hi;
      slice_bounds(phase, i, sorters, length, &lo, &hi);
      bubble(array + lo, hi - lo);
    }
}

void lf07_make_input(int *array, int length) {
  srand(1);
  for (int i = 0; i < length; i++) array[i] = rand() % length;
}

/* ---- processes ---- */

static void fail(prog *g, int status, const char *what) {
  pthread_mutex_lock(&g->fail_lock);
  if (g->status == SYNCQ_OK) {
    g->status = status;
    g->what = what;
  }
  pthread_mutex_unlock(&g->fail_lock);
}

/* The first verdict's text, "<backend>:<mailbox> " and fmt's. */
__attribute__((format(printf, 2, 3))) static void verdict(prog *g, const char *fmt, ...) {
  pthread_mutex_lock(&g->fail_lock);
  if (g->why[0] == '\0') {
    int k = snprintf(g->why, sizeof g->why, "%s:%s ", syncq_po_backend_of(g->sys), g->p->mailbox);
    va_list ap;
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < sizeof g->why) vsnprintf(g->why + k, sizeof g->why - (size_t)k, fmt, ap);
    va_end(ap);
  }
  pthread_mutex_unlock(&g->fail_lock);
}

/* A message with no payload to `to` (counted by the lab's fault, or not:
 * the Controller's release of a process whose quit was lost); false on
 * failure. */
static bool send_signal(syncq_po_proc *self, syncq_po_pid to, uint32_t type, bool counted) {
  syncq_po_msg *m;
  if (syncq_po_get(self, 0, &m) != SYNCQ_OK) return false;
  m->type = type;
  if ((counted ? lab_po_send(self, to, m, SYNCQ_PO_LINK) : syncq_po_send(self, to, m, SYNCQ_PO_LINK)) != SYNCQ_OK) {
    syncq_po_free(self, m);
    return false;
  }
  return true;
}

static bool signal_to(syncq_po_proc *self, syncq_po_pid to, uint32_t type) { return send_signal(self, to, type, true); }

/* A handshake, counted first for the Controller's watch. */
static bool hello(syncq_po_proc *self, prog *g) {
  atomic_fetch_add(&g->hellos, 1);
  return signal_to(self, g->controller, T_HELLO);
}

/* Resident bytes of the calling process's stack (mincore), or -1. */
static long resident_stack_bytes(syncq_po_proc *self) {
  void *addr;
  size_t size;
  int e = syncq_po_stack(self, &addr, &size);
  long page = sysconf(_SC_PAGESIZE);
  if (e != SYNCQ_OK || page <= 0) return -1;
  unsigned char vec[64];
  long resident = 0;
  uintptr_t start = (uintptr_t)addr & ~((uintptr_t)page - 1), end = (uintptr_t)addr + size;
  while (start < end) {
    size_t pages = (end - start + (size_t)page - 1) / (size_t)page;
    if (pages > sizeof vec) pages = sizeof vec;
    if (mincore((void *)start, pages * (size_t)page, vec) != 0) return -1;
    for (size_t i = 0; i < pages; i++) resident += vec[i] & 1;
    start += pages * (size_t)page;
  }
  return resident * page;
}

static void sorter(syncq_po_proc *self, void *arg) {
  prog *g = arg;
  if (!hello(self, g)) return;
  int me = -1; /* the index of the slices it takes (the Slicer's) */
  for (;;) {
    syncq_po_msg *m;
    if (syncq_po_recv(self, &m) != SYNCQ_OK) return;
    if (m->type == T_QUIT) {
      syncq_po_free(self, m);
      long b = resident_stack_bytes(self);
      if (b < 0) atomic_store(&g->stack_unknown, 1);
      else atomic_fetch_add(&g->stack_bytes, (uint64_t)b);
      for (int i = 0; me < 0 && i < g->p->sorters; i++) /* no slice taken: a run that failed early */
        if (g->sorters[i] == syncq_po_pid_of(self)) me = i;
      if (me >= 0) atomic_store(&g->counts[me].quit, 1);
      atomic_fetch_add(&g->quits, 1);
      return;
    }
    slice_hdr h;
    memcpy(&h, m->data, sizeof h);
    /* the index is the Slicer's: a header it did not write counts nowhere
     * (and the Slicer finds the reply malformed) */
    struct sorter_count *c = h.index >= 0 && h.index < g->p->sorters ? &g->counts[h.index] : NULL;
    if (c) me = h.index;
    /* relaxed: one writer; the Slicer reads the counts only to see that
     * work is held or moving, and a store reaches it long before the
     * watch's LAB_QUEUE_LOST_MS */
    if (c)
      atomic_store_explicit(&c->taken, atomic_load_explicit(&c->taken, memory_order_relaxed) + 1, memory_order_relaxed);
    if (!g->p->empty) {
      int64_t n = (int64_t)((m->len - sizeof h) / sizeof(int));
      h.swapped = bubble((int *)(void *)((char *)m->data + sizeof h), n);
      memcpy(m->data, &h, sizeof h);
    }
    if (lab_po_send(self, m->sender, m, g->p->mode) != SYNCQ_OK) syncq_po_free(self, m);
    /* after the send: the Sorter holds nothing now (relaxed: as taken) */
    if (c)
      atomic_store_explicit(&c->replied, atomic_load_explicit(&c->replied, memory_order_relaxed) + 1,
                            memory_order_relaxed);
  }
}

/* One step of a watched wait on an empty inbox (the Slicer's and the
 * Controller's): a fiber parks in recv_timeout for LAB_PO_WATCH_NS; a
 * thread yields and looks again, reading the clock at every 16th look.
 * A message or an error: what the receive answered. SYNCQ_ETIMEDOUT: time
 * to read the watch (about every LAB_PO_WATCH_NS). SYNCQ_EMPTY: look
 * again. */
typedef struct watch_wait {
  bool fiber;
  uint32_t polls;
  uint64_t read_at;
} watch_wait;

static watch_wait watch_wait_start(const prog *g) {
  return (watch_wait){strcmp(syncq_po_backend_of(g->sys), "fiber") == 0, 0, syncq_now_ns()};
}

static int watch_wait_step(syncq_po_proc *self, watch_wait *w, syncq_po_msg **m) {
  int r;
  if (w->fiber) return syncq_po_recv_timeout(self, LAB_PO_WATCH_NS, m);
  if ((r = syncq_po_yield(self)) != SYNCQ_OK) return r;
  /* SYNCQ_EBUSY ("mpsc": a message on its way): look again, as for empty */
  if ((r = syncq_po_try_recv(self, m)) != SYNCQ_EMPTY && r != SYNCQ_EBUSY) return r;
  if (++w->polls % 16 != 0) return SYNCQ_EMPTY;
  uint64_t now = syncq_now_ns();
  if (now - w->read_at < LAB_PO_WATCH_NS) return SYNCQ_EMPTY;
  w->read_at = now;
  return SYNCQ_ETIMEDOUT;
}

/* The Slicer's wait for a reply, its inbox found empty: 002's Recv() as
 * syncq_po_recv waits (a thread yields and looks again; a fiber yields
 * once to its scheduler's other runnable fibers, then parks: here
 * through recv_timeout, which waits as syncq_po_recv does but with a
 * deadline, so that it can read the watch), reading the
 * watch each LAB_PO_WATCH_NS (a thread reads the clock at every 16th
 * look; summing the Sorters' counts costs a cache miss per Sorter).
 * Messages are lost when, for LAB_QUEUE_LOST_MS, every Sorter that took a
 * slice has answered, no count moved, and the inbox stayed empty: nothing
 * is in flight but what the mailboxes hold, and they give nothing.
 * SYNCQ_ETIMEDOUT with g->why then. Off the path of a receive that finds
 * a message at its first look. */
__attribute__((noinline)) static int slicer_wait(syncq_po_proc *self, prog *g, int phase, int got, syncq_po_msg **m) {
  lab_po_streak s = {0, 0};
  uint64_t before = UINT64_MAX;
  watch_wait w = watch_wait_start(g);
  for (;;) {
    int r = watch_wait_step(self, &w, m);
    if (r == SYNCQ_EMPTY) continue;
    if (r != SYNCQ_ETIMEDOUT) return r;
    uint64_t taken = 0, replied = 0;
    bool busy = false;
    for (int i = 0; i < g->p->sorters; i++) {
      /* relaxed: see sorter() */
      uint64_t t = atomic_load_explicit(&g->counts[i].taken, memory_order_relaxed);
      uint64_t a = atomic_load_explicit(&g->counts[i].replied, memory_order_relaxed);
      busy |= t != a;
      taken += t;
      replied += a;
    }
    bool moving = busy || taken + replied != before;
    before = taken + replied;
    if (!lab_po_streak_lost(&s, moving)) continue;
    uint64_t out = g->sent + replied, in = taken + g->received;
    verdict(g,
            "lost %llu of %llu messages: every sorter that took a slice had answered and the slicer's "
            "inbox stayed empty for %d ms (phase %d, %d of %d replies)",
            (unsigned long long)(out > in ? out - in : 0), (unsigned long long)out, LAB_QUEUE_LOST_MS, phase, got,
            g->p->sorters);
    return SYNCQ_ETIMEDOUT;
  }
}

static int slicer_recv(syncq_po_proc *self, prog *g, int phase, int got, syncq_po_msg **m) {
  int r = syncq_po_try_recv(self, m);
  return r != SYNCQ_EMPTY && r != SYNCQ_EBUSY ? r : slicer_wait(self, g, phase, got, m);
}

/* A reply the Slicer did not wait for: a duplicate. */
static void duplicate(prog *g, const char *what, int index, int phase) {
  verdict(g, "gave out a message twice: %s of sorter %d, phase %d (a duplicate)", what, index, phase);
}

/* One phase: send every Sorter its slice, take the N replies back. */
static int slicer_phase(syncq_po_proc *self, prog *g, int phase) {
  int n = g->p->sorters;
  syncq_po_msg *m;
  for (int i = 0; i < n; i++) {
    int64_t lo, hi;
    slice_bounds(phase, i, n, g->length, &lo, &hi);
    size_t bytes = (size_t)(hi - lo) * sizeof(int);
    if (syncq_po_get(self, sizeof(slice_hdr) + bytes, &m) != SYNCQ_OK) {
      fail(g, SYNCQ_ENOMEM, "slicer get");
      return -1;
    }
    m->type = T_SLICE;
    slice_hdr h = {i, phase, 0};
    memcpy(m->data, &h, sizeof h);
    memcpy((char *)m->data + sizeof h, g->array + lo, bytes);
    int r = lab_po_send(self, g->sorters[i], m, g->p->mode);
    g->sent++;
    if (r != SYNCQ_OK) {
      syncq_po_free(self, m);
      fail(g, r, "slicer send");
      return -1;
    }
  }
  memset(g->seen, 0, (size_t)n);
  for (int k = 0; k < n; k++) {
    int r = slicer_recv(self, g, phase, k, &m);
    if (r != SYNCQ_OK) {
      fail(g, r, "slicer receive");
      return -1;
    }
    g->received++;
    if (m->type == T_START) {
      verdict(g, "gave out a message twice: a second start to the slicer (a duplicate)");
      syncq_po_free(self, m);
      fail(g, SYNCQ_EINVAL, "slicer got a duplicate");
      return -1;
    }
    slice_hdr h = {-1, -1, 0}; /* a message too short for a header is malformed */
    if (m->len >= sizeof h) memcpy(&h, m->data, sizeof h);
    if (m->type == T_SLICE && h.index >= 0 && h.index < n && (h.phase != phase || g->seen[h.index])) {
      duplicate(g, h.phase != phase ? "a reply from an earlier phase" : "a second reply", h.index, phase);
      syncq_po_free(self, m);
      fail(g, SYNCQ_EINVAL, "slicer got a duplicate");
      return -1;
    }
    int64_t lo = 0, hi = 0;
    if (h.index >= 0 && h.index < n) slice_bounds(phase, h.index, n, g->length, &lo, &hi);
    if (m->type != T_SLICE || h.index < 0 || h.index >= n || m->len != sizeof h + (size_t)(hi - lo) * sizeof(int)) {
      syncq_po_free(self, m);
      fail(g, SYNCQ_EINVAL, "slicer got a malformed reply");
      return -1;
    }
    g->seen[h.index] = 1;
    memcpy(g->array + lo, (char *)m->data + sizeof h, (size_t)(hi - lo) * sizeof(int));
    syncq_po_free(self, m);
  }
  return 0;
}

static void slicer(syncq_po_proc *self, void *arg) {
  prog *g = arg;
  if (!hello(self, g)) return;
  syncq_po_msg *m;
  if (syncq_po_recv(self, &m) != SYNCQ_OK) return; /* T_START, or T_QUIT when a spawn failed */
  uint32_t type = m->type;
  syncq_po_free(self, m);
  if (type != T_START) {
    atomic_store(&g->slicer_quit, 1);
    atomic_fetch_add(&g->quits, 1);
    return;
  }
  atomic_store(&g->took_start, 1);
  bool whole = true; /* every phase took its N replies: whatever comes now came twice */
  for (int phase = 0; phase < 2 * g->p->sorters; phase++)
    if (slicer_phase(self, g, phase) != 0) {
      whole = false;
      break;
    }
  atomic_store(&g->sent_done, 1);
  if (!signal_to(self, g->controller, T_DONE)) fail(g, SYNCQ_ENOMEM, "slicer done");
  /* T_QUIT; a reply before it came twice (the last phase took its N) */
  while (syncq_po_recv(self, &m) == SYNCQ_OK) {
    uint32_t t = m->type;
    slice_hdr h = {-1, -1, 0};
    if (t == T_SLICE && m->len >= sizeof h) memcpy(&h, m->data, sizeof h);
    syncq_po_free(self, m);
    if (t == T_QUIT) {
      atomic_store(&g->slicer_quit, 1);
      atomic_fetch_add(&g->quits, 1);
      return;
    }
    if (whole) {
      if (t == T_START) verdict(g, "gave out a message twice: a second start to the slicer (a duplicate)");
      else duplicate(g, "a reply after the last phase", h.index, h.phase);
      fail(g, SYNCQ_EINVAL, "slicer got a duplicate");
    }
  }
}

/* The lab pins its own thread to one processor, and threads inherit the
 * pin: let the Controller, and so every process it spawns, run anywhere. */
static void unpin_self(void) {
  cpu_set_t all;
  CPU_ZERO(&all);
  long n = sysconf(_SC_NPROCESSORS_CONF);
  for (long c = 0; c < n && c < CPU_SETSIZE; c++) CPU_SET((int)c, &all);
  (void)pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

/* What the Controller's wait reads: whether anything moved since its
 * last reading, and whether a message it waits for has been sent (or,
 * for the start, sent and not taken) and so is lost once nothing moves. */
typedef bool (*ctl_owed)(prog *g, int got, uint64_t *before, bool *moving);

/* The handshakes: sent (counted before each send) beyond those received. */
static bool hellos_owed(prog *g, int got, uint64_t *before, bool *moving) {
  uint64_t sent = (uint64_t)atomic_load(&g->hellos);
  *moving = sent != *before;
  *before = sent;
  return sent > (uint64_t)got;
}

/* The done: the start not taken, or the done sent; a Sorter still sorting
 * or any count moving holds the verdict off. */
static bool done_owed(prog *g, int got, uint64_t *before, bool *moving) {
  (void)got;
  uint64_t sum = 0;
  bool busy = false;
  for (int i = 0; i < g->p->sorters; i++) {
    /* relaxed: see sorter() */
    uint64_t t = atomic_load_explicit(&g->counts[i].taken, memory_order_relaxed);
    uint64_t a = atomic_load_explicit(&g->counts[i].replied, memory_order_relaxed);
    busy |= t != a;
    sum += t + a;
  }
  int took = atomic_load(&g->took_start), done = atomic_load(&g->sent_done);
  sum += (uint64_t)took + (uint64_t)done;
  *moving = busy || sum != *before;
  *before = sum;
  return !took || done;
}

/* The Controller's receive: at its first look as before; on an empty
 * inbox, as the Slicer's wait (a thread yields and looks again, reading
 * the watch every LAB_PO_WATCH_NS; a fiber parks with that deadline).
 * SYNCQ_ETIMEDOUT once what owed() reads has not moved for
 * LAB_QUEUE_LOST_MS while a message is owed. */
static int ctl_recv(syncq_po_proc *self, prog *g, int got, ctl_owed owed, syncq_po_msg **m) {
  int r = syncq_po_try_recv(self, m);
  if (r != SYNCQ_EMPTY && r != SYNCQ_EBUSY) return r;
  lab_po_streak s = {0, 0};
  uint64_t before = UINT64_MAX;
  watch_wait w = watch_wait_start(g);
  for (;;) {
    r = watch_wait_step(self, &w, m);
    if (r == SYNCQ_EMPTY) continue;
    if (r != SYNCQ_ETIMEDOUT) return r;
    bool moving, due = owed(g, got, &before, &moving);
    if (lab_po_streak_lost(&s, moving) && due) return SYNCQ_ETIMEDOUT;
  }
}

/* After the quits: wait until every process has taken its own, so the
 * joins return; one not taken once the count has not moved for
 * LAB_QUEUE_LOST_MS was lost: named, and that process sent another
 * (uncounted) quit. */
static void ctl_quits(syncq_po_proc *self, prog *g, int started) {
  lab_po_streak s = {0, 0};
  int before = -1;
  for (uint32_t polls = 0; atomic_load(&g->quits) < started + 1; polls++) {
    if (polls < 64) {
      (void)syncq_po_yield(self);
      continue;
    }
    (void)syncq_po_sleep(self, LAB_PO_WATCH_NS / 100); /* 1 ms */
    int q = atomic_load(&g->quits);
    bool moving = q != before;
    before = q;
    if (!lab_po_streak_lost(&s, moving)) continue;
    int first = atomic_load(&g->slicer_quit) ? 0 : -1;
    while (first >= 0 && first < started && atomic_load(&g->counts[first].quit)) first++;
    if (first < 0) verdict(g, "lost a message: the controller's quit to the slicer");
    else verdict(g, "lost a message: the controller's quit to sorter %d", first);
    fail(g, SYNCQ_ETIMEDOUT, "a quit");
    if (!atomic_load(&g->slicer_quit)) (void)send_signal(self, g->slicer, T_QUIT, false);
    for (int i = 0; i < started; i++)
      if (!atomic_load(&g->counts[i].quit)) (void)send_signal(self, g->sorters[i], T_QUIT, false);
    return;
  }
}

static void controller(syncq_po_proc *self, void *arg) {
  prog *g = arg;
  int n = g->p->sorters, started = 0;
  unpin_self();
  g->controller = syncq_po_pid_of(self);
  g->rss_before = lab_vm_rss_kb();
  int r = syncq_po_spawn(g->sys, slicer, g, &g->slicer);
  if (r != SYNCQ_OK) {
    fail(g, r, "spawning the slicer");
    return;
  }
  for (; started < n; started++) {
    r = syncq_po_spawn(g->sys, sorter, g, &g->sorters[started]);
    if (r != SYNCQ_OK) {
      fail(g, r, "spawning a sorter");
      break;
    }
  }
  syncq_po_msg *m;
  int hellos = 0;
  for (; hellos < started + 1; hellos++) { /* handshakes: every process is alive */
    if ((r = ctl_recv(self, g, hellos, hellos_owed, &m)) != SYNCQ_OK) break;
    syncq_po_free(self, m);
  }
  if (r == SYNCQ_ETIMEDOUT) {
    verdict(g,
            "lost a message: a handshake to the controller (%d of %d processes had sent theirs, %d came, none "
            "for %d ms)",
            atomic_load(&g->hellos), started + 1, hellos, LAB_QUEUE_LOST_MS);
    fail(g, r, "a handshake");
  }
  g->rss_after = lab_vm_rss_kb();
  if (started == n && hellos == started + 1) {
    g->t0 = syncq_now_ns();
    if (!signal_to(self, g->slicer, T_START)) {
      fail(g, SYNCQ_ENOMEM, "start");
    } else if ((r = ctl_recv(self, g, 0, done_owed, &m)) == SYNCQ_OK) { /* T_DONE */
      g->t1 = syncq_now_ns();
      if (m->type == T_HELLO) {
        verdict(g, "gave out a message twice: a handshake more than the %d processes (a duplicate)", started + 1);
        fail(g, SYNCQ_EINVAL, "a duplicate");
      }
      syncq_po_free(self, m);
    } else if (r == SYNCQ_ETIMEDOUT) {
      if (atomic_load(&g->took_start))
        verdict(g, "lost a message: the slicer's done to the controller (none came for %d ms)", LAB_QUEUE_LOST_MS);
      else verdict(g, "lost a message: the controller's start to the slicer (not taken for %d ms)", LAB_QUEUE_LOST_MS);
      fail(g, r, "start or done");
    }
  }
  if (!signal_to(self, g->slicer, T_QUIT)) fail(g, SYNCQ_ENOMEM, "quit");
  for (int i = 0; i < started; i++)
    if (!signal_to(self, g->sorters[i], T_QUIT)) fail(g, SYNCQ_ENOMEM, "quit");
  ctl_quits(self, g, started);
  syncq_po_join(g->sys, g->slicer);
  for (int i = 0; i < started; i++) syncq_po_join(g->sys, g->sorters[i]);
  /* Every process has returned, its sends done: what is left came twice. */
  while (syncq_po_try_recv(self, &m) == SYNCQ_OK) {
    uint32_t t = m->type;
    syncq_po_free(self, m);
    if (t != T_DONE && t != T_HELLO) continue;
    verdict(g, "gave out a message twice: %s (a duplicate)",
            t == T_DONE ? "a second done from the slicer" : "a handshake more than the processes");
    fail(g, SYNCQ_EINVAL, "a duplicate");
  }
}

int lf07_sort_run(const lf07_params *p, int *array, int length, lf07_result *res) {
  memset(res, 0, sizeof *res);
  res->rss_kb_per_proc = res->stack_kb_per_proc = -1;
  if (p == NULL || array == NULL || p->sorters < 1 || length < p->sorters) {
    snprintf(res->why, sizeof res->why, "bad parameters");
    return SYNCQ_EINVAL;
  }
  syncq_po_config cfg = {p->mailbox, (uint32_t)p->sorters + 2, p->stack_size, 0, p->backend, 0, false};
  prog *g = calloc(1, sizeof *g);
  if (g == NULL) return SYNCQ_ENOMEM;
  g->p = p;
  g->array = array;
  g->length = length;
  g->status = SYNCQ_OK;
  atomic_init(&g->stack_bytes, 0);
  atomic_init(&g->stack_unknown, 0);
  atomic_init(&g->hellos, 0);
  atomic_init(&g->took_start, 0);
  atomic_init(&g->sent_done, 0);
  atomic_init(&g->slicer_quit, 0);
  atomic_init(&g->quits, 0);
  pthread_mutex_init(&g->fail_lock, NULL);
  lab_po_faults_reset();
  int r = syncq_po_create(&cfg, &g->sys);
  if (r != SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "creating a '%s' postoffice (%s): %s", p->mailbox,
             p->backend ? p->backend : syncq_po_default_backend(), syncq_strerror(r));
    pthread_mutex_destroy(&g->fail_lock);
    free(g);
    return r;
  }
  g->sorters = calloc((size_t)p->sorters, sizeof *g->sorters);
  g->seen = malloc((size_t)p->sorters);
  g->counts = aligned_alloc(SYNCQ_CACHELINE, sizeof *g->counts * (size_t)p->sorters);
  for (int i = 0; g->counts && i < p->sorters; i++) {
    atomic_init(&g->counts[i].taken, 0);
    atomic_init(&g->counts[i].replied, 0);
    atomic_init(&g->counts[i].quit, 0);
  }
  syncq_po_pid ctl;
  r = g->sorters && g->seen && g->counts ? syncq_po_spawn(g->sys, controller, g, &ctl) : SYNCQ_ENOMEM;
  if (r == SYNCQ_OK) r = syncq_po_join(g->sys, ctl);
  if (r == SYNCQ_OK) r = g->status;
  if (r != SYNCQ_OK && g->why[0] != '\0') {
    snprintf(res->why, sizeof res->why, "%s", g->why);
  } else if (r != SYNCQ_OK) {
    const char *lim = syncq_po_limit_reason(g->sys);
    snprintf(res->why, sizeof res->why, "%s: %s%s%s", g->what ? g->what : "controller", syncq_strerror(r),
             lim ? ", limit " : "", lim ? lim : "");
  } else {
    res->sort_ms = (double)(g->t1 - g->t0) / NS_PER_MS;
    if (g->rss_before >= 0 && g->rss_after >= 0)
      res->rss_kb_per_proc = (double)(g->rss_after - g->rss_before) / (double)(p->sorters + 1);
    if (!atomic_load(&g->stack_unknown))
      res->stack_kb_per_proc = (double)atomic_load(&g->stack_bytes) / 1024.0 / (double)p->sorters;
  }
  free(g->sorters);
  free(g->seen);
  free(g->counts);
  if (syncq_po_destroy(g->sys) != SYNCQ_OK && r == SYNCQ_OK) {
    snprintf(res->why, sizeof res->why, "destroying the postoffice");
    r = SYNCQ_EBUSY;
  }
  pthread_mutex_destroy(&g->fail_lock);
  free(g);
  return r;
}

/* ------------------------------------------------------------ the experiment */

/* The six mailboxes on kernel threads keep 002's names; on fibers they
 * are "fiber:<mailbox>". */
static const char *const lf07_algos[] = {"sequential",
                                         "mutex",
                                         "nonblocking",
                                         "ttas",
                                         "two-lock",
                                         "mutex-nofree",
                                         "mpsc",
                                         "link",
                                         "copy",
                                         "fiber:mutex",
                                         "fiber:nonblocking",
                                         "fiber:ttas",
                                         "fiber:two-lock",
                                         "fiber:mutex-nofree",
                                         "fiber:mpsc",
                                         NULL};
static const char *const fiber_names[] = {"fiber:mutex",    "fiber:nonblocking",  "fiber:ttas",
                                          "fiber:two-lock", "fiber:mutex-nofree", "fiber:mpsc"};

typedef struct sort_point {
  const char *backend; /* "thread", "fiber" */
  const char *mailbox; /* NULL: the sequential baseline */
  int sorters;
  int length;
  syncq_po_send_mode mode;
  bool empty;
} sort_point;

static int *input_ints, *reference_ints, *work_ints;
static int data_length;
/* Memory seen: the first run's VmRSS growth per process (later runs reuse
 * glibc's cached thread stacks), and the largest run's resident stack. */
static double first_rss_kb = -1, first_rss_n, stack_kb = -1, stack_n, fstack_kb = -1, fstack_n;

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int prepare_data(lab_ctx *ctx, int length) {
  if (input_ints != NULL && data_length == length) return 0;
  free(input_ints);
  free(reference_ints);
  free(work_ints);
  input_ints = malloc(sizeof(int) * (size_t)length);
  reference_ints = malloc(sizeof(int) * (size_t)length);
  work_ints = malloc(sizeof(int) * (size_t)length);
  if (!input_ints || !reference_ints || !work_ints) {
    free(input_ints);
    free(reference_ints);
    free(work_ints);
    input_ints = reference_ints = work_ints = NULL;
    lab_fail(ctx, "out of memory for the arrays");
    return -1;
  }
  data_length = length;
  lf07_make_input(input_ints, length);
  memcpy(reference_ints, input_ints, sizeof(int) * (size_t)length);
  qsort(reference_ints, (size_t)length, sizeof(int), cmp_int);
  return 0;
}

static int sort_sample(lab_ctx *ctx, const void *arg, lab_sample *out) {
  const sort_point *pt = arg;
  if (prepare_data(ctx, pt->length) != 0) return -1;
  size_t bytes = sizeof(int) * (size_t)pt->length;
  memcpy(work_ints, input_ints, bytes);
  uint64_t n2 = 4ull * (uint64_t)pt->sorters * (uint64_t)pt->sorters;
  if (pt->mailbox == NULL) {
    uint64_t t0 = syncq_now_ns();
    lf07_sort_sequential(pt->sorters, pt->empty, work_ints, pt->length);
    out->value = (double)(syncq_now_ns() - t0) / NS_PER_MS;
    out->ops = n2 / 2; /* slices sorted */
  } else {
    lf07_params p = {pt->mailbox, pt->sorters, pt->mode, pt->empty, 0, pt->backend};
    lf07_result r;
    if (lf07_sort_run(&p, work_ints, pt->length, &r) != SYNCQ_OK) {
      lab_fail(ctx, "lf07-sort %s:%s with %d sorters: %s", pt->backend, pt->mailbox, pt->sorters, r.why);
      return -1;
    }
    out->value = r.sort_ms;
    out->ops = n2; /* messages */
    if (first_rss_kb < 0 && r.rss_kb_per_proc >= 0 && strcmp(pt->backend, "thread") == 0) {
      first_rss_kb = r.rss_kb_per_proc;
      first_rss_n = pt->sorters;
    }
    if (strcmp(pt->backend, "fiber") == 0) {
      if (r.stack_kb_per_proc >= 0 && pt->sorters >= fstack_n) {
        fstack_kb = r.stack_kb_per_proc;
        fstack_n = pt->sorters;
      }
    } else if (r.stack_kb_per_proc >= 0 && pt->sorters >= stack_n) {
      stack_kb = r.stack_kb_per_proc;
      stack_n = pt->sorters;
    }
  }
  const int *want = pt->empty ? input_ints : reference_ints;
  if (memcmp(work_ints, want, bytes) != 0) {
    lab_fail(ctx, "lf07-sort %s with %d sorters (%s, %s): the array differs from %s",
             pt->mailbox ? pt->mailbox : "sequential", pt->sorters, pt->mode == SYNCQ_PO_COPY ? "copy" : "link",
             pt->empty ? "empty" : "sort", pt->empty ? "the input" : "the reference qsort");
    return -1;
  }
  return 0;
}

/* 002 §6: 1..10, 20..100 step 10, 200..1000 step 200, 2000..6000 step 2000. */
static int full_sweep(int *out) {
  int n = 0;
  for (int s = 1; s <= 10; s++) out[n++] = s;
  for (int s = 20; s <= 100; s += 10) out[n++] = s;
  for (int s = 200; s <= 1000; s += 200) out[n++] = s;
  for (int s = 2000; s <= 6000; s += 2000) out[n++] = s;
  return n;
}

static int lf07_run_exp(lab_ctx *ctx) {
  static const int smoke[] = {4, 20};
  static const int quick[] = {10, 20, 100};
  static const int dflt[] = {10, 20, 50, 100, 200, 400, 600, 1000};
  int sweep[40], ns;
  const char *sweep_text;
  switch (lab_get_size(ctx)) {
  case LAB_SIZE_SMOKE:
    ns = 2, memcpy(sweep, smoke, sizeof smoke), sweep_text = "4, 20 (smoke)";
    break;
  case LAB_SIZE_QUICK:
    ns = 3, memcpy(sweep, quick, sizeof quick), sweep_text = "10, 20, 100 (--quick)";
    break;
  case LAB_SIZE_DEFAULT:
    ns = (int)(sizeof dflt / sizeof dflt[0]), memcpy(sweep, dflt, sizeof dflt);
    sweep_text = "10, 20, 50, 100, 200, 400, 600, 1000";
    break;
  default:
    ns = full_sweep(sweep);
    sweep_text = "002's sweep, 1..10, 20..100 step 10, 200..1000 step 200, 2000..6000 step 2000";
    break;
  }
  int length = (int)lab_by_size(ctx, LF07_SMOKE_LENGTH, LF07_QUICK_LENGTH, LF07_LENGTH, LF07_LENGTH);
  bool few_modes = lab_get_size(ctx) <= LAB_SIZE_QUICK;
  int pus = lab_pus(ctx);
  int nmb = syncq_po_mailbox_count();
  bool fibers = false;
  for (int i = 0; i < syncq_po_backend_count(); i++) {
    const char *name;
    if (syncq_po_backend_info(i, &name, NULL) == SYNCQ_OK && strcmp(name, "fiber") == 0) fibers = true;
  }
  /* --quick: kernel threads up to 100 sorters, fibers also at 1,000 (a
   * thousand yielding threads take minutes a run on two cores). */
  int threads_max = lab_get_size(ctx) <= LAB_SIZE_QUICK ? 100 : 1000000;
  if (lab_get_size(ctx) == LAB_SIZE_QUICK && fibers) sweep[ns++] = 1000;

  lab_begin(ctx,
            "002 §5: a Controller, a Slicer and N Sorter processes (kernel threads with 32 KB stacks, "
            "002's design, named by their mailbox; and fibers with 16 KB stacks, M:N on one scheduler "
            "thread per processing unit, named fiber:<mailbox>) sort "
            "A=%d integers (rand() %% A after srand(1)) by even-odd bubble sort of slices: 2N phases, "
            "(2N)^2 messages of about A/N integers; Recv() yields while the inbox is empty. Lines: "
            "the six mailboxes and the sequential baseline (one thread sorting each slice of each "
            "phase in turn, no messages). Panels: send=link|copy (link: the message itself is queued; "
            "copy: copied into one of the recipient's free messages), work=sort|empty (empty: the "
            "same messages, no sorting). time runs from the start message to the Slicer's reply "
            "(spawning excluded); time_ratio is each variant's time over the sequential baseline's "
            "in the same repetition, so speedup = 1/time_ratio. The param threads is the number of "
            "processors all N+2 processes share (%d here; the processes are not pinned, the sequential "
            "baseline runs on the lab's pinned thread). Sorters swept: %s.%s%s Every run is "
            "checked against qsort of the input (empty work: against the input). A last group at "
            "N=%d compares copy with link sending on the mutex mailbox (algorithms 'link', 'copy').",
            length, pus, sweep_text,
            length != LF07_LENGTH ? " The array is cut from 002's 100,000 integers to keep the run "
                                    "short (bubble-sort work grows as A^2)."
                                  : "",
            few_modes ? " Here link sending with sorting runs for every mailbox on threads and for "
                        "mpsc, nonblocking and mutex on fibers (threads up to 100 sorters, fibers also "
                        "at 1,000: a thousand yielding "
                        "threads take minutes a run on two cores); copy and empty for the mutex "
                        "mailbox on threads only; the 6,000-sorter point runs at --full."
                      : " Every mailbox runs link and copy, sort and empty, on both backends.",
            sweep[ns - 1] < 100 ? sweep[ns - 1] : 100);

  sort_point pts[LAB_MAX_VARIANTS];
  for (int s = 0; s < ns; s++) {
    for (int mode = 0; mode < 2; mode++) {
      for (int empty = 0; empty < 2; empty++) {
        lab_group g;
        memset(&g, 0, sizeof g);
        lab_group_param(&g, "sorters", sweep[s]);
        lab_group_param_str(&g, "send", mode ? "copy" : "link");
        lab_group_param_str(&g, "work", empty ? "empty" : "sort");
        lab_group_param(&g, "threads", pus);
        lab_group_param(&g, "length", length); /* integers sorted: a slice is length / sorters */
        g.metric = "time";
        g.unit = "ms";
        g.sample = sort_sample;
        g.normalize_to = empty ? NULL : "sequential";
        int np = 0;
        if (!empty) {
          pts[np] = (sort_point){"thread", NULL, sweep[s], length, (syncq_po_send_mode)mode, false};
          g.variants[g.nvariants++] = (lab_variant){"sequential", &pts[np++]};
        }
        for (int i = 0; i < nmb; i++) {
          const char *name;
          syncq_po_mailbox_info(i, &name, NULL, NULL);
          if (few_modes && (mode || empty) && strcmp(name, "mutex") != 0) continue;
          if (sweep[s] <= threads_max) {
            pts[np] = (sort_point){"thread", name, sweep[s], length, (syncq_po_send_mode)mode, empty != 0};
            g.variants[g.nvariants++] = (lab_variant){name, &pts[np++]};
          }
          /* --quick: on fibers the three mailboxes the claims name */
          bool fiber_named =
            strcmp(name, "mpsc") == 0 || strcmp(name, "nonblocking") == 0 || strcmp(name, "mutex") == 0;
          if (fibers && (!few_modes || (!mode && !empty && fiber_named))) {
            pts[np] = (sort_point){"fiber", name, sweep[s], length, (syncq_po_send_mode)mode, empty != 0};
            g.variants[g.nvariants++] = (lab_variant){fiber_names[i], &pts[np++]};
          }
        }
        if (g.nvariants <= 1) continue;
        if (lab_run_group(ctx, &g) != 0) return -1;
      }
    }
  }
  { /* copy vs link on one mailbox, as two algorithms a rule can compare */
    int n = sweep[ns - 1] < 100 ? sweep[ns - 1] : 100;
    lab_group g;
    memset(&g, 0, sizeof g);
    lab_group_param(&g, "sorters", n);
    lab_group_param_str(&g, "send", "compare");
    lab_group_param_str(&g, "work", "sort");
    lab_group_param(&g, "threads", pus);
    lab_group_param(&g, "length", length);
    g.metric = "time";
    g.unit = "ms";
    g.sample = sort_sample;
    g.normalize_to = "link";
    pts[0] = (sort_point){"thread", "mutex", n, length, SYNCQ_PO_LINK, false};
    pts[1] = (sort_point){"thread", "mutex", n, length, SYNCQ_PO_COPY, false};
    g.variants[g.nvariants++] = (lab_variant){"link", &pts[0]};
    g.variants[g.nvariants++] = (lab_variant){"copy", &pts[1]};
    if (lab_run_group(ctx, &g) != 0) return -1;
  }
  if (!lab_planning(ctx)) {
    if (stack_kb >= 0)
      lab_note(ctx,
               "Resident stack per Sorter: %.1f KB on a kernel thread (mincore over each Sorter's own "
               "32 KB stack at exit, N=%.0f). syncq target for resident memory per process: 64 KB.",
               stack_kb, stack_n);
    if (fstack_kb >= 0)
      lab_note(ctx, "Resident stack per Sorter on a fiber: %.1f KB (of its 16 KB stack, N=%.0f).", fstack_kb, fstack_n);
    if (first_rss_kb >= 0)
      lab_note(ctx,
               "Resident memory per process: %.1f KB (VmRSS growth of the whole program from before "
               "spawning to after the handshakes, over N+1=%.0f processes, first run only: later runs "
               "reuse glibc's cached thread stacks, whose pages are already resident).",
               first_rss_kb, first_rss_n + 1);
  }
  return 0;
}

#define LINK_SORT(n) "\"where\":{\"sorters\":" #n ",\"send\":\"link\",\"work\":\"sort\"}"
/* time(mailbox) / time(sequential) below 1/1.5 at n sorters, linking */
/* clang-format off */
#define SPEEDUP(mailbox, n)                                                                        \
  "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"" mailbox "\",\"den\":\"sequential\"," LINK_SORT(n) \
  ",\"bound\":0.667,\"min_threads\":2}"
/* clang-format on */

/* fiber f faster than thread mailbox t at n sorters, linking */
/* clang-format off */
#define FVT(f, t, n)                                                                                       \
  "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"" f "\",\"den\":\"" t "\"," LINK_SORT(n) \
  ",\"bound\":1.0}"
/* clang-format on */
/* fiber f faster than every thread mailbox at n sorters */
/* clang-format off */
#define FVALL(f, n)                                                                                        \
  "{\"op\":\"all\",\"rules\":[" FVT(f, "mutex", n) "," FVT(f, "nonblocking", n) "," FVT(f, "ttas", n) "," \
  FVT(f, "two-lock", n) "," FVT(f, "mutex-nofree", n) "," FVT(f, "mpsc", n) "]}"
/* clang-format on */
/* clang-format off */
#define BEST_FIBER(n)                                                                                       \
  "{\"op\":\"any\",\"rules\":[" FVALL("fiber:mpsc", n) "," FVALL("fiber:nonblocking", n) ","          \
  FVALL("fiber:mutex", n) "]}"
/* clang-format on */

/* clang-format off */
static const lab_claim lf07_claims[] = {
  {"syncq target: the sort on fibers is at least as fast as on kernel threads: at each of 10, 20 and "
   "100 sorters (linking), the best of the fiber mailboxes (mpsc, nonblocking, mutex) beats every "
   "thread mailbox, so the best fiber speedup over sequential is at least the best thread speedup.",
   "{\"op\":\"all\",\"rules\":[" BEST_FIBER(10) "," BEST_FIBER(20) "," BEST_FIBER(100) "]}"},
  {"syncq target: at 002's largest point, 6,000 sorters, fibers at least 20x faster than kernel threads "
   "(mutex mailbox, linking; the point runs at --full: syncq-lab run lf07-sort --full --where "
   "sorters=6000 --where send=link --where work=sort).",
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"fiber:mutex\",\"den\":\"mutex\","
   LINK_SORT(6000) ",\"bound\":0.05}"},
  {"Message passing speeds the sort up over the sequential baseline: 002 measured about 3 on 4 "
   "processors (§6.1); syncq target: a best speedup of at least 1.5 on 2 cores (time/sequential "
   "below 1/1.5), checked for every mailbox at 10 and 20 sorters, linking: with --quick's 20,000 "
   "integers, 20 sorters have 002's 100-sorter slice length of 1,000 integers, hence the same "
   "work per message.",
   "{\"op\":\"any\",\"rules\":["
   SPEEDUP("mutex", 10) "," SPEEDUP("nonblocking", 10) "," SPEEDUP("ttas", 10) ","
   SPEEDUP("two-lock", 10) "," SPEEDUP("mutex-nofree", 10) "," SPEEDUP("mpsc", 10) ","
   SPEEDUP("mutex", 20) "," SPEEDUP("nonblocking", 20) "," SPEEDUP("ttas", 20) ","
   SPEEDUP("two-lock", 20) "," SPEEDUP("mutex-nofree", 20) "," SPEEDUP("mpsc", 20) "]}"},
  {"Up to about 100 sorters the performance is essentially independent of the queue (§6.1, "
   "Figures 8-12): every mailbox within 25% of the mutex at 100 sorters, linking.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"nonblocking\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":1.25},"
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"nonblocking\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":0.8},"
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"ttas\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":1.25},"
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"ttas\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":0.8},"
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"two-lock\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":1.25},"
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"two-lock\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":0.8},"
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"mutex-nofree\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":1.25},"
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"mutex-nofree\",\"den\":\"mutex\"," LINK_SORT(100) ",\"bound\":0.8}]}"},
  {"Speedup peaks near 100 sorters and message-passing overhead runs away near 1000 (§6.1): with the "
   "mutex mailbox (linking) sorting 002's 100,000 integers (the default and full sizes), the sort takes "
   "less time at 100 sorters than at 10, and more at 1000 than at 100.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"along_ratio_below\",\"metric\":\"time\",\"algo\":\"mutex\",\"along\":\"sorters\","
   "\"num\":100,\"den\":10,\"where\":{\"send\":\"link\",\"work\":\"sort\",\"length\":100000},\"bound\":1.0},"
   "{\"op\":\"along_ratio_above\",\"metric\":\"time\",\"algo\":\"mutex\",\"along\":\"sorters\","
   "\"num\":1000,\"den\":100,\"where\":{\"send\":\"link\",\"work\":\"sort\",\"length\":100000},\"bound\":1.0}]}"},
  {"Under heavy contention the plain mutex is best; the non-blocking queue is about 25% slower "
   "(§6.2, Figure 13: here 1000 sorters, linking).",
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"nonblocking\",\"den\":\"mutex\"," LINK_SORT(1000)
   ",\"bound\":1.0,\"min_threads\":2}"},
  {"Test-and-test-and-set collapses past about 600 sorters (§6.2, Figure 13): here, slower than the "
   "mutex by half again at 1000 sorters.",
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"ttas\",\"den\":\"mutex\"," LINK_SORT(1000)
   ",\"bound\":1.5,\"min_threads\":2}"},
  {"The two-lock queue is the worst under heavy contention (§6.2, Figures 13-14): slower than the "
   "mutex and the non-blocking queue at 1000 sorters.",
   "{\"op\":\"all\",\"rules\":["
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"two-lock\",\"den\":\"mutex\"," LINK_SORT(1000) ",\"bound\":1.0,\"min_threads\":2},"
   "{\"op\":\"ratio_above\",\"metric\":\"time\",\"num\":\"two-lock\",\"den\":\"nonblocking\"," LINK_SORT(1000) ",\"bound\":1.0,\"min_threads\":2}]}"},
  {"Copying messages costs only a small constant over linking (§6.1): copy within 15% of link "
   "(mutex mailbox, the last group).",
   "{\"op\":\"ratio_below\",\"metric\":\"time\",\"num\":\"copy\",\"den\":\"link\","
   "\"where\":{\"send\":\"compare\"},\"bound\":1.15}"},
};
/* clang-format on */

const lab_experiment lab_exp_lf07_sort = {
  .name = "lf07-sort",
  .paper = "002 LaForest 2007, §5-§6",
  .figure = "Figures 8-14",
  .title = "Postoffice parallel sort: time and speedup vs sorters, per mailbox",
  .x = "sorters",
  .log_y = true,
  .log_x = true, /* 002 Figures 8-14: sorters on a log axis */
  .claims = lf07_claims,
  .nclaims = sizeof lf07_claims / sizeof lf07_claims[0],
  .uses_registry = false,
  .fixed_algos = lf07_algos,
  .run = lf07_run_exp,
  .postoffice = true,
};
