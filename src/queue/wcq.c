/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wcq.c — wCQ: wait-free circular queue, SCQ's fetch-and-add ring with a
 * fast-path-slow-path construction and helping.
 *
 * Contract
 *   Source:      Ruslan Nikolaev and Binoy Ravindran, "wCQ: A Fast
 *                Wait-Free Queue with Bounded Memory Usage", SPAA 2022
 *                (arXiv 2201.02179): its Figure 1 (SCQ, the base, as in
 *                src/queue/scq.c), the fast path and helping of its
 *                enqueue_wCQ / dequeue_wCQ / try_enq / try_deq /
 *                help_threads / consume / finalize_request figure, the slow
 *                path figure (enqueue_slow, dequeue_slow, try_enq_slow,
 *                try_deq_slow, help_enqueue, help_dequeue) and the
 *                slow_F&A figure (two-phase increment of Head/Tail shared
 *                by the helpers of one request, load_global_help_phase2).
 *                004 §VI-A measures it among its competitors. (Not one of
 *                the five papers, nor available here: written from the
 *                paper's pseudo-code as recalled, with the authors' public
 *                code read to check the recollection; see Deviations.)
 *   Progress:    wait-free for up to SYNCQ_QUEUE_WCQ_THREADS threads. A
 *                ring operation makes at most WCQ_PATIENCE_ENQ (16) or
 *                WCQ_PATIENCE_DEQ (64) fast-path tickets, then publishes
 *                a request; every thread helps one record every
 *                WCQ_HELP_DELAY (16) operations, round-robin over all
 *                records, so a pending request gets every thread's help
 *                within SYNCQ_QUEUE_WCQ_THREADS * WCQ_HELP_DELAY of that
 *                thread's operations; once every thread that keeps taking
 *                tickets helps the request, they all take its tickets
 *                until it completes (the paper's wait-freedom argument).
 *                A pointer operation is two ring operations. Taking a thread number
 *                (first operation of a thread) scans at most
 *                SYNCQ_QUEUE_WCQ_THREADS words, and once per thread takes
 *                pthread_once/setspecific.
 *   Atomics:     uncontended enqueue: fq dequeue (load Threshold, 1 FAA on
 *                Head, 1 entry load, 1 OR to consume) + aq enqueue (1 FAA
 *                on Tail, 1 entry load, 1 CAS, Threshold load): SCQ's
 *                count; dequeue mirrored. Every WCQ_HELP_DELAY operations
 *                one load of another record's pending flag. The slow path
 *                uses double-width CAS (entries with their Note; Head and
 *                Tail with their phase-2 word).
 *   Memory:      caller's storage, bounded, never allocates: the header
 *                (two rings of 6 lines, 2 x SYNCQ_QUEUE_WCQ_THREADS
 *                records of 2 lines: 33,664 bytes with 64-byte lines) + 72
 *                bytes per item of capacity (2 rings x 2n entries x 16
 *                bytes + n slots).
 *   Threads:     a thread's first operation on any wCQ takes a free number
 *                below SYNCQ_QUEUE_WCQ_THREADS (a process-wide table); the
 *                number names its record in every wCQ queue, and goes back
 *                to the table at thread exit (a pthread key's destructor),
 *                when the thread's requests are all complete, so the next
 *                thread to take it finds the record idle. Past the limit
 *                enqueue and dequeue return SYNCQ_ELIMIT. Where no pthread
 *                key can be created numbers are never given back.
 *   Signal-safe: no: a handler that interrupts an operation and uses a
 *                wCQ on the same thread would share the thread's record
 *                with the interrupted request.
 *   Process-shared: no (thread numbers are per process); the storage holds
 *                no pointers.
 *   Limits:      capacity n a power of two, 2 <= n <= 2^40; items
 *                non-NULL; tickets below 2^62 per ring; needs double-width
 *                CAS (SYNCQ_ENOTSUP without it).
 *   Linearizable: the index rings are (the paper's §5); the pointer queue
 *                is as SCQ's: not at FULL (a dequeue that took its index
 *                from aq but has not yet given it back to fq makes an
 *                enqueue see FULL with n-1 items); FIFO and EMPTY are. The
 *                linearizability runs check it with a capacity no history
 *                can fill.
 *   Entries:     lo: cycle (high bits) | IsSafe | Enq | index (order =
 *                log2(2n) bits; all ones = bottom, all ones - 1 = the
 *                paper's bottom-c, left by a dequeuer that skipped the
 *                entry); hi: Note, the cycle of the last slow-path helper
 *                that averted its request from the entry.
 *   Deviations:  (1) The phase-2 request of slow_F&A (which record's local
 *                counter to settle, and the counter value) travels in the
 *                second word of Head/Tail itself: (counter + 1) mod 2^56
 *                and the record number, written by the double-width CAS
 *                that makes the increment. The paper points to a phase2rec
 *                in the helper's record, written by every helper of the
 *                request and read under two sequence numbers; carried in
 *                the word, it has one writer and no torn reads. The full
 *                counter is rebuilt from Head/Tail's first word, which has
 *                grown by fewer than 2^56 since.
 *                (2) Helpers of a request check the owner's seq1 after
 *                every slow_F&A (the authors' code does so for enqueues),
 *                for dequeues too, so a helper late for a finished request
 *                never runs a ticket of the owner's next one.
 *                (3) try_enq_slow answers "done" for an entry of its own
 *                cycle only when it does not hold bottom-c (a dequeuer's
 *                skip mark, which is not this request's item).
 *                (4) SCQ's dequeuer wait (scq.c deviation 2) in try_deq,
 *                bounded by SYNCQ_SCQ_DEQ_WAIT.
 *                (5) No cache remapping (as "scq"): entry of ticket t at
 *                t mod 2n.
 *                (6) enqueue and dequeue check the magic word.
 *   Tried, not kept: answering EMPTY (aq) and FULL (fq) from a Head/Tail
 *                comparison before the fetch-and-add (try_deq's test Tail
 *                <= H + 1, made before taking a ticket; the Tail read
 *                cached on Head's line, as LCRQ's lr_ring_seems_empty).
 *                Correct (linearizability runs and ThreadSanitizer
 *                passed), and an empty poll then writes nothing, where
 *                the figure's poll makes a Head FAA, an entry CAS, a
 *                catchup CAS on Tail and a Threshold FAA. But one producer
 *                and one consumer, pinned, 20,000 items through capacity
 *                1024, dg25-prodcons's waiting (a pause per failed poll,
 *                a yield every 32), 40 runs each interleaved, 2-core VM:
 *                median 7.3-8.9 Mops/s before against 1.6-2.9 with it,
 *                best run 30.6-34.2 against 9.9-22.2; with no yield at all
 *                3.0 against 1.1 (best 31.0 against 6.2), so not the
 *                waiting policy. The best runs before had no EMPTY and no
 *                FULL answer at all; with the test the consumer, whose
 *                failed poll became cheap, keeps up with the producer and
 *                polls 0.03-2.4 times an item. Likely (this VM has no
 *                hardware counters): it then works on the entry line the
 *                producer is writing (16-byte entries, four to a line, no
 *                remap), where the figure's heavy poll set it back a few
 *                entries. The same test pays in LCRQ, whose map puts
 *                consecutive tickets on different lines.
 *   Test hooks:  (not public) force every fast path to this many tickets,
 *                make the fast enqueue leave some or all of its tickets unused, shorten
 *                the help delay, stop a thread once its request is
 *                published, and pretend there is no double-width CAS; so
 *                tests/queue/wcq_test.c runs the slow path and the helping
 *                deterministically.
 *   Stats:       cas_attempts, cas_failures (entry CASes).
 */
#include "syncq/queue/wcq.h"

#include <pthread.h>

#include "../stats_internal.h"
#include "scq_common.h"
#include "syncq/queue.h"

#define WCQ_MAGIC UINT64_C(0x7743515545554531)
#define WCQ_PATIENCE_ENQ 16u
#define WCQ_PATIENCE_DEQ 64u
#define WCQ_HELP_DELAY 16u
#define THREADS SYNCQ_QUEUE_WCQ_THREADS

/* Flags of a record's local counters (ticket << 2). */
#define FIN UINT64_C(1) /* the request is done */
#define INC UINT64_C(2) /* a helper is incrementing Head/Tail for it */

/* Phase-2 word of Head/Tail (deviation 1). */
#define P2_TID_BITS 8
#define P2_CNT_MASK ((UINT64_C(1) << (64 - P2_TID_BITS)) - 1)
_Static_assert(THREADS < (1u << P2_TID_BITS), "record numbers + 1 fit the phase-2 word");

/* ------------------------------------------------------------ test hooks */
/* tests/queue/wcq_test.c; not in the public header. */
typedef void (*wcq_published_fn)(int enqueue);
extern _Atomic(bool) syncq_queue_wcq_test_no_dwcas__;
extern _Atomic(unsigned) syncq_queue_wcq_test_patience__;
extern _Atomic(unsigned) syncq_queue_wcq_test_drop_enq__;
extern _Atomic(unsigned) syncq_queue_wcq_test_help_delay__;
extern _Atomic(wcq_published_fn) syncq_queue_wcq_test_published__;
_Atomic(bool) syncq_queue_wcq_test_no_dwcas__;
_Atomic(unsigned) syncq_queue_wcq_test_patience__;   /* 0: the defaults */
_Atomic(unsigned) syncq_queue_wcq_test_drop_enq__;   /* k: fast enqueue leaves tickets T % k == 0 unused */
_Atomic(unsigned) syncq_queue_wcq_test_help_delay__; /* 0: WCQ_HELP_DELAY */
_Atomic(wcq_published_fn) syncq_queue_wcq_test_published__;

/* relaxed, all: a test sets the hooks while no operation runs (or, for the
 * published hook, before the thread it stops starts its operation). */
static inline unsigned patience(unsigned dflt) {
  unsigned p = atomic_load_explicit(&syncq_queue_wcq_test_patience__, memory_order_relaxed);
  return p != 0 ? p : dflt;
}
static inline uint32_t help_delay(void) {
  unsigned d = atomic_load_explicit(&syncq_queue_wcq_test_help_delay__, memory_order_relaxed); /* relaxed: as above */
  return d != 0 ? d : WCQ_HELP_DELAY;
}

/* ------------------------------------------------------------ thread numbers */

static _Atomic(uint32_t) tid_taken[THREADS];
static _Thread_local uint32_t tls_tid1 __attribute__((tls_model("initial-exec"))); /* number + 1; 0: none */
static pthread_once_t tid_once = PTHREAD_ONCE_INIT;
static pthread_key_t tid_key;
static bool tid_key_ok;

static void tid_release(void *p) {
  uint32_t t = (uint32_t)(uintptr_t)p - 1;
  tls_tid1 = 0;
  /* release: pairs with the CAS that takes the number next, so the next
   * holder sees this thread's last writes to its records. */
  if (t < THREADS) atomic_store_explicit(&tid_taken[t], 0, memory_order_release);
}
static void tid_key_create(void) { tid_key_ok = pthread_key_create(&tid_key, tid_release) == 0; }

/* The calling thread's number, or -1 when all are taken. */
static inline int tid_get(void) {
  if (tls_tid1 != 0) return (int)tls_tid1 - 1;
  pthread_once(&tid_once, tid_key_create);
  for (uint32_t i = 0; i < THREADS; i++) {
    uint32_t free_ = 0;
    /* relaxed: only a filter; the CAS decides */
    if (atomic_load_explicit(&tid_taken[i], memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong(&tid_taken[i], &free_, 1)) {
      if (tid_key_ok) pthread_setspecific(tid_key, (void *)(uintptr_t)(i + 1));
      tls_tid1 = i + 1;
      return (int)i;
    }
  }
  return -1;
}

/* ------------------------------------------------------------ ring view */

typedef struct ring_view {
  syncq_queue_wcq_ring *r;
  syncq_pr_dw_atomic *e;       /* 2n entries */
  syncq_queue_wcq_record *rec; /* THREADS records */
  syncq_queue_wcq *q;
  uint64_t n;     /* capacity; the ring has 2n entries */
  uint32_t order; /* log2(2n) */
} ring_view;

static inline uint64_t bot(const ring_view *v) { return (UINT64_C(1) << v->order) - 1; }
static inline uint64_t botc(const ring_view *v) { return bot(v) - 1; }
static inline uint64_t e_index(const ring_view *v, uint64_t e) { return e & bot(v); }
static inline uint64_t e_enq(const ring_view *v, uint64_t e) { return (e >> v->order) & 1; }
static inline uint64_t e_safe(const ring_view *v, uint64_t e) { return (e >> (v->order + 1)) & 1; }
static inline uint64_t e_cycle(const ring_view *v, uint64_t e) { return e >> (v->order + 2); }
static inline uint64_t mk(const ring_view *v, uint64_t cycle, uint64_t safe, uint64_t enq, uint64_t index) {
  return (cycle << (v->order + 2)) | (safe << (v->order + 1)) | (enq << v->order) | index;
}
static inline bool idx_empty(const ring_view *v, uint64_t index) { return index >= botc(v); } /* bottom or bottom-c */
static inline uint64_t t_cycle(const ring_view *v, uint64_t t) { return t >> v->order; }
static inline syncq_pr_dw_atomic *entry_of(const ring_view *v, uint64_t t) {
  return &v->e[t & ((UINT64_C(1) << v->order) - 1)];
}
static inline int64_t threshold3(const ring_view *v) { return (int64_t)(3 * v->n - 1); }

static inline syncq_pr_dw dw(uint64_t lo, uint64_t hi) { return (syncq_pr_dw){lo, hi}; }
static inline uint64_t p2_pack(uint64_t cnt1, uint32_t tid) {
  return ((cnt1 & P2_CNT_MASK) << P2_TID_BITS) | (uint64_t)(tid + 1);
}
/* The counter value the phase 2 settles (the increment's cnt + 1). */
static inline uint64_t p2_cnt1(syncq_pr_dw g) { return g.lo - ((g.lo - (g.hi >> P2_TID_BITS)) & P2_CNT_MASK); }

static inline _Atomic(uint64_t) *local_of(ring_view *v, uint32_t tid, bool head) {
  return head ? &v->rec[tid].local_head : &v->rec[tid].local_tail;
}

static void reset_threshold(ring_view *v) {
  /* Written only when it differs (as in SCQ), seq_cst: visible before the
   * enqueue returns, or a later dequeue could read a negative threshold
   * and answer EMPTY over this item. */
  if (atomic_load(&v->r->threshold) != threshold3(v)) atomic_store(&v->r->threshold, threshold3(v));
}

static void catchup(ring_view *v, uint64_t tail, uint64_t head) {
  while (!atomic_compare_exchange_strong(&v->r->tail.lo, &tail, head)) {
    head = atomic_load(&v->r->head.lo);
    tail = atomic_load(&v->r->tail.lo);
    if (tail >= head) break;
  }
}

/* finalize_request: the entry of ticket h holds an item a slow-path
 * enqueue produced (Enq = 0); end that request, whoever's it is, before
 * the item is consumed, so none of its helpers goes on to a later ticket. */
static void finalize_request(ring_view *v, uint64_t h) {
  for (uint32_t i = 0; i < THREADS; i++) {
    _Atomic(uint64_t) *lt = &v->rec[i].local_tail;
    uint64_t want = h << 2;
    if ((atomic_load(lt) >> 2) == h) {
      atomic_compare_exchange_strong(lt, &want, want | FIN);
      return;
    }
  }
}

static void consume(ring_view *v, uint64_t h, syncq_pr_dw_atomic *ent, uint64_t e) {
  if (!e_enq(v, e)) finalize_request(v, h);
  /* index := bottom, Enq := 1 */
  atomic_fetch_or(&ent->lo, bot(v) | (UINT64_C(1) << v->order));
}

/* ------------------------------------------------------------ fast path (SCQ) */

static bool try_enq(ring_view *v, uint64_t T, uint64_t index) {
  _Atomic(uint64_t) *ent = &entry_of(v, T)->lo;
  const uint64_t c = t_cycle(v, T);
  /* acquire: pairs with the CAS/OR of the entry's last writer */
  uint64_t E = atomic_load_explicit(ent, memory_order_acquire);
  while (e_cycle(v, E) < c && idx_empty(v, e_index(v, E)) && (e_safe(v, E) || atomic_load(&v->r->head.lo) <= T)) {
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(ent, &E, mk(v, c, 1, 1, index))) {
      reset_threshold(v);
      return true;
    }
    SYNCQ_STAT_INC(cas_failures);
  }
  return false;
}

/* 1: an index in *out; 0: empty; -1: this ticket gave nothing, try another. */
static int try_deq(ring_view *v, uint64_t H, uint64_t *out) {
  syncq_pr_dw_atomic *pe = entry_of(v, H);
  _Atomic(uint64_t) *ent = &pe->lo;
  const uint64_t c = t_cycle(v, H);
  unsigned waited = 0;
  /* acquire: pairs with the enqueuer's CAS that put an index here */
  uint64_t E = atomic_load_explicit(ent, memory_order_acquire);
  for (;;) {
    if (e_cycle(v, E) == c) { /* ours: H is unique to this dequeue */
      consume(v, H, pe, E);
      *out = e_index(v, E);
      return 1;
    }
    if (idx_empty(v, e_index(v, E)) && e_safe(v, E) && e_cycle(v, E) < c && waited < SYNCQ_SCQ_DEQ_WAIT &&
        (waited > 0 || atomic_load(&v->r->tail.lo) > H)) { /* deviation 4: the enqueuer of H is on its way */
      waited++;
      syncq_pr_relax();
      E = atomic_load_explicit(ent, memory_order_acquire); /* acquire: as above */
      continue;
    }
    if (e_cycle(v, E) >= c) break; /* a later cycle's: nothing to mark */
    uint64_t New = idx_empty(v, e_index(v, E)) ? mk(v, c, e_safe(v, E), 1, botc(v))    /* skip mark */
                                               : E & ~(UINT64_C(1) << (v->order + 1)); /* old item: unsafe */
    if (New == E) break;
    SYNCQ_STAT_INC(cas_attempts);
    if (atomic_compare_exchange_strong(ent, &E, New)) break;
    SYNCQ_STAT_INC(cas_failures);
  }
  uint64_t T = atomic_load(&v->r->tail.lo);
  if (T <= H + 1) {
    catchup(v, T, H + 1);
    atomic_fetch_sub(&v->r->threshold, 1);
    return 0;
  }
  if (atomic_fetch_sub(&v->r->threshold, 1) <= 0) return 0;
  return -1;
}

/* ------------------------------------------------------------ slow_F&A */

/* load_global_help_phase2: finish the pending phase 2 in *g, if any, and
 * return the counter. */
static uint64_t help_phase2(ring_view *v, syncq_pr_dw_atomic *g, bool head, syncq_pr_dw gp) {
  for (;;) {
    if (gp.hi == 0) return gp.lo;
    uint32_t t = (uint32_t)(gp.hi & ((1u << P2_TID_BITS) - 1)) - 1;
    uint64_t cnt = p2_cnt1(gp) - 1;
    if (t < THREADS) {
      uint64_t want = (cnt << 2) | INC;
      atomic_compare_exchange_strong(local_of(v, t, head), &want, cnt << 2);
    }
    if (syncq_pr_dwcas(g, &gp, dw(gp.lo, 0))) return gp.lo;
  }
}

/* Move record tid's request to its next ticket, by one increment of *g
 * however many helpers run this at once. True with the ticket in *prev
 * (<< 2); false once the request is done (FIN). */
static bool slow_faa(ring_view *v, uint32_t tid, bool head, uint64_t *prev) {
  syncq_pr_dw_atomic *g = head ? &v->r->head : &v->r->tail;
  _Atomic(uint64_t) *local = local_of(v, tid, head);
  syncq_pr_dw gp = syncq_pr_dw_load(g);
  uint64_t cnt;
  for (;;) {
    if (atomic_load(local) & FIN) return false;
    cnt = help_phase2(v, g, head, gp);
    uint64_t seen = *prev;
    if (atomic_compare_exchange_strong(local, &seen, (cnt << 2) | INC)) {
      *prev = (cnt << 2) | INC;
    } else {
      *prev = seen;
      if (seen & FIN) return false;
      if (!(seen & INC)) return true; /* another helper made this step */
      cnt = seen >> 2;                /* another helper claimed cnt: make its increment */
    }
    syncq_pr_dw want = dw(cnt, 0);
    if (syncq_pr_dwcas(g, &want, dw(cnt + 1, p2_pack(cnt + 1, tid)))) break;
    gp = want;
  }
  if (head) atomic_fetch_sub(&v->r->threshold, 1);
  /* phase 2: the ticket is the request's; settle its local counter, then
   * clear the word (if Head/Tail moved on, the next slow_F&A clears it) */
  uint64_t want = (cnt << 2) | INC;
  atomic_compare_exchange_strong(local, &want, cnt << 2);
  syncq_pr_dw gw = dw(cnt + 1, p2_pack(cnt + 1, tid));
  syncq_pr_dwcas(g, &gw, dw(cnt + 1, 0));
  *prev = cnt << 2;
  return true;
}

/* ------------------------------------------------------------ slow path */

static bool try_enq_slow(ring_view *v, uint32_t tid, uint64_t T, uint64_t index) {
  syncq_pr_dw_atomic *ent = entry_of(v, T);
  const uint64_t c = t_cycle(v, T);
  syncq_pr_dw p = syncq_pr_dw_load(ent); /* may be torn: each CAS validates it */
  for (;;) {
    uint64_t E = p.lo, note = p.hi;
    if (e_cycle(v, E) < c && note < c) {
      if (!idx_empty(v, e_index(v, E)) || !(e_safe(v, E) || atomic_load(&v->r->head.lo) <= T)) {
        /* unusable: avert the request's other helpers from it */
        if (!syncq_pr_dwcas(ent, &p, dw(E, c))) continue;
        return false;
      }
      const uint64_t produced = mk(v, c, 1, 0, index); /* Enq = 0 until the request is finalized */
      SYNCQ_STAT_INC(cas_attempts);
      if (!syncq_pr_dwcas(ent, &p, dw(produced, note))) {
        SYNCQ_STAT_INC(cas_failures);
        continue;
      }
      uint64_t want = T << 2;
      if (atomic_compare_exchange_strong(&v->rec[tid].local_tail, &want, want | FIN)) {
        uint64_t e = produced;
        atomic_compare_exchange_strong(&ent->lo, &e, mk(v, c, 1, 1, index)); /* fails if consumed already */
      }
      reset_threshold(v);
      return true;
    }
    /* deviation 3: our own cycle, not a dequeuer's skip mark: another
     * helper of this request produced here (the item may be consumed) */
    return e_cycle(v, E) == c && e_index(v, E) != botc(v);
  }
}

/* End a dequeue request on ticket H. False when another helper has moved
 * it past H meanwhile (it found H empty while the threshold was not yet
 * negative): the request goes on from there, for its verdict is wherever
 * its local counter ends, which its owner reads once the loop ends. */
static bool finish_deq(_Atomic(uint64_t) *local, uint64_t H) {
  uint64_t want = H << 2;
  return atomic_compare_exchange_strong(local, &want, want | FIN) || (want & FIN) != 0;
}

static bool try_deq_slow(ring_view *v, uint32_t tid, uint64_t H) {
  syncq_pr_dw_atomic *ent = entry_of(v, H);
  _Atomic(uint64_t) *local = &v->rec[tid].local_head;
  const uint64_t c = t_cycle(v, H);
  syncq_pr_dw p = syncq_pr_dw_load(ent); /* may be torn: each CAS validates it */
  for (;;) {
    uint64_t E = p.lo, note = p.hi;
    if (e_cycle(v, E) == c && e_index(v, E) != botc(v)) return finish_deq(local, H); /* an item for H */
    if (e_cycle(v, E) >= c) break;
    if (idx_empty(v, e_index(v, E))) {
      if (note < c) { /* avert slow enqueuers of ticket H from it */
        if (!syncq_pr_dwcas(ent, &p, dw(E, c))) continue;
        p.hi = c;
      }
      SYNCQ_STAT_INC(cas_attempts);
      if (!syncq_pr_dwcas(ent, &p, dw(mk(v, c, e_safe(v, E), 1, botc(v)), p.hi))) {
        SYNCQ_STAT_INC(cas_failures);
        continue;
      }
    } else if (e_safe(v, E)) { /* an older cycle's item: unsafe */
      if (!syncq_pr_dwcas(ent, &p, dw(E & ~(UINT64_C(1) << (v->order + 1)), note))) continue;
    }
    break;
  }
  uint64_t T = atomic_load(&v->r->tail.lo);
  if (T <= H + 1) catchup(v, T, H + 1);
  if (atomic_load(&v->r->threshold) < 0) return finish_deq(local, H); /* empty */
  return false;
}

static void enqueue_slow(ring_view *v, uint32_t tid, uint64_t prev, uint64_t index, uint64_t seq) {
  while (slow_faa(v, tid, false, &prev)) {
    if (atomic_load(&v->rec[tid].seq1) != seq) break; /* a helper late for a finished request */
    if (try_enq_slow(v, tid, prev >> 2, index)) break;
  }
}

static void dequeue_slow(ring_view *v, uint32_t tid, uint64_t prev, uint64_t seq) {
  while (slow_faa(v, tid, true, &prev)) {
    if (atomic_load(&v->rec[tid].seq1) != seq) break; /* deviation 2 */
    if (try_deq_slow(v, tid, prev >> 2)) break;
  }
}

/* help_enqueue / help_dequeue: a consistent snapshot of the request
 * (seq2 first, its fields, seq1 last: the owner writes them in the
 * opposite order), then the same slow path as its owner. */
static void help_thread(ring_view *v, uint32_t t) {
  syncq_queue_wcq_record *r = &v->rec[t];
  uint64_t seq = atomic_load(&r->seq2);
  bool enq = atomic_load(&r->enqueue) != 0;
  uint64_t index = atomic_load(&r->index);
  uint64_t init = enq ? atomic_load(&r->init_tail) : atomic_load(&r->init_head);
  if (atomic_load(&r->seq1) != seq) return;
  atomic_fetch_add(&v->q->helps, 1);
  if (enq) enqueue_slow(v, t, init << 2, index, seq);
  else dequeue_slow(v, t, init << 2, seq);
}

static inline void help_threads(ring_view *v, uint32_t tid) {
  syncq_queue_wcq_record *me = &v->rec[tid];
  if (--me->next_check != 0) return;
  uint32_t t = me->next_tid;
  if (t != tid && atomic_load(&v->rec[t].pending)) help_thread(v, t);
  me->next_check = help_delay();
  me->next_tid = (t + 1) % THREADS;
}

static void publish(ring_view *v, syncq_queue_wcq_record *r, bool enq, uint64_t ticket, uint64_t index, uint64_t seq) {
  if (enq) {
    atomic_store(&r->local_tail, ticket << 2);
    atomic_store(&r->init_tail, ticket);
    atomic_store(&r->index, index);
  } else {
    atomic_store(&r->local_head, ticket << 2);
    atomic_store(&r->init_head, ticket);
  }
  atomic_store(&r->enqueue, enq ? 1u : 0u);
  atomic_store(&r->seq2, seq);
  atomic_store(&r->pending, 1u);
  atomic_fetch_add(&v->q->slow_paths, 1);
  /* relaxed: set by the test before this thread's operation began */
  wcq_published_fn hook = atomic_load_explicit(&syncq_queue_wcq_test_published__, memory_order_relaxed);
  if (hook != NULL) hook(enq ? 1 : 0);
}

static void ring_enqueue(ring_view *v, uint32_t tid, uint64_t index) {
  help_threads(v, tid);
  const unsigned tries = patience(WCQ_PATIENCE_ENQ);
  /* relaxed: a test flag, set while no operation runs */
  const unsigned drop = atomic_load_explicit(&syncq_queue_wcq_test_drop_enq__, memory_order_relaxed);
  uint64_t T = 0;
  for (unsigned k = 0; k < tries; k++) {
    T = atomic_fetch_add(&v->r->tail.lo, 1);
    SYNCQ_RACE_POINT("queue.wcq.enqueue.ticket"); /* a ticket held, its entry not yet written */
    if ((drop == 0 || T % drop != 0) && try_enq(v, T, index)) return;
  }
  syncq_queue_wcq_record *r = &v->rec[tid];
  uint64_t seq = atomic_load(&r->seq1);
  publish(v, r, true, T, index, seq);
  enqueue_slow(v, tid, T << 2, index, seq);
  atomic_store(&r->pending, 0u);
  atomic_store(&r->seq1, seq + 1);
}

static uint64_t ring_dequeue(ring_view *v, uint32_t tid) {
  if (atomic_load(&v->r->threshold) < 0) return bot(v);
  help_threads(v, tid);
  const unsigned tries = patience(WCQ_PATIENCE_DEQ);
  uint64_t H = 0, idx;
  for (unsigned k = 0; k < tries; k++) {
    H = atomic_fetch_add(&v->r->head.lo, 1);
    SYNCQ_RACE_POINT("queue.wcq.dequeue.ticket"); /* a ticket held, its entry not yet read */
    int st = try_deq(v, H, &idx);
    if (st == 1) return idx;
    if (st == 0) return bot(v);
  }
  syncq_queue_wcq_record *r = &v->rec[tid];
  uint64_t seq = atomic_load(&r->seq1);
  publish(v, r, false, H, 0, seq);
  dequeue_slow(v, tid, H << 2, seq);
  atomic_store(&r->pending, 0u);
  atomic_store(&r->seq1, seq + 1);
  /* the slow path's verdict: the ticket it ended on holds our item, or
   * it ended on EMPTY */
  uint64_t h = atomic_load(&r->local_head) >> 2;
  syncq_pr_dw_atomic *ent = entry_of(v, h);
  /* acquire: pairs with the CAS that produced the item */
  uint64_t E = atomic_load_explicit(&ent->lo, memory_order_acquire);
  if (e_cycle(v, E) == t_cycle(v, h) && !idx_empty(v, e_index(v, E))) {
    consume(v, h, ent, E);
    return e_index(v, E);
  }
  return bot(v);
}

/* ------------------------------------------------------------ the queue */

static inline syncq_pr_dw_atomic *entries_aq(syncq_queue_wcq *q) { return (syncq_pr_dw_atomic *)(void *)(q + 1); }
static inline syncq_pr_dw_atomic *entries_fq(syncq_queue_wcq *q) { return entries_aq(q) + 2 * q->n; }
static inline _Atomic(void *) *slots_of(syncq_queue_wcq *q) {
  return (_Atomic(void *) *)(void *)(entries_fq(q) + 2 * q->n);
}
static inline ring_view view_aq(syncq_queue_wcq *q) {
  return (ring_view){&q->aq, entries_aq(q), q->rec_aq, q, q->n, q->order};
}
static inline ring_view view_fq(syncq_queue_wcq *q) {
  return (ring_view){&q->fq, entries_fq(q), q->rec_fq, q, q->n, q->order};
}

static void ring_init(ring_view *v, bool full) {
  uint64_t two_n = 2 * v->n;
  for (uint64_t i = 0; i < two_n; i++) {
    /* cycle 0 empty, or cycle 1 (tickets 2n..3n-1) holding index i */
    uint64_t e = (full && i < v->n) ? mk(v, 1, 1, 1, i) : mk(v, 0, 1, 1, bot(v));
    atomic_init(&v->e[i].lo, e);
    atomic_init(&v->e[i].hi, 0); /* Note: below every ticket's cycle */
  }
  atomic_init(&v->r->tail.lo, full ? 3 * v->n : two_n);
  atomic_init(&v->r->tail.hi, 0);
  atomic_init(&v->r->head.lo, two_n);
  atomic_init(&v->r->head.hi, 0);
  atomic_init(&v->r->threshold, full ? threshold3(v) : -1);
  for (uint32_t t = 0; t < THREADS; t++) {
    syncq_queue_wcq_record *r = &v->rec[t];
    r->next_check = WCQ_HELP_DELAY;
    r->next_tid = (t + 1) % THREADS;
    atomic_init(&r->seq1, 1);
    atomic_init(&r->local_tail, 0); /* ticket 0 is never taken: counters start at 2n */
    atomic_init(&r->init_tail, 0);
    atomic_init(&r->local_head, 0);
    atomic_init(&r->init_head, 0);
    atomic_init(&r->index, 0);
    atomic_init(&r->seq2, 0);
    atomic_init(&r->enqueue, 0);
    atomic_init(&r->pending, 0);
  }
}

int syncq_queue_wcq_bytes(size_t capacity, size_t *bytes) {
  if (bytes == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0) return SYNCQ_EINVAL;
  if (capacity > ((size_t)1 << 40) || capacity > (SIZE_MAX - sizeof(syncq_queue_wcq)) / (9 * sizeof(uint64_t)))
    return SYNCQ_EINVAL;
  *bytes = SYNCQ_QUEUE_WCQ_BYTES(capacity);
  return SYNCQ_OK;
}

int syncq_queue_wcq_init(syncq_queue_wcq *q, size_t capacity) {
  size_t bytes;
  if (q == NULL || ((uintptr_t)q % _Alignof(syncq_queue_wcq)) != 0) return SYNCQ_EINVAL;
  if (syncq_queue_wcq_bytes(capacity, &bytes) != SYNCQ_OK) return SYNCQ_EINVAL;
  /* relaxed: a test sets the hook before it initialises */
  if (!syncq_pr_dwcas_available() || atomic_load_explicit(&syncq_queue_wcq_test_no_dwcas__, memory_order_relaxed))
    return SYNCQ_ENOTSUP;
  q->n = capacity;
  q->order = 0;
  while ((UINT64_C(1) << q->order) < 2 * (uint64_t)capacity) q->order++;
  q->reserved_ = 0;
  atomic_init(&q->slow_paths, 0);
  atomic_init(&q->helps, 0);
  ring_view aq = view_aq(q), fq = view_fq(q);
  ring_init(&aq, false);
  ring_init(&fq, true); /* every slot starts free */
  _Atomic(void *) *slots = slots_of(q);
  for (size_t i = 0; i < capacity; i++) atomic_init(&slots[i], NULL);
  q->magic = WCQ_MAGIC;
  return SYNCQ_OK;
}

int syncq_queue_wcq_destroy(syncq_queue_wcq *q) {
  if (q == NULL || q->magic != WCQ_MAGIC) return SYNCQ_EINVAL;
  q->magic = 0;
  return SYNCQ_OK;
}

int syncq_queue_wcq_enqueue(syncq_queue_wcq *q, void *item) {
  if (q == NULL || item == NULL || q->magic != WCQ_MAGIC) return SYNCQ_EINVAL;
  int tid = tid_get();
  if (tid < 0) return SYNCQ_ELIMIT;
  ring_view fq = view_fq(q), aq = view_aq(q);
  uint64_t i = ring_dequeue(&fq, (uint32_t)tid);
  if (i == bot(&fq)) return SYNCQ_FULL;
  /* relaxed: published by the seq_cst CAS that puts i into aq, which the
   * dequeuer reads with acquire before reading the slot */
  atomic_store_explicit(&slots_of(q)[i], item, memory_order_relaxed);
  ring_enqueue(&aq, (uint32_t)tid, i);
  return SYNCQ_OK;
}

int syncq_queue_wcq_dequeue(syncq_queue_wcq *q, void **item) {
  if (q == NULL || item == NULL || q->magic != WCQ_MAGIC) return SYNCQ_EINVAL;
  int tid = tid_get();
  if (tid < 0) return SYNCQ_ELIMIT;
  ring_view fq = view_fq(q), aq = view_aq(q);
  uint64_t i = ring_dequeue(&aq, (uint32_t)tid);
  if (i == bot(&aq)) return SYNCQ_EMPTY;
  /* relaxed: ordered after the enqueuer's store by the acquire load of
   * the aq entry that gave us i; before our fq enqueue (seq_cst) hands
   * the slot on */
  *item = atomic_load_explicit(&slots_of(q)[i], memory_order_relaxed);
  ring_enqueue(&fq, (uint32_t)tid, i);
  return SYNCQ_OK;
}

uint64_t syncq_queue_wcq_slow_paths(const syncq_queue_wcq *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_wcq *)q)->slow_paths);
}
uint64_t syncq_queue_wcq_helps(const syncq_queue_wcq *q) {
  return q == NULL ? 0 : atomic_load(&((syncq_queue_wcq *)q)->helps);
}

SYNCQ_QUEUE_REGISTER(
  wcq, "wcq", "wCQ: SCQ's fetch-and-add ring made wait-free by a slow path with helping, pointers by indirection",
  "Nikolaev & Ravindran 2022 (SPAA), fast path, slow path and slow_F&A figures; cited by 004 §VI-A", WAIT_FREE,
  SYNCQ_PROP_FIFO | SYNCQ_PROP_BOUNDED);
