/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_hooks_test.c — the core library's routing of peers, tokens and polls
 * through a transport (am_internal.h's am_transport), the seam the MPI
 * transport plugs into, exercised without MPI by an in-memory loopback
 * transport: so the plain, TSan and ASan builds all cover it.
 *
 * Checked: a request through a transport peer runs the handler of the
 * endpoint that polls it, with its words and bulk bytes; the handler's
 * reply goes back through the transport (token routing) to the requester's
 * reply handler; at most one reply; a reply handler cannot reply; the
 * send calls' bad inputs (handler index, words, flags, oversize bulk
 * beyond the transport's bulk size) are refused before the transport
 * sees them; syncq_am_poll's budget covers transport messages; a message
 * in the transport alone ends a syncq_am_wait, and one arriving during a
 * wait ends it too (with a transport attached the wait never sleeps); a
 * transport peer's limits;
 * disconnect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "am/am_core.h" /* am_dispatch */
#include "am/am_internal.h"
#include "syncq/am.h"

#define LOOP_MAX 64     /* messages the loopback holds */
#define LOOP_BULK 4096u /* its bulk size: below the queue block's, to test the limit */
#define POLL_BUDGET 16u
#define WAIT_LIMIT_NS 1000000000ull /* 1 s: a wait blind to the transport times out */

enum { H_REQ = 1, H_REP = 2, H_BULK = 3 };

/* The loopback: every message is delivered to one endpoint (rank 0). */
typedef struct loop_msg {
  int qi;
  unsigned handler, nargs;
  uint32_t args[SYNCQ_AM_MAX_ARGS];
  unsigned char data[LOOP_BULK];
  size_t len;
  bool bulk;
  int src;
} loop_msg;

typedef struct loopback {
  am_transport tp;
  syncq_am_endpoint *ep;
  loop_msg q[LOOP_MAX];
  unsigned head, tail;
  unsigned sends;     /* calls that reached the transport */
  unsigned polls;     /* calls of its poll */
  unsigned arrive_at; /* a request arrives at this poll (0: none) */
} loopback;

static int loop_send(void *ctx, int dest, int qi, unsigned handler, const void *data, size_t len, bool bulk,
                     const uint32_t *args, unsigned nargs, unsigned flags) {
  loopback *l = ctx;
  (void)flags;
  l->sends++;
  if (dest != 0) return SYNCQ_EDEAD;
  if (l->tail - l->head >= LOOP_MAX) return SYNCQ_FULL;
  loop_msg *m = &l->q[l->tail++ % LOOP_MAX];
  m->qi = qi;
  m->handler = handler;
  m->nargs = nargs;
  if (nargs) memcpy(m->args, args, nargs * sizeof args[0]);
  m->len = len;
  if (len) memcpy(m->data, data, len);
  m->bulk = bulk;
  m->src = 0;
  return SYNCQ_OK;
}

static unsigned loop_poll(void *ctx, unsigned budget) {
  loopback *l = ctx;
  unsigned n = 0;
  if (++l->polls == l->arrive_at) { /* a message comes in from the network, ringing no bell */
    uint32_t a[2] = {5, 6};
    (void)loop_send(l, 0, AM_Q_REQUEST, H_REQ, NULL, 0, false, a, 2, 0);
  }
  while (n < budget && l->head != l->tail) {
    loop_msg m = l->q[l->head++ % LOOP_MAX]; /* a copy: the handler may send more */
    syncq_am_token tk = {l->ep, m.qi, AM_NO_PEER, false, &l->tp, m.src};
    am_dispatch(l->ep, &tk, m.handler, m.args, m.nargs, m.bulk ? m.data : NULL, m.len);
    n++;
  }
  return n;
}

typedef struct seen {
  unsigned reqs, reps, bulks, bad;
  int second_reply, reply_from_reply;
} seen;

static void h_req(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  seen *s = ctx;
  if (na != 2 || a[1] != a[0] + 1 || d != NULL || len != 0 || !syncq_am_token_is_request(t)) s->bad++;
  s->reqs++;
  uint32_t r[1] = {a[0] * 3u};
  if (syncq_am_reply(t, H_REP, r, 1, 0) != SYNCQ_OK) s->bad++;
  s->second_reply = syncq_am_reply(t, H_REP, r, 1, 0);
}

static void h_rep(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  seen *s = ctx;
  (void)d;
  (void)len;
  if (na != 1 || a[0] % 3u != 0 || syncq_am_token_is_request(t)) s->bad++;
  s->reps++;
  s->reply_from_reply = syncq_am_reply(t, H_REP, a, na, 0);
}

static void h_bulk(syncq_am_token *t, const uint32_t *a, unsigned na, const void *d, size_t len, void *ctx) {
  seen *s = ctx;
  (void)t;
  const unsigned char *p = d;
  if (na != 1 || len != a[0] || p == NULL) {
    s->bad++;
    return;
  }
  for (size_t i = 0; i < len; i++)
    if (p[i] != (unsigned char)(i * 7u)) s->bad++;
  s->bulks++;
}

typedef struct fixture {
  char name[64];
  syncq_am_endpoint *ep;
  loopback *l;
  syncq_am_peer *peer;
  seen s;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  snprintf(f->name, sizeof f->name, "syncq-mpihooks-%d", (int)getpid());
  (void)syncq_am_unlink(f->name);
  assert_int_equal(syncq_am_create(f->name, NULL, &f->ep), SYNCQ_OK);
  f->l = calloc(1, sizeof *f->l);
  f->l->tp = (am_transport){loop_send, loop_poll, LOOP_BULK, f->l};
  f->l->ep = f->ep;
  f->ep->tp = &f->l->tp; /* as syncq_am_mpi_create does */
  assert_int_equal(am_peer_transport(f->ep, &f->l->tp, 0, &f->peer), SYNCQ_OK);
  assert_int_equal(syncq_am_register(f->ep, H_REQ, "req", h_req, &f->s), SYNCQ_OK);
  assert_int_equal(syncq_am_register(f->ep, H_REP, "rep", h_rep, &f->s), SYNCQ_OK);
  assert_int_equal(syncq_am_register(f->ep, H_BULK, "bulk", h_bulk, &f->s), SYNCQ_OK);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  assert_int_equal(syncq_am_disconnect(f->peer), SYNCQ_OK);
  f->ep->tp = NULL;
  assert_int_equal(syncq_am_destroy(f->ep), SYNCQ_OK);
  free(f->l);
  free(f);
  return 0;
}

static void request_reply_through_transport(void **state) {
  fixture *f = *state;
  for (uint32_t i = 0; i < 20; i++) {
    uint32_t a[2] = {i, i + 1};
    assert_int_equal(syncq_am_request(f->peer, H_REQ, a, 2, 0), SYNCQ_OK);
  }
  assert_int_equal(f->l->sends, 20);
  unsigned handled = 0, total = 0;
  /* each request's handler sends a reply through the transport: 40 messages */
  for (int k = 0; k < 100 && total < 40; k++) {
    assert_int_equal(syncq_am_poll(f->ep, POLL_BUDGET, &handled), SYNCQ_OK);
    assert_true(handled <= POLL_BUDGET); /* the budget covers transport messages */
    total += handled;
  }
  assert_int_equal(total, 40);
  assert_int_equal(f->s.reqs, 20);
  assert_int_equal(f->s.reps, 20);
  assert_int_equal(f->s.bad, 0);
  assert_int_equal(f->s.second_reply, SYNCQ_EINVAL);     /* at most one reply */
  assert_int_equal(f->s.reply_from_reply, SYNCQ_EINVAL); /* not from a reply handler */
  syncq_am_counters c;
  assert_int_equal(syncq_am_counters_of(f->ep, &c), SYNCQ_OK);
  assert_int_equal(c.delivered, 40);
}

/* syncq_am_wait counts what the transport's poll handled: a message there
 * alone ends the wait, and the budget bounds it (the request, then the
 * reply its handler sent through the transport, one wait each). */
static void wait_through_transport(void **state) {
  fixture *f = *state;
  unsigned handled = 99;
  assert_int_equal(syncq_am_wait(f->ep, POLL_BUDGET, 0, &handled), SYNCQ_ETIMEDOUT);
  assert_int_equal(handled, 0);
  uint32_t a[2] = {1, 2};
  assert_int_equal(syncq_am_request(f->peer, H_REQ, a, 2, 0), SYNCQ_OK);
  assert_int_equal(syncq_am_wait(f->ep, 1, WAIT_LIMIT_NS, &handled), SYNCQ_OK);
  assert_int_equal(handled, 1);
  assert_int_equal(f->s.reqs, 1);
  assert_int_equal(f->s.reps, 0);
  assert_int_equal(syncq_am_wait(f->ep, 1, WAIT_LIMIT_NS, &handled), SYNCQ_OK);
  assert_int_equal(handled, 1);
  assert_int_equal(f->s.reps, 1);
  assert_int_equal(f->s.bad, 0);
  assert_int_equal(syncq_am_wait(f->ep, POLL_BUDGET, 0, &handled), SYNCQ_ETIMEDOUT); /* nothing left */
  assert_int_equal(handled, 0);
}

/* A wait on an endpoint with a transport never sleeps: it keeps polling
 * the transport, whose messages wake nobody. Here it is told to sleep at
 * once and for good (a sleep only a wake-up ends), and a request arrives
 * in the transport at its 50th poll: the wait must end with it. */
static void wait_with_transport_keeps_polling(void **state) {
  fixture *f = *state;
  f->ep->sleep_after_ns = 0;
  f->ep->sleep_slice_ns = UINT64_MAX;
  f->l->arrive_at = f->l->polls + 50u;
  unsigned handled = 0;
  assert_int_equal(syncq_am_wait(f->ep, 1, WAIT_LIMIT_NS, &handled), SYNCQ_OK);
  assert_int_equal(handled, 1);
  assert_int_equal(f->s.reqs, 1);
  assert_true(f->l->polls >= f->l->arrive_at);
  assert_int_equal(syncq_am_poll(f->ep, POLL_BUDGET, &handled), SYNCQ_OK); /* the reply */
  assert_int_equal(f->s.reps, 1);
  assert_int_equal(f->s.bad, 0);
}

static void bulk_and_limits(void **state) {
  fixture *f = *state;
  static unsigned char blk[SYNCQ_AM_BULK_MAX];
  for (size_t i = 0; i < sizeof blk; i++) blk[i] = (unsigned char)(i * 7u);
  uint32_t a[1] = {LOOP_BULK};
  assert_int_equal(syncq_am_request_bulk(f->peer, H_BULK, blk, LOOP_BULK, a, 1, 0), SYNCQ_OK);
  a[0] = 0;
  assert_int_equal(syncq_am_request_bulk(f->peer, H_BULK, NULL, 0, a, 1, 0), SYNCQ_OK);
  assert_int_equal(syncq_am_poll(f->ep, POLL_BUDGET, NULL), SYNCQ_OK);
  assert_int_equal(f->s.bulks, 2);
  assert_int_equal(f->s.bad, 0);
  syncq_am_limits lim;
  assert_int_equal(syncq_am_peer_limits(f->peer, &lim), SYNCQ_OK);
  assert_int_equal(lim.bulk_size, LOOP_BULK);
  assert_int_equal(lim.max_args, SYNCQ_AM_MAX_ARGS);
  assert_int_equal(lim.max_handlers, SYNCQ_AM_MAX_HANDLERS);
}

static void bad_inputs_never_reach_the_transport(void **state) {
  fixture *f = *state;
  static unsigned char blk[SYNCQ_AM_BULK_MAX + 1];
  uint32_t a[SYNCQ_AM_MAX_ARGS + 1] = {0};
  unsigned before = f->l->sends;
  assert_int_equal(syncq_am_request(f->peer, SYNCQ_AM_MAX_HANDLERS, a, 1, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_am_request(f->peer, H_REQ, a, SYNCQ_AM_MAX_ARGS + 1, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_am_request(f->peer, H_REQ, NULL, 2, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_am_request(f->peer, H_REQ, a, 2, 0x40u), SYNCQ_EINVAL);
  /* oversize: beyond the transport's bulk size, though within the queue block's */
  assert_int_equal(syncq_am_request_bulk(f->peer, H_BULK, blk, LOOP_BULK + 1, a, 1, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_am_request_bulk(f->peer, H_BULK, blk, SYNCQ_AM_BULK_MAX + 1, a, 1, 0), SYNCQ_EINVAL);
  assert_int_equal(syncq_am_request_bulk(f->peer, H_BULK, NULL, 8, a, 1, 0), SYNCQ_EINVAL);
  assert_int_equal(f->l->sends, before);
  /* the transport's own statuses come back unchanged */
  syncq_am_peer *gone;
  assert_int_equal(am_peer_transport(f->ep, &f->l->tp, 5, &gone), SYNCQ_OK);
  assert_int_equal(syncq_am_request(gone, H_REQ, a, 2, 0), SYNCQ_EDEAD);
  assert_int_equal(syncq_am_disconnect(gone), SYNCQ_OK);
  assert_int_equal(am_peer_transport(f->ep, NULL, 0, &gone), SYNCQ_EINVAL);
  assert_int_equal(am_peer_transport(f->ep, &f->l->tp, 0, NULL), SYNCQ_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(request_reply_through_transport, setup, teardown),
    cmocka_unit_test_setup_teardown(wait_through_transport, setup, teardown),
    cmocka_unit_test_setup_teardown(wait_with_transport_keeps_polling, setup, teardown),
    cmocka_unit_test_setup_teardown(bulk_and_limits, setup, teardown),
    cmocka_unit_test_setup_teardown(bad_inputs_never_reach_the_transport, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
