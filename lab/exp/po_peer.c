/* SPDX-License-Identifier: BSD-2-Clause */
/* po_peer.c — run an Erlang or Go peer of the postoffice experiments, or
 * another program of theirs (po_peer.h). */
#include "po_peer.h"

#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "syncq/po.h"
extern char **environ;

#define PEER_MAX_ARGS 6

const char *po_peer_absent(const char *peer, const char *erl_script, const char *go_bin) {
  if (strcmp(peer, "erlang") == 0) {
    if (SYNCQ_ESCRIPT[0] == '\0') return "escript not found when syncq-lab was built (Debian erlang-base)";
    if (access(SYNCQ_ESCRIPT, X_OK) != 0) return "escript is gone since syncq-lab was built";
    if (access(erl_script, R_OK) != 0) return "the Erlang peer's script is not found";
    return NULL;
  }
  if (go_bin[0] == '\0') return "no Go toolchain was found when syncq-lab was built";
  if (access(go_bin, X_OK) != 0) return "the Go peer was not built";
  return NULL;
}

int po_peer_run(const char *peer, const char *erl_script, const char *go_bin, const char *const args[], char *out,
                size_t cap, char *why, size_t whylen) {
  const char *argv[PEER_MAX_ARGS + 3];
  int n = 0;
  bool erlang = strcmp(peer, "erlang") == 0;
  argv[n++] = erlang ? "escript" : go_bin;
  if (erlang) argv[n++] = erl_script;
  for (int i = 0; i < PEER_MAX_ARGS && args[i] != NULL; i++) argv[n++] = args[i];
  argv[n] = NULL;
  char name[64];
  snprintf(name, sizeof name, "the %s peer", peer);
  return po_program_run(name, erlang ? SYNCQ_ESCRIPT : go_bin, argv, out, cap, why, whylen);
}

int po_program_run(const char *name, const char *path, const char *const argv[], char *out, size_t cap, char *why,
                   size_t whylen) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(why, whylen, "pipe failed");
    return -1;
  }
  fflush(NULL);
  /* posix_spawn, not fork: glibc starts the child on the parent's memory
   * (CLONE_VM | CLONE_VFORK) without copying its page tables. A fork
   * would write-protect every page the lab's process has (a postoffice's
   * kept stacks and tables: hundreds of MB after a large tree), and the
   * syncq sample after the peer's would then take a fault at each first
   * write. */
  posix_spawn_file_actions_t fa;
  pid_t child;
  int err = posix_spawn_file_actions_init(&fa);
  if (err == 0) err = posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  if (err == 0) err = posix_spawn_file_actions_addclose(&fa, fds[0]);
  if (err == 0) err = posix_spawn_file_actions_addclose(&fa, fds[1]);
  if (err == 0) err = posix_spawn(&child, path, &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    close(fds[0]), close(fds[1]);
    snprintf(why, whylen, "posix_spawn failed: %s", strerror(err));
    return -1;
  }
  close(fds[1]);
  size_t got = 0;
  ssize_t k;
  while (got < cap - 1 && (k = read(fds[0], out + got, cap - 1 - got)) > 0) got += (size_t)k;
  out[got] = '\0';
  char rest[256]; /* drain what does not fit, so the child never blocks on the pipe */
  while (read(fds[0], rest, sizeof rest) > 0) {
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(why, whylen, "%s failed (status %d): %.120s", name, status, out);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- lines */

const char *const po_peer_lines[] = {
  "fiber:mpsc", "fiber:nonblocking", "fiber:mutex", "thread:mpsc", "erlang", "go", NULL,
};

bool po_have_fibers(void) {
  for (int i = 0; i < syncq_po_backend_count(); i++) {
    const char *name;
    if (syncq_po_backend_info(i, &name, NULL) == SYNCQ_OK && strcmp(name, "fiber") == 0) return true;
  }
  return false;
}

bool po_line_parse(const char *name, const po_peers *peers, bool fibers, po_line *out) {
  const char *colon = strchr(name, ':');
  *out = (po_line){name, NULL, NULL, NULL};
  if (colon == NULL) {
    out->peer = name;
    return po_peer_absent(name, peers->erl_script, peers->go_bin) == NULL;
  }
  out->backend = strncmp(name, "fiber", 5) == 0 ? "fiber" : "thread";
  out->mailbox = colon + 1;
  return fibers || strcmp(out->backend, "fiber") != 0;
}

void po_peer_notes(lab_ctx *ctx, const po_peers *peers, bool fibers) {
  if (lab_planning(ctx)) return;
  if (!fibers) lab_note(ctx, "The fiber backend is not in this build (libboost-context-dev missing).");
  const char *why;
  if ((why = po_peer_absent("erlang", peers->erl_script, peers->go_bin)) != NULL)
    lab_note(ctx, "Peer erlang absent: %s.", why);
  else lab_note(ctx, "Peer erlang: %s running %s.", SYNCQ_ESCRIPT, peers->erl_script);
  if ((why = po_peer_absent("go", peers->erl_script, peers->go_bin)) != NULL) lab_note(ctx, "Peer go absent: %s.", why);
  else lab_note(ctx, "Peer go: %s (built from %s).", peers->go_bin, peers->go_source);
}

const char *po_peer_normalize_to(const po_peers *peers) {
  return po_peer_absent("go", peers->erl_script, peers->go_bin) == NULL ? "go" : NULL;
}
