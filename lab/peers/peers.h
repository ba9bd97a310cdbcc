/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * peers.h — the peer libraries in the lab: the structures users would pick
 * instead of syncq's, registered as ordinary registry entries (family
 * queue / stack / pqueue / lock / barrier, names "<library>:<structure>",
 * SYNCQ_PROP_PEER set) so that every experiment and validation driver that
 * lists the registry runs them beside syncq's own algorithms.
 *
 * Each adapter (one file per library in lab/peers/) is compiled only when
 * its library was found at configure time; a library that is absent, or
 * present but unable to run here, registers nothing and says why in its
 * status line, which syncq-lab writes into the machine record so the report
 * shows it.
 */
#ifndef LAB_PEERS_H
#define LAB_PEERS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What to register. SPSC structures are only safe where the caller runs
 * them with one producer and one consumer (SYNCQ_PROP_SPSC): the validation
 * drivers and queue-1p1c do; every other experiment that lists the queues
 * leaves SYNCQ_PROP_SPSC entries out. */
enum {
  LAB_PEERS_SPSC = 1u << 0, /* also register the SPSC structures */
};

/* What syncq-lab registers: the SPSC peers too, measured by queue-1p1c
 * (one producer, one consumer); the experiments with several threads on a
 * side (ms98-queue, dg25-*, np99-locks, the apps' work pools) skip
 * SYNCQ_PROP_SPSC. */
#define LAB_PEERS_IN_LAB LAB_PEERS_SPSC

/* Why the SPSC peers are not measured in this program (NULL when they are
 * registered, as syncq-lab does), for the machine record. */
const char *lab_peers_spsc_note(void);

/* Register every available peer structure (idempotent: a second call adds
 * nothing). Returns how many entries the peers have in the registry, or a
 * negative syncq_status if the registry refused one (SYNCQ_ELIMIT). */
int lab_peers_register(unsigned flags);

/* One line per peer library, after lab_peers_register(): its name and
 * either how many structures it registered or why it registered none. */
typedef struct lab_peer_status {
  const char *library; /* "ck", "urcu", "dpdk", "boost", "tbb", "moodycamel", "crossbeam" */
  const char *package; /* where it comes from, e.g. "Debian libck-dev" */
  int registered;      /* entries added to the registry */
  char why[200];       /* empty when registered > 0; else the reason */
} lab_peer_status;

/* Around a fork() whose child goes on using the peer libraries (syncq-lab
 * forks a process per experiment): call before_fork just before it, then
 * after_fork_parent in the parent and after_fork_child in the child.
 * liburcu asks for it (its call_rcu threads are not copied into a child);
 * the other libraries need nothing. Not meant for a fork followed by exec
 * or _exit alone. */
void lab_peers_before_fork(void);
void lab_peers_after_fork_parent(void);
void lab_peers_after_fork_child(void);

size_t lab_peers_status_count(void);
const lab_peer_status *lab_peers_status_at(size_t i); /* NULL past the end */

#ifdef __cplusplus
}
#endif
#endif /* LAB_PEERS_H */
