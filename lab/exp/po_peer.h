/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_peer.h — running the postoffice experiments' peers (po-ring,
 * po-skynet, po-server): the same program in Erlang (an escript on
 * Debian's erlang-base) and in Go (built by lab/CMakeLists.txt), run by
 * the lab in a child process in the same run; each prints one line of
 * key=value figures that the experiment parses. Also the lines po-server
 * and po-skynet share (the postoffice's backends and mailboxes, and the
 * peers), their notes and the line they normalise to.
 */
#ifndef SYNCQ_LAB_PO_PEER_H
#define SYNCQ_LAB_PO_PEER_H

#include <stdbool.h>
#include <stddef.h>

#include "../lab.h"

#ifndef SYNCQ_ESCRIPT
#define SYNCQ_ESCRIPT ""
#endif

/* Why the peer ("erlang" or "go") cannot run (NULL: it can): escript or
 * the Go toolchain missing at build time, the script or binary gone.
 * erl_script: the .erl file; go_bin: the built Go program ("" when no Go
 * toolchain was found). */
const char *po_peer_absent(const char *peer, const char *erl_script, const char *go_bin);

/* Run the peer with up to 6 arguments (NULL-terminated) and put what it
 * printed on stdout (at most cap - 1 bytes, NUL-terminated) in out.
 * 0 when it exited with status 0; -1 otherwise, with the reason (status,
 * output) in why. */
int po_peer_run(const char *peer, const char *erl_script, const char *go_bin, const char *const args[], char *out,
                size_t cap, char *why, size_t whylen);

/* Run the program at path with argv (NULL-terminated, argv[0] first) the
 * same way (posix_spawn: the lab's pages are not write-protected as a
 * fork's would be), its stdout in out. 0 when it exited with status 0;
 * -1 otherwise, why naming it by `name` ("the Go peer"). */
int po_program_run(const char *name, const char *path, const char *const argv[], char *out, size_t cap, char *why,
                   size_t whylen);

/* ---------------------------------------------------------------- lines */

/* An experiment's peer programs: the Erlang script, the built Go program
 * ("" when no Go toolchain was found) and the Go source it was built from
 * (named in the notes). */
typedef struct po_peers {
  const char *erl_script;
  const char *go_bin;
  const char *go_source;
} po_peers;

/* The lines po-server and po-skynet compare, NULL-terminated: the
 * postoffice on fibers with three mailboxes ("fiber:mpsc",
 * "fiber:nonblocking", "fiber:mutex"), on kernel threads ("thread:mpsc"),
 * and the peers "erlang" and "go". */
extern const char *const po_peer_lines[];

/* One line, parsed: a postoffice backend and mailbox, or a peer. */
typedef struct po_line {
  const char *name;    /* as in po_peer_lines */
  const char *backend; /* "fiber" or "thread"; NULL: a peer */
  const char *mailbox;
  const char *peer; /* "erlang" or "go"; NULL: the postoffice */
} po_line;

/* True when the fiber backend is in this build. */
bool po_have_fibers(void);

/* Parse a line of po_peer_lines into *out: false when it cannot run here
 * (its peer is absent, or it is a fiber line and fibers is false). */
bool po_line_parse(const char *name, const po_peers *peers, bool fibers, po_line *out);

/* The experiment's notes on what runs its lines (outside planning): the
 * fiber backend missing, and each peer absent (why) or what runs it. */
void po_peer_notes(lab_ctx *ctx, const po_peers *peers, bool fibers);

/* The line figures are normalised to: "go" when Go runs, else NULL. */
const char *po_peer_normalize_to(const po_peers *peers);

#endif
