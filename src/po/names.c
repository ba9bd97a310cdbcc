/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * names.c — registered names of postoffice processes (Erlang's
 * register/2, whereis/1, unregister/1).
 *
 * Contract
 *   Source:      Erlang/OTP's process registry: a name maps to one live
 *                process, a process has at most one name, and the name is
 *                removed when the process exits.
 *   Structure:   a hash table per system (FNV-1a, separate chaining),
 *                allocated on first register with 64 chains and doubled
 *                when the names outnumber the chains; every operation
 *                holds the system's spawn_lock, which the exit path
 *                (po_exit_notify) holds when it drops the name.
 *   Liveness:    a name counts in its process's nwatch (the exit's
 *                lock-free look, as monitors and links), so an exit drops
 *                it; and whereis/register check the pid's state under the
 *                lock, so an exit between its store of PO_EXITED and its
 *                locked part is already "no process": whereis never
 *                answers with a pid that has exited.
 *   Progress:    blocking (spawn_lock).
 *   Atomics:     register and unregister: one seq_cst RMW of the
 *                process's nwatch besides the mutex; whereis: the mutex
 *                and one acquire load of the pid's state.
 *   Linearizability: every call is atomic under spawn_lock; an exit drops
 *                its name at its locked part, and from its store of
 *                PO_EXITED on, whereis already answers SYNCQ_ENOENT.
 *   Memory:      one entry per name (malloc; SYNCQ_PO_NAME_MAX + 1 bytes of
 *                text); the chains array.
 *   Limits:      names of 1..SYNCQ_PO_NAME_MAX bytes; one per process.
 *   Signal-safe: no.  Process-shared: no.
 */
#include <stdlib.h>
#include <string.h>

#include "po_internal.h"

#define PO_NAMES_MIN 64u

static uint32_t hash_of(const char *text, size_t len) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)text[i]) * 16777619u;
  return h;
}

/* The length of a valid name, or 0 (NULL, empty, too long). */
static size_t name_len(const char *name) {
  if (name == NULL) return 0;
  size_t n = strnlen(name, SYNCQ_PO_NAME_MAX + 1);
  return n > SYNCQ_PO_NAME_MAX ? 0 : n;
}

/* Under spawn_lock: where the entry for text is (or would be) linked. */
static po_name **find(syncq_po_system *sys, const char *text, uint32_t h) {
  if (sys->names == NULL) return NULL;
  po_name **at = &sys->names[h & (sys->names_buckets - 1)];
  while (*at != NULL && ((*at)->hash != h || strcmp((*at)->text, text) != 0)) at = &(*at)->next;
  return at;
}

/* Under spawn_lock: is the entry's process live? */
static bool alive(syncq_po_system *sys, const po_name *e) {
  /* acquire: as a sender's look (syncq_po_send). */
  return po_pid_status(sys, e->pid,
                       atomic_load_explicit(&sys->procs[po_slot_of(sys, e->pid)].state, memory_order_acquire)) ==
         SYNCQ_OK;
}

/* Under spawn_lock: unhook *at and detach it from its process (which has
 * not run its exit's locked part: the entry would be gone). */
static void remove_at(syncq_po_system *sys, po_name **at) {
  po_name *e = *at;
  *at = e->next;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, e->pid)];
  p->name = NULL;
  atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as in syncq_po_monitor */
  sys->nnames--;
  free(e);
}

/* Under spawn_lock: twice the chains (best effort: longer chains if
 * memory is short). */
static void grow(syncq_po_system *sys) {
  uint32_t n = sys->names == NULL ? PO_NAMES_MIN : sys->names_buckets * 2u;
  po_name **t = calloc(n, sizeof *t);
  if (t == NULL) return;
  for (uint32_t i = 0; i < sys->names_buckets; i++) {
    po_name *e = sys->names[i];
    while (e != NULL) {
      po_name *next = e->next;
      e->next = t[e->hash & (n - 1u)];
      t[e->hash & (n - 1u)] = e;
      e = next;
    }
  }
  free(sys->names);
  sys->names = t;
  sys->names_buckets = n;
}

int syncq_po_register(syncq_po_system *sys, const char *name, syncq_po_pid pid) {
  size_t len = name_len(name);
  if (sys == NULL || len == 0 || pid < 0 || po_slot_of(sys, pid) >= sys->nslots) return SYNCQ_EINVAL;
  po_name *e = malloc(sizeof *e);
  if (e == NULL) return SYNCQ_ENOMEM;
  memcpy(e->text, name, len + 1);
  e->hash = hash_of(name, len);
  e->pid = pid;
  struct syncq_po_proc *p = &sys->procs[po_slot_of(sys, pid)];
  pthread_mutex_lock(&sys->spawn_lock);
  if (sys->names == NULL || sys->nnames >= sys->names_buckets) grow(sys);
  /* seq_cst, with pid's exit's RMW of nwatch after its store of PO_EXITED
   * (po_exit_notify): either we see it exited, or it sees our count and
   * drops the name under the lock. */
  atomic_fetch_add(&p->nwatch, 1u);
  int r = po_pid_status(sys, pid, atomic_load(&p->state));
  po_name **at = r == SYNCQ_OK ? find(sys, e->text, e->hash) : NULL;
  if (r == SYNCQ_OK && at == NULL) r = SYNCQ_ENOMEM;           /* no chains at all */
  else if (r == SYNCQ_OK && p->name != NULL) r = SYNCQ_EEXIST; /* one name per process */
  else if (r == SYNCQ_OK && *at != NULL) {
    if (alive(sys, *at)) r = SYNCQ_EEXIST;
    else remove_at(sys, at); /* its process exited and has not dropped it yet: the name is free */
  }
  if (r == SYNCQ_OK) {
    e->next = *at;
    *at = e;
    p->name = e;
    sys->nnames++;
  } else {
    atomic_fetch_sub(&p->nwatch, 1u); /* seq_cst: as above */
  }
  pthread_mutex_unlock(&sys->spawn_lock);
  if (r != SYNCQ_OK) free(e);
  return r;
}

int syncq_po_whereis(syncq_po_system *sys, const char *name, syncq_po_pid *pid) {
  size_t len = name_len(name);
  if (sys == NULL || len == 0 || pid == NULL) return SYNCQ_EINVAL;
  uint32_t h = hash_of(name, len);
  pthread_mutex_lock(&sys->spawn_lock);
  po_name **at = find(sys, name, h);
  int r = at != NULL && *at != NULL && alive(sys, *at) ? SYNCQ_OK : SYNCQ_ENOENT;
  if (r == SYNCQ_OK) *pid = (*at)->pid;
  pthread_mutex_unlock(&sys->spawn_lock);
  return r;
}

int syncq_po_unregister(syncq_po_system *sys, const char *name) {
  size_t len = name_len(name);
  if (sys == NULL || len == 0) return SYNCQ_EINVAL;
  uint32_t h = hash_of(name, len);
  pthread_mutex_lock(&sys->spawn_lock);
  po_name **at = find(sys, name, h);
  int r = SYNCQ_ENOENT;
  if (at != NULL && *at != NULL) {
    if (alive(sys, *at)) r = SYNCQ_OK;
    remove_at(sys, at); /* a dead process's name goes too (its exit would drop it) */
  }
  pthread_mutex_unlock(&sys->spawn_lock);
  return r;
}

void po_names_exit_locked(struct syncq_po_proc *p) {
  if (p->name == NULL) return;
  syncq_po_system *sys = p->sys;
  po_name **at = find(sys, p->name->text, p->name->hash);
  if (at != NULL && *at == p->name) remove_at(sys, at);
}

void po_names_destroy(syncq_po_system *sys) {
  for (uint32_t i = 0; i < sys->names_buckets; i++) {
    po_name *e = sys->names[i];
    while (e != NULL) {
      po_name *next = e->next;
      free(e);
      e = next;
    }
  }
  free(sys->names);
  sys->names = NULL;
}
