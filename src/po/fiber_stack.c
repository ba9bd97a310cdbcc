/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fiber_stack.c — the fiber backend's stacks: pooled, small, each with a
 * guard region below it while the kernel's mapping budget lasts (a canary
 * word past it), and a fault handler that names the process whose stack
 * ran into its guard.
 *
 * Contract
 *   Source:      002 §7 (an Erlang process needs a few hundred bytes; user-
 *                level threads as in Capriccio keep stacks small); the
 *                layout is the usual one of M:N runtimes: stacks carved
 *                from large mappings, a PROT_NONE guard below each.
 *   Progress:    get/put are lock-free on the pool's free list (counted
 *                pointers, syncq/reclaim.h); growing the pool makes a
 *                batch of guards or maps a new chunk under a mutex (not
 *                a hot path: stacks are reused; a fiber takes its stack
 *                when it first runs, not in spawn).
 *   Memory:      chunks of stacks mapped with MAP_NORESERVE (only each
 *                stack's top page, made resident with its guard, and the
 *                pages a fiber touches become resident), each chunk
 *                twice the last, from PO_CHUNK_MIN to PO_CHUNK_MAX
 *                slots; with guard markers a chunk's slots become
 *                stacks a batch at a time as the pool runs out (two
 *                process_madvise calls, its guards and its stacks' top
 *                pages, per batch of at least PO_ARM_MIN and a
 *                PO_ARM_DIV-th of the pool: guards made ahead of use
 *                stay below that share), so a pool of N stacks costs
 *                O(log N + N / PO_CHUNK_MAX) system calls (mprotect'ed
 *                guards: chunks of PO_CHUNK_MIN, one mprotect per
 *                stack). Cost, cold (Linux 6.18, this project's 2-core
 *                VM): the kernel's ~0.4 us per guard range and 25 ns
 *                per guard page (0.5 us for the default 16 KB guard),
 *                and a fresh page (1.0-1.6 us) for each stack's top,
 *                made resident with its batch of guards (marker
 *                chunks; else the fault at a fiber's first frame); no
 *                system call per stack once stacks are reused. Stacks return
 *                to the pool when their fiber exits; a destroyed
 *                system's chunks are kept for the next system of the
 *                same geometry (guards in place), up to the
 *                larger of SYNCQ_PO_STACK_CACHE_BYTES and the last
 *                destroyed system's peak half again, at most
 *                SYNCQ_PO_STACK_CACHE_MAX_BYTES (see "the stack cache").
 *   Guards:      page-table markers where the kernel has them (see "guard
 *                markers": no mapping split, a chunk's in one call), else
 *                mprotect'ed:
 *   Limits:      each mprotect'ed guard splits the mapping, so a stack costs two of
 *                the kernel's vm.max_map_count mappings (65,530 by
 *                default). Guards are given while a budget of them lasts
 *                (see "the mapping budget"); past it a chunk is one
 *                mapping and its stacks carry a canary word at their
 *                lowest address, checked at every switch out (the
 *                limit is then memory; SYNCQ_PO_NO_GUARD gives every
 *                stack a canary). A frame larger than the guard (16 KB
 *                by default) can skip it (stack clash) unless the code
 *                is built with -fstack-clash-protection; an overrun of a
 *                canary stack is seen only at the next switch, after it
 *                wrote into the stack below.
 *   Signal-safe: the fault handler uses only write(2) and sigaction.
 *   Process-shared: no.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fiber_internal.h"
#include "sanitizer.h" /* PO_ASAN */
#include "po_internal.h"

#if PO_ASAN
#include <sanitizer/asan_interface.h>
#endif

#if SYNCQ_HAVE_FIBERS

/* A pool's first chunk has PO_CHUNK_MIN stacks, each next one twice the
 * last, up to PO_CHUNK_MAX (IOV_MAX: one process_madvise installs a whole
 * chunk's guards): a small system maps little, a large one grows in
 * large steps. */
enum { PO_CHUNK_MIN = 64, PO_CHUNK_MAX = 1024 };
/* At least this much alternate signal stack for the overflow handler. */
enum { PO_ALTSTACK_MIN = 64 * 1024 };

struct po_stack_chunk {
  po_stack_chunk *next;
  char *base;
  size_t len;
  size_t stack_size, guard_size; /* its geometry, to be reused by a like pool */
  bool guarded;                  /* its stacks have their guards (else canaries) */
  bool split;                    /* the guards split the mapping (mprotect): counted in the budget */
  int slots;                     /* the mapping's [guard][stack] slots */
  int count;                     /* its stacks: the first `count` slots, carved, guards made */
  po_stack desc[];               /* [slots] */
};

/* A chunk of `slots` slots, all of them stacks unless its guards are
 * markers made batch by batch (see "guard markers": count then grows). */
static po_stack_chunk *chunk_new(int slots) {
  po_stack_chunk *c = calloc(1, sizeof *c + (size_t)slots * sizeof(po_stack));
  if (c != NULL) c->slots = c->count = slots;
  return c;
}

/* ---- the mapping budget ----
 * Each guard splits its chunk's mapping: a guarded chunk costs about two
 * of the kernel's vm.max_map_count mappings per stack (65,530 by default,
 * shared with everything else the program maps). Guards are given while
 * the budget lasts: what the limit leaves after the mappings the program
 * has now (/proc/self/maps), less PO_MAP_RESERVE_DIV-th of the limit kept
 * for the program's own (malloc arenas, threads, libraries). Past it a
 * chunk is one mapping and its stacks carry a canary instead (see
 * po_stack_canary_ok). Counting the program's mappings reads
 * /proc/self/maps: done when the budget runs short, and then only every
 * PO_REMEASURE_GROWS chunks, so spawns past the budget stay cheap. */
enum { PO_MAP_RESERVE_DIV = 8, PO_MAP_RESERVE_MIN = 1024, PO_REMEASURE_GROWS = 256 };

static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static long budget_left = -1; /* mappings guards may still take; -1: not measured */
static int remeasure_in;      /* grows before the next measurement, once short */

static long read_long(const char *path) {
  FILE *f = fopen(path, "r");
  long v = -1;
  if (f != NULL) {
    if (fscanf(f, "%ld", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

static long count_maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (f == NULL) return -1;
  long n = 0;
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0)
    for (size_t i = 0; i < k; i++) n += buf[i] == '\n';
  fclose(f);
  return n;
}

static void measure(void) {
  long limit = read_long("/proc/sys/vm/max_map_count");
  long now = count_maps();
  if (limit <= 0 || now < 0) { /* no /proc: guards until mprotect says no */
    budget_left = LONG_MAX / 2;
    return;
  }
  long reserve = limit / PO_MAP_RESERVE_DIV > PO_MAP_RESERVE_MIN ? limit / PO_MAP_RESERVE_DIV : PO_MAP_RESERVE_MIN;
  budget_left = limit - now - reserve;
}

/* May a new chunk of n stacks have guards? Takes their mappings from the
 * budget if so. */
static bool budget_take(long n) {
  long need = 2 * n + 1;
  pthread_mutex_lock(&budget_lock);
  if (budget_left < need) {
    if (budget_left < 0 || remeasure_in <= 0) {
      measure();
      remeasure_in = PO_REMEASURE_GROWS;
    } else {
      remeasure_in--;
    }
  }
  bool ok = budget_left >= need;
  if (ok) budget_left -= need;
  pthread_mutex_unlock(&budget_lock);
  return ok;
}

static void budget_give(long n, bool exhausted) {
  pthread_mutex_lock(&budget_lock);
  if (exhausted) { /* mprotect said ENOMEM: the kernel's count, not ours */
    budget_left = 0;
    remeasure_in = PO_REMEASURE_GROWS;
  } else if (budget_left >= 0) {
    budget_left += 2 * n + 1;
  }
  pthread_mutex_unlock(&budget_lock);
}

/* ---- the stack cache ----
 * Chunks of destroyed systems, kept for the next system with the same
 * geometry (glibc keeps thread stacks the same way): a new system's
 * spawns then cost no mmap, no guard marker and no page fault (the
 * pages its stacks touched are still there). Policy:
 *   - Bound: bytes of stacks (guards are address space only, never
 *     resident): the larger of SYNCQ_PO_STACK_CACHE_BYTES and the whole
 *     pool of the system destroyed last (its live peak: a pool never
 *     shrinks while its system lives; one that spawned nothing leaves
 *     the bound as it was) half again (PO_CACHE_SLACK_DIV), at most
 *     SYNCQ_PO_STACK_CACHE_MAX_BYTES. A program that repeats a large
 *     system keeps all its stacks, also when its peak varies from run
 *     to run: skynet trees of 111,111 processes, one after another,
 *     peaked at 36,000 to 51,000 stacks; with the bound at the last
 *     peak alone a tree took 3,650 page faults and 7.6 chunks mapped
 *     afresh (guards installed) on average, 1,240 and 2.1 with the
 *     slack. Once a much
 *     smaller one is destroyed the bound falls back and the excess is
 *     unmapped, oldest chunks first.
 *   - Memory: a kept chunk stays as it is, guards installed and the
 *     pages its fibers touched resident (typically a stack's top page or
 *     two), so a reused stack costs no fault. Not MADV_FREE: the kernel
 *     could then take the pages back under pressure, but the advice
 *     walked every page at each destroy and each reuse set the pages'
 *     dirty bits again, about 12% more CPU in a repeated 111,111-process
 *     tree (po-skynet) for memory the next system touches anyway.
 *   - Release: kept chunks go when a later system takes them, when a
 *     smaller system's destroy lowers the bound, or at
 *     syncq_po_stack_cache_trim (all of them at once); kept chunks with
 *     mprotect'ed guards also when a pool of another geometry needs
 *     guards and the mapping budget is spent (their mappings are
 *     counted in it). */
enum { PO_CACHE_SLACK_DIV = 2 }; /* the bound: the last pool and 1/DIV of it more */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static po_stack_chunk *cache; /* newest first */
static size_t cache_bytes;    /* stacks' bytes in cache */
static size_t cache_limit = SYNCQ_PO_STACK_CACHE_BYTES;
static _Atomic(size_t) chunks_mapped; /* relaxed: a tally for po_stack_cache_stats */

static size_t chunk_bytes(const po_stack_chunk *c) { return c->stack_size * (size_t)c->count; }

/* A kept chunk of this geometry for a pool whose next chunk would have
 * `count` slots: the largest kept one of at most that many (of those,
 * the one with the most stacks carved, then the newest), so a pool grows
 * from the cache as it would by mapping (and a small system does not
 * take a large chunk, whose size would then set the bound), and a chunk
 * whose guards were made only in part is taken last (its other slots
 * would cost guards). NULL: none. */
static po_stack_chunk *cache_take(size_t stack_size, size_t guard_size, bool guarded, int count) {
  pthread_mutex_lock(&cache_lock);
  po_stack_chunk **best = NULL;
  for (po_stack_chunk **pp = &cache; *pp != NULL; pp = &(*pp)->next) {
    po_stack_chunk *c = *pp;
    if (c->stack_size != stack_size || c->guard_size != guard_size || c->guarded != guarded || c->slots > count)
      continue;
    if (best == NULL || c->slots > (*best)->slots || (c->slots == (*best)->slots && c->count > (*best)->count))
      best = pp;
    if (c->slots == count && c->count == c->slots) break;
  }
  po_stack_chunk *c = NULL;
  if (best != NULL) {
    c = *best;
    *best = c->next;
    cache_bytes -= chunk_bytes(c);
  }
  pthread_mutex_unlock(&cache_lock);
  return c;
}

static void chunk_unmap(po_stack_chunk *c) {
#if PO_ASAN
  /* AddressSanitizer's shadow outlives the mapping: a fiber's frames left
   * their redzones poisoned there, and whatever is mapped at these
   * addresses next (a process table) would read as a stack overflow. */
  ASAN_UNPOISON_MEMORY_REGION(c->base, c->len);
#endif
  munmap(c->base, c->len);
  if (c->split) budget_give(c->count, false);
  free(c);
}

/* Keep a destroyed pool's chunks (`list`: the pool's peak, as a pool
 * takes a chunk only when its free list is empty) under the policy
 * above; unmap what the bound leaves out. */
static void cache_keep(po_stack_chunk *list) {
  if (list == NULL) return; /* a system that spawned nothing says nothing of the peak */
  po_stack_chunk *last = NULL;
  size_t pool_bytes = 0;
  for (po_stack_chunk *c = list; c != NULL; c = c->next) {
    pool_bytes += chunk_bytes(c);
    last = c;
  }
  size_t want = pool_bytes + pool_bytes / PO_CACHE_SLACK_DIV;
  size_t limit = want > SYNCQ_PO_STACK_CACHE_BYTES ? want : SYNCQ_PO_STACK_CACHE_BYTES;
  if (limit > SYNCQ_PO_STACK_CACHE_MAX_BYTES) limit = SYNCQ_PO_STACK_CACHE_MAX_BYTES;
  pthread_mutex_lock(&cache_lock);
  cache_limit = limit;
  last->next = cache;
  cache = list;
  cache_bytes += pool_bytes;
  /* The newest that fit stay; from the first that does not, all go. */
  po_stack_chunk **pp = &cache, *drop = NULL;
  size_t kept = 0;
  while (*pp != NULL && kept + chunk_bytes(*pp) <= limit) {
    kept += chunk_bytes(*pp);
    pp = &(*pp)->next;
  }
  drop = *pp;
  *pp = NULL;
  cache_bytes = kept;
  pthread_mutex_unlock(&cache_lock);
  while (drop != NULL) {
    po_stack_chunk *next = drop->next;
    chunk_unmap(drop);
    drop = next;
  }
}

/* Unmap every kept chunk whose guards split its mapping (mprotect'ed):
 * a pool that needs guards and finds the budget spent gets it back from
 * stacks nobody uses. Returns how many were unmapped. */
static int cache_drop_split(void) {
  pthread_mutex_lock(&cache_lock);
  po_stack_chunk **pp = &cache, *drop = NULL;
  while (*pp != NULL) {
    po_stack_chunk *c = *pp;
    if (c->split) {
      *pp = c->next;
      cache_bytes -= chunk_bytes(c);
      c->next = drop;
      drop = c;
    } else {
      pp = &c->next;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  int n = 0;
  while (drop != NULL) {
    po_stack_chunk *next = drop->next;
    chunk_unmap(drop);
    drop = next;
    n++;
  }
  return n;
}

size_t syncq_po_stack_cache_trim(void) {
  pthread_mutex_lock(&cache_lock);
  po_stack_chunk *drop = cache;
  size_t bytes = cache_bytes;
  cache = NULL;
  cache_bytes = 0;
  pthread_mutex_unlock(&cache_lock);
  while (drop != NULL) {
    po_stack_chunk *next = drop->next;
    chunk_unmap(drop);
    drop = next;
  }
  return bytes;
}

void po_stack_cache_stats(size_t *bytes, size_t *limit, size_t *mapped) {
  pthread_mutex_lock(&cache_lock);
  if (bytes != NULL) *bytes = cache_bytes;
  if (limit != NULL) *limit = cache_limit;
  pthread_mutex_unlock(&cache_lock);
  if (mapped != NULL) *mapped = atomic_load_explicit(&chunks_mapped, memory_order_relaxed); /* a tally */
}

static size_t page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096u;
}

static size_t round_pages(size_t n) {
  size_t p = page_size();
  return (n + p - 1) / p * p;
}

int po_stack_pool_init(po_stack_pool *pool, size_t stack_size, size_t guard_size) {
  memset(pool, 0, sizeof *pool);
  pool->stack_size = round_pages(stack_size);
  pool->guard_size = round_pages(guard_size);
  pool->next_count = PO_CHUNK_MIN;
  int r = syncq_freelist_init(&pool->free);
  if (r != SYNCQ_OK) return r;
  if (pthread_mutex_init(&pool->grow, NULL) != 0) return SYNCQ_ESYS;
  return SYNCQ_OK;
}

void po_stack_pool_destroy(po_stack_pool *pool) {
  cache_keep(pool->chunks); /* every fiber of the pool has exited: its stacks are free */
  pool->chunks = NULL;
  pthread_mutex_destroy(&pool->grow);
}

/* Hand out a chunk's stacks from `from` on (those carved since): all but
 * the first to the pool's free list, the first in *out. */
static void hand_out(po_stack_pool *pool, po_stack_chunk *c, int from, po_stack **out) {
  for (int i = from + 1; i < c->count; i++) (void)syncq_freelist_push(&pool->free, &c->desc[i].fl);
  *out = &c->desc[from];
  pool->stacks += (uint32_t)(c->count - from);
}

/* A chunk joins the pool (the newest: the one whose next slots a batch
 * of guards may carve) and hands out its stacks. */
static void adopt(po_stack_pool *pool, po_stack_chunk *c, po_stack **out) {
  c->next = pool->chunks;
  pool->chunks = c;
  hand_out(pool, c, 0, out);
}

/* ---- guard markers ----
 * Linux 6.13 and later install guard regions as page-table markers
 * (madvise MADV_GUARD_INSTALL): a touch faults as PROT_NONE would, but the
 * mapping is not split, so guards cost none of vm.max_map_count; and
 * process_madvise installs many in one system call. Older kernels say
 * EINVAL and guards are mprotect'ed, within the budget.
 *
 * A marker chunk is mapped whole but its guards are made batch by batch
 * as the pool runs out of stacks, and only the slots of a batch become
 * stacks: a stack is never handed out before its guard is in place, and
 * guards are not made for stacks nobody takes. The kernel's cost is per
 * guard range, not per call: about 0.4 us of page-table walk and VMA
 * lookup per range plus 25 ns per guard page (measured with 1-, 4-, 16-
 * and 17-page guards, 1,024 to a call; a 64-guard call costs 4 us more
 * in all), so a chunk's guards made at once for a pool that used a
 * twentieth of them cost more than all the pool's spawns. A batch is the
 * larger of PO_ARM_MIN and a PO_ARM_DIV-th of the pool's stacks, within
 * the chunk: guards made ahead of use stay below that share, and a pool
 * of N stacks still makes O(log N + N / PO_CHUNK_MAX) calls.
 * SYNCQ_PO_GUARD=mprotect in the environment chooses the latter anyway (to test the budget and canaries where markers exist). */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
enum { GUARD_UNKNOWN = 0, GUARD_MARKERS, GUARD_MPROTECT };
enum { PO_ARM_MIN = PO_CHUNK_MIN, PO_ARM_DIV = 16 };
static _Atomic(int) guard_mode; /* relaxed: every thread computes the same answer */

/* Does the marker just installed at `guard` fault? qemu-user (7.2)
 * answers MADV_GUARD_INSTALL, as any advice it does not know, with
 * success and installs nothing: stacks would then have neither a guard
 * nor a canary. A system call that reads the page says: copying from a
 * marker fails with EFAULT (the kernel's copy faults as on PROT_NONE),
 * from plain memory it succeeds. Without a pipe nothing can be checked,
 * and the kernel's answer stands. */
static bool marker_faults(const char *guard) {
  int fds[2];
  if (pipe(fds) != 0) return true;
  ssize_t n = write(fds[1], guard, 1);
  int err = errno;
  close(fds[0]);
  close(fds[1]);
  return n < 0 && err == EFAULT;
}

/* Markers, unless the kernel said no or the environment asks for mprotect
 * (read at each chunk: a forked child may set it before its first). */
static bool use_markers(void) {
  const char *e = getenv("SYNCQ_PO_GUARD");
  if (e != NULL && strcmp(e, "mprotect") == 0) return false;
  return atomic_load_explicit(&guard_mode, memory_order_relaxed) != GUARD_MPROTECT; /* see guard_mode */
}

bool po_stack_guards_are_markers(void) {
  /* relaxed: see guard_mode */
  return use_markers() && atomic_load_explicit(&guard_mode, memory_order_relaxed) == GUARD_MARKERS;
}

/* Install the guards of slots [from, to) of a chunk of slots of `slot`
 * bytes (guard at each slot's start) as markers: true, or false with
 * none left half-made mattering (those slots never become stacks: the
 * caller unmaps a fresh chunk and falls back to mprotect, or carves no
 * more of a chunk in use). */
static bool install_markers(char *base, size_t slot, size_t guard, int from, int to) {
  int done = from;
  /* relaxed: see guard_mode */
  if (atomic_load_explicit(&guard_mode, memory_order_relaxed) != GUARD_MARKERS) {
    char *first = base + (size_t)from * slot;
    if (madvise(first, guard, MADV_GUARD_INSTALL) != 0) { /* the first: does the kernel have them? */
      atomic_store_explicit(&guard_mode, GUARD_MPROTECT, memory_order_relaxed); /* see guard_mode */
      return false;
    }
    if (!marker_faults(first)) {
      /* said yes, did nothing (qemu-user): mprotect'ed guards from now on */
      atomic_store_explicit(&guard_mode, GUARD_MPROTECT, memory_order_relaxed); /* see guard_mode */
      return false;
    }
    atomic_store_explicit(&guard_mode, GUARD_MARKERS, memory_order_relaxed); /* see guard_mode */
    done++;
  }
#if defined(SYS_pidfd_open) && defined(SYS_process_madvise)
  /* The rest in one call, through a pidfd of our own opened for it (a
   * kept one would name the parent in a forked child). The vector on the
   * heap: a fiber that spawns has a small stack. */
  int n_iov = to - done;
  struct iovec *iov = n_iov > 1 ? malloc((size_t)n_iov * sizeof *iov) : NULL;
  long fd = iov != NULL ? syscall(SYS_pidfd_open, (long)getpid(), 0L) : -1;
  if (fd >= 0) {
    for (int i = 0; i < n_iov; i++) {
      iov[i].iov_base = base + (size_t)(done + i) * slot;
      iov[i].iov_len = guard;
    }
    long n = syscall(SYS_process_madvise, fd, iov, (size_t)n_iov, (long)MADV_GUARD_INSTALL, 0L);
    close((int)fd);
    /* n bytes advised, in iovec order: whole guards done */
    if (n > 0) done += (int)((size_t)n / guard);
  }
  free(iov);
#endif
  for (int i = done; i < to; i++) /* what the one call did not do */
    if (madvise(base + (size_t)i * slot, guard, MADV_GUARD_INSTALL) != 0) return false;
  return true;
}

/* Make the top page of each stack of slots [from, to) resident, in one
 * call (MADV_POPULATE_WRITE through process_madvise, as the guards), just
 * after their guards: a fiber's first frame goes there, and a fault each
 * cost more in all (a cold system's 1,000 spawns, 2-core VM: 3.16-3.35
 * us of CPU per spawn against 3.31-3.44 with the faults, 3.01-3.12
 * against 3.25-3.34 at 6,000). Only the top page: a stack's other pages
 * stay untouched until its fiber needs them, and a batch's stacks are
 * handed out soon (a batch is the larger of PO_ARM_MIN stacks and a
 * PO_ARM_DIV-th of the pool). Best effort: where the kernel says no, the
 * first frames fault as before. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static void populate_tops(char *base, size_t slot, int from, int to) {
#if defined(SYS_pidfd_open) && defined(SYS_process_madvise)
  size_t page = page_size();
  int n = to - from;
  struct iovec *iov = n > 0 ? malloc((size_t)n * sizeof *iov) : NULL; /* on the heap: see install_markers */
  long fd = iov != NULL ? syscall(SYS_pidfd_open, (long)getpid(), 0L) : -1;
  if (fd >= 0) {
    for (int i = 0; i < n; i++) {
      iov[i].iov_base = base + (size_t)(from + i + 1) * slot - page; /* the slot's last page: its stack's top */
      iov[i].iov_len = page;
    }
    (void)syscall(SYS_process_madvise, fd, iov, (size_t)n, (long)MADV_POPULATE_WRITE, 0L);
    close((int)fd);
  }
  free(iov);
#else
  (void)base, (void)slot, (void)from, (void)to;
#endif
}

/* Slots in the pool's next batch of guards in chunk c (see "guard
 * markers"): at least PO_ARM_MIN and a PO_ARM_DIV-th of the pool's
 * stacks, at most what c has left. */
static int batch_of(const po_stack_pool *pool, const po_stack_chunk *c) {
  uint32_t n = pool->stacks / PO_ARM_DIV;
  if (n < PO_ARM_MIN) n = PO_ARM_MIN;
  uint32_t left = (uint32_t)(c->slots - c->count);
  return (int)(n < left ? n : left);
}

/* Carve the chunk's stacks from slot `from` to its count: [guard][stack]
 * slots, or, unguarded, plain stacks with a canary at each one's lowest
 * word. False: an mprotect or a marker failed (the mapping count ran out
 * under us). `markers`: the guards are installed as markers already. */
static bool carve(po_stack_pool *pool, po_stack_chunk *c, int from, bool guarded, bool markers) {
  size_t guard = guarded ? pool->guard_size : 0;
  size_t slot = guard + pool->stack_size;
  for (int i = from; i < c->count; i++) {
    char *s = c->base + (size_t)i * slot;
    if (guard > 0 && !markers && mprotect(s, guard, PROT_NONE) != 0) return false;
    c->desc[i].guard = guard > 0 ? s : NULL;
    c->desc[i].guard_size = guard;
    c->desc[i].lo = s + guard;
    c->desc[i].size = pool->stack_size;
    atomic_init(&c->desc[i].fl.next, 0);
  }
  c->guarded = guard > 0;
  c->split = guard > 0 && !markers;
  c->guard_size = pool->guard_size; /* the pool's geometry, guarded or not */
  c->len = slot * (size_t)c->slots;
  return true;
}

static void *map_chunk(size_t len) {
  void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return NULL;
  atomic_fetch_add_explicit(&chunks_mapped, 1, memory_order_relaxed); /* a tally, read by the stats */
  return base;
}

/* The next chunk's size: PO_CHUNK_MIN, then twice the last, up to
 * PO_CHUNK_MAX (the caller holds pool->grow). */
static int next_count(po_stack_pool *pool) {
  int n = (int)pool->next_count;
  pool->next_count = n * 2 <= PO_CHUNK_MAX ? (uint32_t)n * 2u : (uint32_t)PO_CHUNK_MAX;
  return n;
}

static int grow(po_stack_pool *pool, po_stack **out, const char **why) {
  /* The next batch of the newest chunk's slots, while it has some (only
   * a marker chunk is carved in part): no mapping. */
  po_stack_chunk *c = pool->chunks;
  if (c != NULL && c->count < c->slots) {
    int from = c->count, n = batch_of(pool, c);
    if (install_markers(c->base, pool->guard_size + pool->stack_size, pool->guard_size, from, from + n)) {
      populate_tops(c->base, pool->guard_size + pool->stack_size, from, from + n);
      c->count = from + n;
      (void)carve(pool, c, from, true, true);
      hand_out(pool, c, from, out);
      return SYNCQ_OK;
    }
    c->slots = c->count; /* no more of it (its mapping stays as long): a new chunk below */
  }
  /* A kept chunk first, guarded if the pool has guards: its mappings are
   * counted already. */
  c = cache_take(pool->stack_size, pool->guard_size, pool->guard_size > 0, (int)pool->next_count);
  if (c != NULL) {
    (void)next_count(pool); /* as if mapped */
    adopt(pool, c, out);
    return SYNCQ_OK;
  }
  if (pool->guard_size > 0 && use_markers()) {
    /* markers (or the first try of them): no budget needed */
    size_t slot = pool->guard_size + pool->stack_size;
    int count = (int)pool->next_count;
    c = chunk_new(count);
    char *base = c != NULL ? map_chunk(slot * (size_t)count) : NULL;
    if (c != NULL && base != NULL) {
      c->base = base;
      c->stack_size = pool->stack_size;
      c->count = 0;
      int n = batch_of(pool, c); /* the first batch of its slots */
      if (install_markers(base, slot, pool->guard_size, 0, n)) {
        populate_tops(base, slot, 0, n);
        c->count = n;
        (void)next_count(pool);
        (void)carve(pool, c, 0, true, true);
        adopt(pool, c, out);
        return SYNCQ_OK;
      }
      munmap(base, slot * (size_t)count); /* markers half-installed or none: start clean */
    }
    free(c);
    c = NULL;
  }
  /* mprotect'ed guards come PO_CHUNK_MIN at a time: the budget's steps */
  bool guarded = pool->guard_size > 0 && budget_take(PO_CHUNK_MIN);
  if (!guarded && pool->guard_size > 0 && cache_drop_split() > 0) /* kept guards of another geometry */
    guarded = budget_take(PO_CHUNK_MIN);
  if (!guarded && pool->guard_size > 0 &&
      (c = cache_take(pool->stack_size, pool->guard_size, false, (int)pool->next_count)) != NULL) {
    (void)next_count(pool); /* as if mapped */
    adopt(pool, c, out);    /* past the budget: a kept chunk with canaries */
    return SYNCQ_OK;
  }
  c = chunk_new(guarded ? PO_CHUNK_MIN : (int)pool->next_count);
  if (c == NULL) {
    if (guarded) budget_give(PO_CHUNK_MIN, false);
    *why = "memory";
    return SYNCQ_ENOMEM;
  }
  c->stack_size = pool->stack_size;
  if (guarded) {
    size_t len = (pool->guard_size + pool->stack_size) * PO_CHUNK_MIN;
    c->base = map_chunk(len);
    if (c->base != NULL && !carve(pool, c, 0, true, false)) {
      /* The kernel's count ran out before ours (another part of the
       * program maps too): this chunk and the next go without guards. */
      munmap(c->base, len);
      c->base = NULL;
      budget_give(PO_CHUNK_MIN, true);
      guarded = false;
    } else if (c->base == NULL) {
      budget_give(PO_CHUNK_MIN, false);
      guarded = false;
    }
  }
  if (!guarded) {
    if (c->count != (int)pool->next_count) { /* a guarded try fell through: the canary chunk's size */
      free(c);
      c = chunk_new((int)pool->next_count);
      if (c == NULL) {
        *why = "memory";
        return SYNCQ_ENOMEM;
      }
      c->stack_size = pool->stack_size;
    }
    c->base = map_chunk(pool->stack_size * (size_t)c->count);
    if (c->base == NULL) {
      free(c);
      *why = po_limit_of(ENOMEM);
      return SYNCQ_ELIMIT;
    }
    (void)next_count(pool);
    (void)carve(pool, c, 0, false, false);
  }
  adopt(pool, c, out);
  return SYNCQ_OK;
}

int po_stack_get(po_stack_pool *pool, po_stack **out, const char **why) {
  syncq_fl_link *l;
  if (syncq_freelist_pop(&pool->free, &l) == SYNCQ_OK) {
    *out = SYNCQ_FL_CONTAINER(l, po_stack, fl);
    return SYNCQ_OK;
  }
  pthread_mutex_lock(&pool->grow);
  int r;
  if (syncq_freelist_pop(&pool->free, &l) == SYNCQ_OK) { /* another grower got there first */
    *out = SYNCQ_FL_CONTAINER(l, po_stack, fl);
    r = SYNCQ_OK;
  } else {
    r = grow(pool, out, why);
  }
  pthread_mutex_unlock(&pool->grow);
  return r;
}

void po_stack_put(po_stack_pool *pool, po_stack *s) { (void)syncq_freelist_push(&pool->free, &s->fl); }

/* ---- canaries of unguarded stacks ---- */

static void put_str(const char *s);
static void put_num(unsigned long long v, unsigned base);

static uint64_t canary_of(const po_stack *s) {
  /* The address mixed in: a stack's canary copied into another's place
   * (an overrun that copies a stack) does not pass there. */
  return 0x5ca1ab1e0dd5eed5ull ^ (uint64_t)(uintptr_t)s->lo;
}

uint64_t *po_stack_canary_set(po_stack *s) {
  if (s->guard != NULL) return NULL;
  uint64_t *w = (uint64_t *)(void *)s->lo;
  *w = canary_of(s);
  return w;
}

bool po_stack_canary_ok(const po_stack *s, const uint64_t *w) { return *w == canary_of(s); }

void po_stack_canary_report(unsigned long long pid, const po_stack *s) {
  put_str("syncq po: process ");
  put_num(pid, 10);
  put_str(" overran its fiber stack (");
  put_num(s->size, 10);
  put_str(" bytes, no guard region: the mapping budget of vm.max_map_count was spent; its canary at 0x");
  put_num((unsigned long long)(uintptr_t)s->lo, 16);
  put_str(
    " was overwritten, and the memory below it may be another fiber's): the program stops here."
    " Give the system a larger stack_size.\n");
}

/* ---- the overflow report ---- */

static struct sigaction prev_segv, prev_bus;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;

static void put_str(const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static void put_num(unsigned long long v, unsigned base) {
  char buf[32];
  int i = (int)sizeof buf;
  buf[--i] = '\0';
  do {
    buf[--i] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v != 0 && i > 0);
  put_str(buf + i);
}

static void chain(const struct sigaction *prev, int sig, siginfo_t *si, void *uc) {
  if ((prev->sa_flags & SA_SIGINFO) && prev->sa_sigaction != NULL) {
    prev->sa_sigaction(sig, si, uc);
  } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN && prev->sa_handler != NULL) {
    prev->sa_handler(sig);
  } else {
    /* Default action: restore it and return; the faulting instruction
     * runs again and the fault now kills the program as usual. A signal
     * sent by kill() (si_code <= 0) is not raised again by returning:
     * raise it. */
    signal(sig, SIG_DFL);
    if (si != NULL && si->si_code <= 0) raise(sig);
  }
}

/* Set while this thread is inside on_fault: a handler we chained to that
 * chains back to us (it replaced us and kept us as its previous handler,
 * then a later fiber system put us first again) must not loop. */
static _Thread_local int in_fault;

static void on_fault(int sig, siginfo_t *si, void *uc) {
  if (in_fault) {
    signal(sig, SIG_DFL);
    return;
  }
  in_fault = 1;
  po_fiber *f = po_fiber_current();
  const char *addr = si != NULL ? (const char *)si->si_addr : NULL;
  if (f != NULL && f->stack != NULL && f->stack->guard != NULL && addr >= f->stack->guard && addr < f->stack->lo) {
    struct syncq_po_proc *p = SYNCQ_FL_CONTAINER(f, struct syncq_po_proc, fiber);
    put_str("syncq po: process ");
    put_num((unsigned long long)p->pid, 10);
    put_str(" overflowed its fiber stack (");
    put_num(f->stack->size, 10);
    put_str(" bytes; fault at 0x");
    put_num((unsigned long long)(uintptr_t)addr, 16);
    put_str(" in its guard page): the program stops here. Give the system a larger stack_size.\n");
    signal(sig, SIG_DFL);
    in_fault = 0;
    return;
  }
  chain(sig == SIGBUS ? &prev_bus : &prev_segv, sig, si, uc);
  in_fault = 0;
}

/* Install on_fault for sig unless it is there already, keeping what was
 * there to chain to. Checked at every fiber system's creation, so a
 * program (or test framework) that installed its own handler since still
 * gets overflows reported (its handler then runs for other faults). */
static int install(int sig, struct sigaction *prev) {
  struct sigaction cur;
  if (sigaction(sig, NULL, &cur) != 0) return SYNCQ_ESYS;
  if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) return SYNCQ_OK;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  return sigaction(sig, &sa, prev) == 0 ? SYNCQ_OK : SYNCQ_ESYS;
}

int po_overflow_handler_install(void) {
  pthread_mutex_lock(&handler_lock);
  int r = install(SIGSEGV, &prev_segv);
  if (r == SYNCQ_OK) r = install(SIGBUS, &prev_bus);
  pthread_mutex_unlock(&handler_lock);
  return r;
}

int po_altstack_enter(void **mem) {
  long want = sysconf(_SC_SIGSTKSZ);
  size_t size = want > PO_ALTSTACK_MIN ? (size_t)want : (size_t)PO_ALTSTACK_MIN;
  void *m = malloc(size);
  if (m == NULL) return SYNCQ_ENOMEM;
  stack_t ss = {.ss_sp = m, .ss_size = size, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) {
    free(m);
    return SYNCQ_ESYS;
  }
  *mem = m;
  return SYNCQ_OK;
}

void po_altstack_leave(void *mem) {
  if (mem == NULL) return;
  stack_t ss = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
  (void)sigaltstack(&ss, NULL);
  free(mem);
}

#else /* !SYNCQ_HAVE_FIBERS */

size_t syncq_po_stack_cache_trim(void) { return 0; } /* no fiber stacks are ever kept */

#endif /* SYNCQ_HAVE_FIBERS */
