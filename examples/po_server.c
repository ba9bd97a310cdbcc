/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_server.c — a postoffice server under a registered name, called by
 * client processes with a timeout, watching them with monitors, and linked
 * to a worker that makes a blocking call (syncq/po.h, fiber backend where
 * the library has one).
 *
 * A call is a request carrying a reference of the caller's, and a wait
 * for the reply that carries it back: the inbox is one FIFO (there is no
 * selective receive), so a reply that comes after its call timed out is
 * told apart from the next call's by its reference and dropped. One
 * client fails (an exit reason of its own) before it calls: the server's
 * monitor hears its reason. The worker brackets a call that blocks its
 * thread with syncq_po_blocking_begin/_end, so the scheduler's other
 * fibers run on meanwhile, then exits with a reason that reaches the
 * server, which traps exits, as a message. Exits 0 when every client was
 * served or seen fail as planned.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>

#include <syncq/po.h>

#define CLIENTS 8
#define FAILING 3              /* the client that fails before calling */
#define FAIL_REASON 13         /* its exit reason */
#define WORKER_REASON 7        /* the linked worker's */
#define CALL_NS 10000000000ull /* a call's timeout: 10 s (generous: a loaded machine) */
enum { T_REQUEST = 1, T_REPLY = 2 };

typedef struct call_msg {
  uint64_t ref; /* the caller's: the reply carries it back */
  int32_t value;
} call_msg;

typedef struct client_arg {
  syncq_po_system *sys;
  int32_t id;
  uint64_t calls; /* this client's references so far */
} client_arg;

/* Call the process registered as name with value; its answer in *answer.
 * refs counts the caller's calls (its own: a fiber may change threads, so
 * not a thread-local).
 * SYNCQ_ENOENT: no process has that name; SYNCQ_ETIMEDOUT: no answer in
 * timeout_ns; another status: the postoffice's. */
static int call(syncq_po_proc *self, syncq_po_system *sys, uint64_t *refs, const char *name, int32_t value,
                uint64_t timeout_ns, int32_t *answer) {
  call_msg req = {.ref = ++*refs, .value = value}, rep;
  syncq_po_pid server;
  syncq_po_msg *m;
  int r = syncq_po_whereis(sys, name, &server);
  if (r != SYNCQ_OK) return r;
  if ((r = syncq_po_get(self, sizeof req, &m)) != SYNCQ_OK) return r;
  m->type = T_REQUEST;
  memcpy(m->data, &req, sizeof req);
  if ((r = syncq_po_send(self, server, m, SYNCQ_PO_LINK)) != SYNCQ_OK) {
    syncq_po_free(self, m); /* not sent: still ours */
    return r;
  }
  for (;;) { /* each wait gets the whole timeout: a stream of stray messages would lengthen the call */
    if ((r = syncq_po_recv_timeout(self, timeout_ns, &m)) != SYNCQ_OK) return r;
    int mine = m->type == T_REPLY && m->sender == server && m->len == sizeof rep;
    if (mine) {
      memcpy(&rep, m->data, sizeof rep);
      mine = rep.ref == req.ref; /* else a late answer to an earlier call */
    }
    syncq_po_free(self, m);
    if (mine) {
      *answer = rep.value;
      return SYNCQ_OK;
    }
  }
}

static void client(syncq_po_proc *self, void *arg) {
  client_arg *a = arg;
  int32_t answer = 0;
  if (a->id == FAILING) { /* fails before it calls: its monitors hear the reason */
    syncq_po_set_exit_reason(self, FAIL_REASON);
    return;
  }
  int r = call(self, a->sys, &a->calls, "square", a->id, CALL_NS, &answer);
  if (r != SYNCQ_OK || answer != a->id * a->id) {
    fprintf(stderr, "client %d: %s, answer %d\n", a->id, syncq_strerror(r), answer);
    syncq_po_set_exit_reason(self, 1);
    return;
  }
  /* a name nobody registered: the call says so at once */
  if (call(self, a->sys, &a->calls, "nobody", a->id, CALL_NS, &answer) != SYNCQ_ENOENT)
    syncq_po_set_exit_reason(self, 2);
}

static void worker(syncq_po_proc *self, void *arg) {
  (void)arg;
  syncq_po_blocking_begin(self);                             /* the scheduler's queue goes to a spare thread */
  thrd_sleep(&(struct timespec){.tv_nsec = 20000000}, NULL); /* a 20 ms call that blocks the thread */
  syncq_po_blocking_end(self);
  syncq_po_set_exit_reason(self, WORKER_REASON); /* abnormal: its link is told */
}

static int server(syncq_po_proc *self, void *arg) {
  syncq_po_system *sys = arg;
  static client_arg args[CLIENTS];
  syncq_po_pid pid;
  int r, served = 0, down = 0, failed = 0, worker_reason = 0;
  if ((r = syncq_po_register(sys, "square", syncq_po_pid_of(self))) != SYNCQ_OK ||
      (r = syncq_po_trap_exits(self, true)) != SYNCQ_OK || /* a linked exit arrives as a message */
      (r = syncq_po_spawn_detached(sys, worker, NULL, &pid)) != SYNCQ_OK ||
      (r = syncq_po_link(self, pid)) != SYNCQ_OK) {
    fprintf(stderr, "server: %s\n", syncq_strerror(r));
    return 1;
  }
  for (int32_t i = 0; i < CLIENTS; i++) {
    args[i] = (client_arg){sys, i, 0};
    if ((r = syncq_po_spawn_detached(sys, client, &args[i], &pid)) != SYNCQ_OK ||
        (r = syncq_po_monitor(self, pid, NULL)) != SYNCQ_OK) {
      fprintf(stderr, "server: client %d: %s\n", i, syncq_strerror(r));
      return 1;
    }
  }
  while (down < CLIENTS || worker_reason == 0) {
    syncq_po_msg *m;
    if ((r = syncq_po_recv_timeout(self, 2 * CALL_NS, &m)) != SYNCQ_OK) {
      fprintf(stderr, "server: recv: %s\n", syncq_strerror(r));
      return 1;
    }
    if (m->type == T_REQUEST && m->len == sizeof(call_msg)) {
      call_msg c;
      memcpy(&c, m->data, sizeof c);
      c.value *= c.value;
      memcpy(m->data, &c, sizeof c);
      m->type = T_REPLY;
      syncq_po_pid to = m->sender;
      if (syncq_po_send(self, to, m, SYNCQ_PO_LINK) == SYNCQ_OK) served++;
      else syncq_po_free(self, m); /* the caller has gone */
      continue;
    }
    if (m->type == SYNCQ_PO_DOWN) {
      syncq_po_down d;
      memcpy(&d, m->data, sizeof d);
      down++;
      if (d.reason != 0) {
        printf("server: client %d went down, reason %d\n", d.pid, d.reason);
        failed += d.reason == FAIL_REASON ? 1 : 100;
      }
    } else if (m->type == SYNCQ_PO_EXIT) {
      syncq_po_exit_msg e;
      memcpy(&e, m->data, sizeof e);
      worker_reason = e.reason;
      printf("server: linked worker %d exited, reason %d\n", e.pid, e.reason);
    }
    syncq_po_free(self, m);
  }
  printf("server: %d calls served, %d clients down\n", served, down);
  return served == CLIENTS - 1 && failed == 1 && worker_reason == WORKER_REASON ? 0 : 1;
}

int main(void) {
  syncq_po_system *sys;
  int result = 1;
  int r = syncq_po_create(NULL, &sys); /* the default backend, a scheduler per processing unit */
  if (r != SYNCQ_OK) {
    fprintf(stderr, "syncq_po_create: %s\n", syncq_strerror(r));
    return 1;
  }
  if ((r = syncq_po_run(sys, server, sys, &result)) != SYNCQ_OK)
    fprintf(stderr, "syncq_po_run: %s\n", syncq_strerror(r));
  if ((r = syncq_po_destroy(sys)) != SYNCQ_OK) fprintf(stderr, "syncq_po_destroy: %s\n", syncq_strerror(r));
  return result;
}
