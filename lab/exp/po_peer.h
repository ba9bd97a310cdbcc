/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * po_peer.h — running the postoffice experiments' peers (po-ring,
 * po-skynet, po-server): the same program in Erlang (an escript on
 * Debian's erlang-base) and in Go (built by lab/CMakeLists.txt), run by
 * the lab in a child process in the same run; each prints one line of
 * key=value figures that the experiment parses.
 */
#ifndef SYNCQ_LAB_PO_PEER_H
#define SYNCQ_LAB_PO_PEER_H

#include <stddef.h>

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

#endif
