/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_hostile_test.c — active-message senders over a segment another
 * process has overwritten, and over a claim lock whose holder never lets
 * go.
 *
 * test_corrupt_fields: for every claim algorithm and every field a sender
 * reads from the segment (the header's fixed fields, the queue's offsets,
 * its tails, the slot states at the tails, the claim lock's words, the
 * doorbell words of syncq_am_wait's sleep), the field is overwritten the
 * way a crashed or hostile process could, then short and bulk sends are
 * made, SYNCQ_AM_NOWAIT and plain. Each must return the status this case
 * calls for (SYNCQ_EINVAL for a layout or state no process writes,
 * SYNCQ_EBUSY / SYNCQ_ETIMEDOUT for a lock that never frees, SYNCQ_FULL
 * for a queue that never drains, SYNCQ_OK over doorbell words of any
 * value) within the documented bound, never crash or hang. The receiver
 * then polls, and waits (told to sleep at once) for a short timeout, which
 * must end in time whatever the segment holds. Each case runs in its own
 * forked child: a crash (signal) or a hang (alarm) fails the case by name.
 *
 * test_stopped_holder: a sender SIGSTOPped while it holds the claim lock
 * (the race point "am.claim.inside" stops it there). Another sender's NOWAIT send
 * returns SYNCQ_EBUSY at once, its plain send SYNCQ_ETIMEDOUT within
 * the bound (SYNCQ_AM_LOCK_WAIT_STALE stale intervals, at least
 * SYNCQ_AM_LOCK_WAIT_MIN_NS); after SIGCONT every message
 * is delivered. (Lock-free: no lock, both sends succeed.)
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

#include "syncq_race.h" /* first (it brings syncq/pr.h): the race point where a sender stops holding the lock */

#include "am/am_internal.h" /* the endpoint's mapping */
#include "am/am_segment.h"  /* the layout: the test overwrites its fields */
#include "syncq/am.h"
#include "syncq/clock.h"

#include "shm_leftovers.h" /* shm_test_pid, shm_leftovers: no name of ours left behind */

#ifndef SYNCQ_AM_LOCK_WAIT_STALE /* lets the test build against a tree without the bound (to show the old hang) */
#define SYNCQ_AM_LOCK_WAIT_STALE 16u
#define SYNCQ_AM_LOCK_WAIT_MIN_NS 1000000000ull
#endif

#define STALE_NS 1000000ull /* 1 ms: the plain-send bound is the floor */
#define BOUND_NS                                                                                         \
  (STALE_NS * SYNCQ_AM_LOCK_WAIT_STALE > SYNCQ_AM_LOCK_WAIT_MIN_NS ? STALE_NS * SYNCQ_AM_LOCK_WAIT_STALE \
                                                                   : SYNCQ_AM_LOCK_WAIT_MIN_NS)
#define SLACK_NS 3000000000ull      /* a loaded (sanitized, shared) machine's scheduling */
#define NOWAIT_MAX_NS 1000000000ull /* "at once", with the same slack for the scheduler */
#define WAIT_NS 20000000ull         /* 20 ms: the receiver's wait after the sends */
#define CHILD_ALARM_S 20            /* a hang past this fails the case (SIGALRM) */
#define PACKETS 8u
#define BLOCKS 2u
#define BULK 128u
#define H_SINK 1

static char seg_name[96];
static unsigned delivered;

static void h_sink(syncq_am_token *tk, const uint32_t *args, unsigned nargs, const void *data, size_t len, void *ctx) {
  (void)tk, (void)args, (void)nargs, (void)data, (void)len, (void)ctx;
  delivered++;
}

/* Statuses as a set. */
#define S(x) (1u << ((x) + 16))
static bool in_set(int r, unsigned set) { return r >= -16 && r < 16 && (set & S(r)) != 0; }

enum { K_GEOM, K_STATE_BAD, K_BULK_BAD, K_TAIL, K_LOCK_LIVE, K_LOCK_GARBAGE, K_NEXT, K_MUTEX_KIND, K_DOORBELL };

typedef struct hcase {
  const char *name;
  int kind;
  void (*apply)(syncq_am_endpoint *ep); /* overwrite the field (in the receiver's mapping: the same memory) */
} hcase;

static am_header *hdr(syncq_am_endpoint *ep) { return ep->base; }
static am_queue *req(syncq_am_endpoint *ep) { return am_queue_of(ep->base, AM_Q_REQUEST); }

static void c_claim(syncq_am_endpoint *ep) { hdr(ep)->claim = (hdr(ep)->claim + 1) % SYNCQ_AM_CLAIM_COUNT; }
static void c_version(syncq_am_endpoint *ep) { hdr(ep)->version = 7; }
static void c_packets(syncq_am_endpoint *ep) { hdr(ep)->packets = 1u << 30; }
static void c_packet_shift(syncq_am_endpoint *ep) { hdr(ep)->packet_shift = 31; }
static void c_blocks(syncq_am_endpoint *ep) { hdr(ep)->bulk_blocks = 1u << 20; }
static void c_bulk_size(syncq_am_endpoint *ep) { hdr(ep)->bulk_size = 1u << 24; }
static void c_stale(syncq_am_endpoint *ep) { hdr(ep)->stale_ns = 0; }
static void c_size(syncq_am_endpoint *ep) { hdr(ep)->size = 1ull << 40; }
static void c_creator(syncq_am_endpoint *ep) { hdr(ep)->creator_pid = 1; }
static void c_queue_off(syncq_am_endpoint *ep) { hdr(ep)->queue_off[AM_Q_REQUEST] = 1ull << 40; }
static void c_queue_off_near(syncq_am_endpoint *ep) { hdr(ep)->queue_off[AM_Q_REQUEST] += 64; }
static void c_peers_off(syncq_am_endpoint *ep) { hdr(ep)->peers_off = ~0ull; }
static void c_packets_off(syncq_am_endpoint *ep) { req(ep)->packets_off = 1ull << 40; }
static void c_slots_off(syncq_am_endpoint *ep) { req(ep)->bulk_slots_off = ~0ull - 63; }
static void c_data_off(syncq_am_endpoint *ep) { req(ep)->bulk_data_off = 1ull << 33; }
static void c_pkt_state(syncq_am_endpoint *ep) {
  am_packet *p = am_packets(ep->base, req(ep));
  atomic_store(&p[0].state, 0xDEADBEEFCAFE00ABull); /* type 0xAB: nobody writes it */
}
static void c_bulk_state(syncq_am_endpoint *ep) {
  am_bulk_slot *s = am_bulk_slots(ep->base, req(ep));
  atomic_store(&s[0].state, am_state(0, 12345, 0x77));
}
static void c_asleep(syncq_am_endpoint *ep) { atomic_store(&hdr(ep)->asleep, 0xA5A5A5A5u); }
static void c_bell(syncq_am_endpoint *ep) { atomic_store(&hdr(ep)->bell, UINT32_MAX); }
static void c_tail(syncq_am_endpoint *ep) { atomic_store(&req(ep)->tail, 0x77777777u); }
static void c_bulk_tail(syncq_am_endpoint *ep) { atomic_store(&req(ep)->bulk_tail, 0x66666665u); }

/* The claim lock held by a live process that is not a sender (this test's
 * parent): every claim's way of naming a holder. */
static void c_lock_live(syncq_am_endpoint *ep) {
  am_queue *q = req(ep);
  uint32_t holder = (uint32_t)getppid();
  if (hdr(ep)->claim == SYNCQ_AM_CLAIM_POSIX) {
#ifdef __GLIBC__
    q->lock.mutex.__data.__lock = (int)holder; /* the owner's tid, as glibc's robust mutex records it */
    q->lock.mutex.__data.__owner = (int)holder;
#endif
    return;
  }
  atomic_store(&q->lock.rlock.slot[0].word, am_state(0, holder, 1 /* HELD */));
  atomic_store(&q->lock.rlock.next, 1u);
}
static void c_lock_garbage(syncq_am_endpoint *ep) {
  am_queue *q = req(ep);
  if (hdr(ep)->claim == SYNCQ_AM_CLAIM_POSIX) {
    memset(&q->lock.mutex, 0xA5, sizeof q->lock.mutex);
    return;
  }
  for (unsigned i = 0; i < AM_RLOCK_SLOTS; i++) atomic_store(&q->lock.rlock.slot[i].word, 0x123456789ABCDEF7ull);
}
/* glibc: the POSIX mutex's kind word (which glibc dispatches on: lock
 * elision runs XBEGIN, a SIGILL without TSX). Elsewhere in the union it
 * lies in padding no other claim reads. */
static void c_mutex_kind(syncq_am_endpoint *ep) {
#ifdef __GLIBC__
  req(ep)->lock.mutex.__data.__kind = 256 | 16 | 128; /* elision + robust + pshared */
#else
  (void)ep;
#endif
}
static void c_next(syncq_am_endpoint *ep) {
  int c = hdr(ep)->claim;
  if (c == SYNCQ_AM_CLAIM_TICKET || c == SYNCQ_AM_CLAIM_ANDERSON) atomic_store(&req(ep)->lock.rlock.next, 5000u);
}

static const hcase cases[] = {
  {"header.claim", K_GEOM, c_claim},
  {"header.version", K_GEOM, c_version},
  {"header.packets", K_GEOM, c_packets},
  {"header.packet_shift", K_GEOM, c_packet_shift},
  {"header.bulk_blocks", K_GEOM, c_blocks},
  {"header.bulk_size", K_GEOM, c_bulk_size},
  {"header.stale_ns", K_GEOM, c_stale},
  {"header.size", K_GEOM, c_size},
  {"header.creator_pid", K_GEOM, c_creator},
  {"header.queue_off (outside)", K_GEOM, c_queue_off},
  {"header.queue_off (inside)", K_GEOM, c_queue_off_near},
  {"header.peers_off", K_GEOM, c_peers_off},
  {"queue.packets_off", K_GEOM, c_packets_off},
  {"queue.bulk_slots_off", K_GEOM, c_slots_off},
  {"queue.bulk_data_off", K_GEOM, c_data_off},
  {"packet.state (tail)", K_STATE_BAD, c_pkt_state},
  {"bulk_slot.state (bulk tail)", K_BULK_BAD, c_bulk_state},
  {"queue.tail", K_TAIL, c_tail},
  {"queue.bulk_tail", K_TAIL, c_bulk_tail},
  {"lock held by a live foreign pid", K_LOCK_LIVE, c_lock_live},
  {"lock words garbage", K_LOCK_GARBAGE, c_lock_garbage},
  {"lock.next ahead", K_NEXT, c_next},
  {"POSIX mutex kind word", K_MUTEX_KIND, c_mutex_kind},
  {"header.asleep (doorbell)", K_DOORBELL, c_asleep},
  {"header.bell (doorbell)", K_DOORBELL, c_bell},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* What a send may return for this case: `plain` is false for NOWAIT. Also
 * whether the plain send is made at all (a queue that never drains is a
 * full queue: a plain send waits on it by design, NOWAIT says SYNCQ_FULL). */
static unsigned expected(int kind, int claim, bool plain, bool bulk, bool *make) {
  bool locking = claim != SYNCQ_AM_CLAIM_LOCKFREE;
  bool spin = locking && claim != SYNCQ_AM_CLAIM_POSIX;
  bool tas = claim == SYNCQ_AM_CLAIM_TAS || claim == SYNCQ_AM_CLAIM_TTAS;
  *make = true;
  switch (kind) {
  case K_GEOM:
    return S(SYNCQ_EINVAL);
  case K_STATE_BAD: /* lock-free: the plain short send took the bad position, the bulk one gets the next */
    return S(SYNCQ_EINVAL) | (!locking && plain && bulk ? S(SYNCQ_OK) : 0u);
  case K_BULK_BAD:
    return bulk ? S(SYNCQ_EINVAL) : S(SYNCQ_OK);
  case K_TAIL:
    if (locking) return S(SYNCQ_EINVAL) | S(SYNCQ_OK); /* bulk_tail: short sends still work */
    *make = !plain;                                    /* lock-free: positions far ahead of the head are a full queue */
    return S(SYNCQ_FULL) | S(SYNCQ_OK);
  case K_LOCK_LIVE:
    if (!locking) return S(SYNCQ_OK);
    return plain ? S(SYNCQ_ETIMEDOUT) : S(SYNCQ_EBUSY);
  case K_LOCK_GARBAGE:
    if (!locking) return S(SYNCQ_OK);
    if (tas) return S(SYNCQ_EINVAL);
    if (spin) return plain ? S(SYNCQ_ETIMEDOUT) : S(SYNCQ_EBUSY);
    /* posix: whatever glibc makes of a mutex of 0xA5 bytes, as a status */
    return S(SYNCQ_EINVAL) | S(SYNCQ_EBUSY) | S(SYNCQ_ETIMEDOUT) | S(SYNCQ_ESYS);
  case K_MUTEX_KIND:
#ifdef __GLIBC__
    return claim == SYNCQ_AM_CLAIM_POSIX ? S(SYNCQ_EINVAL) : S(SYNCQ_OK);
#else
    return S(SYNCQ_OK);
#endif
  case K_DOORBELL: /* any value: a wake-up too many, or a sleep cut off by its slice */
    return S(SYNCQ_OK);
  case K_NEXT:
    if (!spin || tas) return S(SYNCQ_OK);
    return plain ? S(SYNCQ_ETIMEDOUT) : S(SYNCQ_EBUSY);
  default:
    return 0;
  }
}

/* The child of one (claim, case): exit 0, or 10 + the failing send's
 * number (with the status printed). */
static void run_case(int claim, const hcase *hc) {
  alarm(CHILD_ALARM_S);
  syncq_am_config cfg = {
    .claim = claim, .packets = PACKETS, .bulk_blocks = BLOCKS, .bulk_size = BULK, .stale_claim_ns = STALE_NS};
  syncq_am_endpoint *ep;
  if (syncq_am_create(seg_name, &cfg, &ep) != SYNCQ_OK) _exit(2);
  if (syncq_am_register(ep, H_SINK, "sink", h_sink, NULL) != SYNCQ_OK) _exit(3);
  syncq_am_peer *peer;
  if (syncq_am_connect(ep, seg_name, &peer) != SYNCQ_OK) _exit(4);
  hc->apply(ep);
  uint32_t args[2] = {1, 2};
  unsigned char blk[BULK];
  memset(blk, 0x5A, sizeof blk);
  int step = 0;
  for (int plain = 0; plain < 2; plain++)
    for (int bulk = 0; bulk < 2; bulk++) {
      step++;
      bool make;
      unsigned want = expected(hc->kind, claim, plain, bulk, &make);
      if (!make) continue;
      unsigned flags = plain ? 0u : SYNCQ_AM_NOWAIT;
      uint64_t t0 = syncq_now_ns();
      int r = bulk ? syncq_am_request_bulk(peer, H_SINK, blk, sizeof blk, args, 2, flags)
                   : syncq_am_request(peer, H_SINK, args, 2, flags);
      uint64_t took = syncq_now_ns() - t0;
      uint64_t limit = plain ? BOUND_NS + SLACK_NS : NOWAIT_MAX_NS;
      if (!in_set(r, want) || took > limit) {
        printf("  %s, %s: %s %s send returned %s after %llu us\n", syncq_am_claim_name(claim), hc->name,
               plain ? "plain" : "NOWAIT", bulk ? "bulk" : "short", syncq_strerror(r),
               (unsigned long long)(took / 1000u));
        fflush(stdout);
        _exit(10 + step);
      }
    }
  int pr = syncq_am_poll(ep, 8, NULL);
  if (hc->kind == K_GEOM ? pr != SYNCQ_EINVAL : pr != SYNCQ_OK) _exit(20);
  if (hc->kind == K_GEOM) { /* a wait without limit ends too, at its first poll */
    unsigned handled = 99;
    if (syncq_am_wait(ep, 8, SYNCQ_AM_WAIT_FOREVER, &handled) != SYNCQ_EINVAL || handled != 0) _exit(21);
  } else { /* a wait that would sleep at once ends within its timeout, whatever it sleeps or yields over */
    ep->sleep_after_ns = 0;
    uint64_t t0 = syncq_now_ns();
    int wr = syncq_am_wait(ep, 8, WAIT_NS, NULL);
    uint64_t took = syncq_now_ns() - t0;
    if ((wr != SYNCQ_OK && wr != SYNCQ_ETIMEDOUT) || took > WAIT_NS + SLACK_NS) {
      printf("  %s, %s: a wait of %llu us returned %s after %llu us\n", syncq_am_claim_name(claim), hc->name,
             (unsigned long long)(WAIT_NS / 1000u), syncq_strerror(wr), (unsigned long long)(took / 1000u));
      fflush(stdout);
      _exit(22);
    }
    if (hc->kind == K_DOORBELL && atomic_load(&hdr(ep)->asleep) != 0u) _exit(23); /* cleared once awake */
  }
  (void)syncq_am_disconnect(peer);
  (void)syncq_am_destroy(ep);
  _exit(0);
}

static void test_corrupt_fields(void **state) {
  (void)state;
  int failures = 0;
  for (int c = 0; c < SYNCQ_AM_CLAIM_COUNT; c++)
    for (size_t k = 0; k < NCASES; k++) {
      snprintf(seg_name, sizeof seg_name, "syncq-amhostile-%d-%d-%zu", shm_test_pid(), c, k);
      fflush(stdout); /* the child must not print our buffer again */
      pid_t p = fork();
      assert_true(p >= 0);
      if (p == 0) {
        /* a crash must kill the child, not jump back into cmocka's runner
         * (whose handlers the child inherits) */
        const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
        run_case(c, &cases[k]);
      }
      int st = 0;
      assert_int_equal(waitpid(p, &st, 0), p);
      (void)syncq_am_unlink(seg_name); /* the child's, if it did not get to destroy it */
      if (WIFEXITED(st) && WEXITSTATUS(st) == 0) continue;
      failures++;
      if (WIFSIGNALED(st))
        printf("FAIL %s, %s: the sender died of signal %d (%s)\n", syncq_am_claim_name(c), cases[k].name, WTERMSIG(st),
               WTERMSIG(st) == SIGALRM ? "hung" : strsignal(WTERMSIG(st)));
      else printf("FAIL %s, %s: exit %d\n", syncq_am_claim_name(c), cases[k].name, WEXITSTATUS(st));
    }
  assert_int_equal(failures, 0);
}

/* ================================================================ stopped holder */

SYNCQ_RACE_HOOK_DEFINE;

static void stop_here(const char *name) {
  if (strcmp(name, "am.claim.inside") == 0) raise(SIGSTOP);
}

static void test_stopped_holder(void **state) {
  (void)state;
  for (int c = 0; c < SYNCQ_AM_CLAIM_COUNT; c++) {
    snprintf(seg_name, sizeof seg_name, "syncq-amhostile-%d-stop-%d", shm_test_pid(), c);
    syncq_am_config cfg = {
      .claim = c, .packets = PACKETS, .bulk_blocks = BLOCKS, .bulk_size = BULK, .stale_claim_ns = STALE_NS};
    syncq_am_endpoint *ep;
    assert_int_equal(syncq_am_create(seg_name, &cfg, &ep), SYNCQ_OK);
    assert_int_equal(syncq_am_register(ep, H_SINK, "sink", h_sink, NULL), SYNCQ_OK);
    delivered = 0;
    uint32_t args[1] = {7};
    fflush(stdout);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
      alarm(CHILD_ALARM_S);
      syncq_am_peer *p;
      if (syncq_am_connect(NULL, seg_name, &p) != SYNCQ_OK) _exit(2);
      syncq_race_hook = stop_here; /* stops holding the claim lock */
      _exit(syncq_am_request(p, H_SINK, args, 1, 0) == SYNCQ_OK ? 0 : 3);
    }
    int st = 0;
    assert_int_equal(waitpid(holder, &st, WUNTRACED), holder);
    assert_true(WIFSTOPPED(st));
    /* another sender, while the holder is stopped */
    syncq_am_peer *peer;
    assert_int_equal(syncq_am_connect(NULL, seg_name, &peer), SYNCQ_OK);
    bool locking = c != SYNCQ_AM_CLAIM_LOCKFREE;
    uint64_t t0 = syncq_now_ns();
    int r = syncq_am_request(peer, H_SINK, args, 1, SYNCQ_AM_NOWAIT);
    uint64_t took = syncq_now_ns() - t0;
    printf("  %s: NOWAIT send beside a stopped holder: %s in %llu us\n", syncq_am_claim_name(c), syncq_strerror(r),
           (unsigned long long)(took / 1000u));
    assert_int_equal(r, locking ? SYNCQ_EBUSY : SYNCQ_OK);
    assert_true(took < NOWAIT_MAX_NS);
    t0 = syncq_now_ns();
    r = syncq_am_request(peer, H_SINK, args, 1, 0);
    took = syncq_now_ns() - t0;
    printf("  %s: plain send beside a stopped holder: %s in %llu us (bound %llu us)\n", syncq_am_claim_name(c),
           syncq_strerror(r), (unsigned long long)(took / 1000u), (unsigned long long)(BOUND_NS / 1000u));
    assert_int_equal(r, locking ? SYNCQ_ETIMEDOUT : SYNCQ_OK);
    if (locking) assert_true(took >= BOUND_NS); /* it did wait for the holder, the bound long */
    assert_true(took < BOUND_NS + SLACK_NS);
    /* the holder continues and finishes its send; then the lock works */
    assert_int_equal(kill(holder, SIGCONT), 0);
    assert_int_equal(waitpid(holder, &st, 0), holder);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(syncq_am_request(peer, H_SINK, args, 1, 0), SYNCQ_OK);
    uint64_t deadline = syncq_now_ns() + 10000000000ull;
    unsigned want = locking ? 2u : 4u; /* the holder's and the last; lock-free: the two beside it as well */
    while (delivered < want && syncq_now_ns() < deadline) assert_int_equal(syncq_am_poll(ep, 8, NULL), SYNCQ_OK);
    assert_int_equal(delivered, want);
    assert_int_equal(syncq_am_disconnect(peer), SYNCQ_OK);
    assert_int_equal(syncq_am_destroy(ep), SYNCQ_OK);
  }
}

int main(int argc, char **argv) {
  (void)shm_test_pid(); /* before any fork: every name made carries this pid */
  if (argc > 1) cmocka_set_test_filter(argv[1]);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_corrupt_fields),
    cmocka_unit_test(test_stopped_holder),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  /* whatever died or failed: none of this run's names stays; one left by
   * tests that all passed is a leak, and fails the run */
  int left = shm_leftovers("syncq-amhostile-");
  return failed != 0 ? failed : left != 0;
}
