/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * am_reqreply.c — an active-message request and its reply between two
 * processes (syncq/am.h, 000's shared-memory active messages).
 *
 * The parent creates the "server" endpoint, whose handler 0 replies with
 * the square of its argument. A forked child creates its own endpoint
 * (only an endpoint's creator polls it), connects to the server naming
 * its endpoint for replies, sends requests and waits for the replies
 * (syncq_am_wait: it yields the processor while nothing arrives, then
 * sleeps until a sender wakes it, so the two processes also share one
 * processor well).
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <syncq/am.h>

#define REQUESTS 100
#define WAIT_NS 10000000000ull    /* a reply that takes 10 s means the server is gone */
#define SERVE_SLICE_NS 1000000ull /* the server looks at its child every 1 ms */
enum { H_SQUARE = 0, H_RESULT = 1 };

static void on_square(syncq_am_token *t, const uint32_t *args, unsigned nargs, const void *data, size_t len,
                      void *ctx) {
  (void)data, (void)len, (void)ctx;
  uint32_t out[2] = {args[0], nargs == 1 ? args[0] * args[0] : 0};
  syncq_am_reply(t, H_RESULT, out, 2, 0);
}

typedef struct results {
  unsigned got, wrong;
} results;

static void on_result(syncq_am_token *t, const uint32_t *args, unsigned nargs, const void *data, size_t len,
                      void *ctx) {
  (void)t, (void)data, (void)len;
  results *r = ctx;
  r->got++;
  if (nargs != 2 || args[1] != args[0] * args[0]) r->wrong++;
}

static int client(const char *server, const char *self_name) {
  syncq_am_endpoint *self;
  syncq_am_peer *peer;
  results r = {0, 0};
  if (syncq_am_create(self_name, NULL, &self) != SYNCQ_OK) return 1;
  if (syncq_am_register(self, H_RESULT, "result", on_result, &r) != SYNCQ_OK) return 1;
  if (syncq_am_connect(self, server, &peer) != SYNCQ_OK) return 1;
  for (uint32_t i = 1; i <= REQUESTS; i++) {
    if (syncq_am_request(peer, H_SQUARE, &i, 1, 0) != SYNCQ_OK) return 1;
    while (r.got < i) /* one at a time: a request, its reply */
      if (syncq_am_wait(self, 1, WAIT_NS, NULL) != SYNCQ_OK) return 1;
  }
  syncq_am_disconnect(peer);
  syncq_am_destroy(self);
  printf("client: %u replies, %u wrong\n", r.got, r.wrong);
  return r.got == REQUESTS && r.wrong == 0 ? 0 : 1;
}

int main(void) {
  char server[64], cli[64];
  snprintf(server, sizeof server, "syncq-example-%ld-server", (long)getpid());
  snprintf(cli, sizeof cli, "syncq-example-%ld-client", (long)getpid());
  syncq_am_endpoint *ep;
  int r = syncq_am_create(server, NULL, &ep);
  if (r != SYNCQ_OK) {
    fprintf(stderr, "cannot create %s: %s\n", server, syncq_strerror(r));
    return 1;
  }
  syncq_am_register(ep, H_SQUARE, "square", on_square, NULL);
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    int rc = client(server, cli);
    fflush(stdout);
    _exit(rc); /* not exit(): the parent's endpoint is the parent's to destroy */
  }
  int status = 0;
  for (;;) { /* serve until the client is done; a wait yields, then sleeps, when idle */
    syncq_am_wait(ep, 16, SERVE_SLICE_NS, NULL);
    pid_t w = waitpid(child, &status, WNOHANG);
    if (w == child) break;
  }
  syncq_am_destroy(ep);
  int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  printf("server: client %s\n", ok ? "served" : "failed");
  return ok ? 0 : 1;
}
