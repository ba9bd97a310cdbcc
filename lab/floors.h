/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * floors.h — machine floors measured across cores and processes, shared by
 * phys (where every floor is measured first) and lc98-logp (which measures
 * the cross-core copy in its own run, beside its bulk transfers).
 *
 * Contract:
 *   cross-core copy   one thread pinned to slot a writes a buffer larger
 *               than the caches it would otherwise stay in, then a thread
 *               pinned to slot b copies it out with memcpy into its own
 *               buffer; bandwidth = bytes copied / copy time (the write is
 *               not timed). This is the "copy bandwidth between
 *               processors" 000 (Lumetta & Culler, §4.1) judges bulk
 *               transfers by ("about 80% of memcpy").
 *   cross-core transfer   the same rounds, both halves timed: from the
 *               second round on the writer's stores take each line back
 *               from the copier's cache, as a sender that reuses its
 *               buffers must (an AM bulk stream's 16 blocks); bandwidth =
 *               bytes / the slower half's mean time per round (the
 *               writer's over rounds 2.., the copier's over all): a stream
 *               overlaps the two halves on different buffers, so that is
 *               the rate it can at best approach. The writer's first touch
 *               of its buffer is made before the first round, untimed.
 *   cross-process round trip   two processes (fork) pinned to slots a and b
 *               bounce a counter in one cache line of a MAP_SHARED
 *               anonymous mapping; the result is the mean round trip.
 *   progress    blocking, but every wait is bounded (LAB_FLOOR_WAIT_NS):
 *               a stalled peer makes the call fail, never hang; the child
 *               process is killed and reaped on every error path.
 *   atomics     per round/round trip: one release store and one acquire
 *               load on each side (the flag or the line).
 *   memory      the copy: two buffers of `bytes`; the round trip: one
 *               shared page.
 *   signal safety  none (threads, fork).
 *   process-shared the round trip's line is; the copy runs in one process.
 *   limits      bytes >= LAB_FLOOR_COPY_MIN_BYTES, rounds >= 1, n >= 1.
 *   slots       the lab's pinning order (lab_topo_pin_self): slots 0 and 1
 *               are different cores whenever the machine has two.
 *               topo NULL: unpinned.
 */
#ifndef SYNCQ_LAB_FLOORS_H
#define SYNCQ_LAB_FLOORS_H

#include <stddef.h>
#include <stdint.h>

#include "lab.h"

#define LAB_FLOOR_COPY_MIN_BYTES 4096u        /* one page */
#define LAB_FLOOR_COPY_QUICK_BYTES (8u << 20) /* smoke and quick: 8 MiB */
#define LAB_FLOOR_COPY_LLC_FACTOR 4u          /* default and full: 4x the last-level cache, */
#define LAB_FLOOR_COPY_MAX_BYTES (64u << 20)  /* capped at 64 MiB (some VMs report L3s of 100s of MiB) */
#define LAB_FLOOR_WAIT_NS 10000000000ull      /* a peer silent for 10 s has stalled */
#define LAB_FLOOR_WHY 200

/* The buffer the copy floor uses at this size: LAB_FLOOR_COPY_QUICK_BYTES
 * for smoke and quick, else LAB_FLOOR_COPY_LLC_FACTOR times the largest
 * cache hwloc reports, at least the quick size and at most
 * LAB_FLOOR_COPY_MAX_BYTES (either way far beyond any core's L1 and L2). */
size_t lab_floor_copy_bytes(lab_size size);

/* The two slots the floors use and whether they are different cores:
 * *slot_a = 0, *slot_b = 1; returns NULL when they are different cores, or
 * a sentence saying why not (one core, or pinning off) for a note. */
const char *lab_floor_slots(const lab_topo *topo, int *slot_a, int *slot_b);

/* The cross-core copy: `rounds` times, a writes `bytes` and b copies them
 * out; *gb_per_s = total bytes copied / total copy time (GB = 1e9 bytes);
 * the cross-core transfer, when transfer_gb_per_s is not NULL (rounds >= 2):
 * bytes / the slower half's mean time per round (see the contract above).
 * 0, or -1 with why (bad input, out of memory, a thread could not start,
 * a stalled peer, a wrong copy). */
int lab_floor_cross_core_copy(lab_topo *topo, int slot_a, int slot_b, size_t bytes, unsigned rounds, double *gb_per_s,
                              double *transfer_gb_per_s, char *why, size_t len);

/* The cross-process round trip: n round trips of a cache line between the
 * calling process (slot a) and a forked child (slot b); *ns = mean round
 * trip in ns. The caller's own pinning is undone before returning.
 * 0, or -1 with why (bad input, fork/mmap failed, a stalled peer). */
int lab_floor_cross_process_rtt(lab_topo *topo, int slot_a, int slot_b, uint64_t n, double *ns, char *why, size_t len);

#endif /* SYNCQ_LAB_FLOORS_H */
