/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * postoffice.c — Erlang-style processes passing messages (syncq/po.h).
 *
 * The main thread attaches as a process and sends a token around a ring
 * of PROCS spawned processes, ROUNDS times: main -> p0 -> p1 -> ... ->
 * p(PROCS-1) -> main; each hop adds one, so after round k the token is
 * k * PROCS. Each message is linked, not copied (one pointer moves).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <syncq/po.h>

#define PROCS 16
#define ROUNDS 100

typedef struct member {
  const syncq_po_pid *next; /* next[i]: where member i forwards */
  int index;
} member;

static void ring_member(syncq_po_proc *self, void *arg) {
  member *m = arg;
  for (int round = 0; round < ROUNDS; round++) {
    syncq_po_msg *msg;
    if (syncq_po_recv_blocking(self, &msg) != SYNCQ_OK) return;
    uint64_t token;
    memcpy(&token, msg->data, sizeof token);
    token++;
    memcpy(msg->data, &token, sizeof token);
    if (syncq_po_send(self, m->next[m->index], msg, SYNCQ_PO_LINK) != SYNCQ_OK) syncq_po_free(self, msg);
  }
}

int main(void) {
  syncq_po_system *sys;
  syncq_po_config cfg = {0};
  cfg.mailbox = "mpsc";
  if (syncq_po_create(&cfg, &sys) != SYNCQ_OK) return 1;
  syncq_po_proc *me;
  if (syncq_po_attach(sys, &me) != SYNCQ_OK) return 1;

  static syncq_po_pid next[PROCS];
  static member members[PROCS];
  syncq_po_pid pids[PROCS];
  /* spawn the last member first, so each spawned member's successor is known */
  next[PROCS - 1] = syncq_po_pid_of(me);
  for (int i = PROCS - 1; i >= 0; i--) {
    members[i] = (member){next, i};
    if (syncq_po_spawn(sys, ring_member, &members[i], &pids[i]) != SYNCQ_OK) {
      fprintf(stderr, "spawn refused: %s\n", syncq_po_limit_reason(sys));
      return 1;
    }
    if (i > 0) next[i - 1] = pids[i];
  }

  int ok = 1;
  syncq_po_msg *msg;
  uint64_t token = 0;
  if (syncq_po_get(me, sizeof token, &msg) != SYNCQ_OK) return 1;
  for (int round = 1; round <= ROUNDS && ok; round++) {
    memcpy(msg->data, &token, sizeof token);
    if (syncq_po_send(me, pids[0], msg, SYNCQ_PO_LINK) != SYNCQ_OK) return 1;
    if (syncq_po_recv_blocking(me, &msg) != SYNCQ_OK) return 1;
    memcpy(&token, msg->data, sizeof token);
    ok = token == (uint64_t)round * PROCS;
  }
  syncq_po_free(me, msg);
  for (int i = 0; i < PROCS; i++) syncq_po_join(sys, pids[i]);
  syncq_po_detach(me);
  syncq_po_destroy(sys);
  printf("postoffice: token %llu after %d rounds of %d processes\n", (unsigned long long)token, ROUNDS, PROCS);
  return ok ? 0 : 1;
}
