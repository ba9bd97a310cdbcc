/*
 * fiber_stack.c — the fiber backend's stacks: pooled, small, each with a
 * guard page below it, and a fault handler that names the process whose
 * stack ran into its guard.
 *
 * Contract
 *   Source:      002 §7 (an Erlang process needs a few hundred bytes; user-
 *                level threads as in Capriccio keep stacks small); the
 *                layout is the usual one of M:N runtimes: stacks carved
 *                from large mappings, a PROT_NONE guard below each.
 *   Progress:    get/put are lock-free on the pool's free list (counted
 *                pointers, syncq/reclaim.h); growing the pool maps a new
 *                chunk under a mutex (not a hot path: stacks are reused).
 *   Memory:      chunks of PO_STACKS_PER_CHUNK stacks, mapped with
 *                MAP_NORESERVE: only the pages a fiber touches become
 *                resident. Stacks return to the pool when their fiber
 *                exits; a destroyed system's chunks are kept for the next
 *                system of the same geometry, up to
 *                SYNCQ_PO_STACK_CACHE_BYTES of address space in all.
 *   Limits:      each guard page splits the mapping, so a stack costs two
 *                of the kernel's vm.max_map_count mappings (65,530 by
 *                default: about 32,000 fibers with guards). Past it,
 *                mprotect fails with ENOMEM and the spawn is refused with
 *                "vm.max_map_count". Without guards (SYNCQ_PO_NO_GUARD) a
 *                chunk is one mapping and the limit is memory.
 *                A frame larger than the guard can skip it (stack clash):
 *                the guard must be larger than the largest frame.
 *   Signal-safe: the fault handler uses only write(2) and sigaction.
 *   Process-shared: no.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fiber_internal.h"
#include "po_internal.h"

#if SYNCQ_HAVE_FIBERS

enum { PO_STACKS_PER_CHUNK = 64 };
/* At least this much alternate signal stack for the overflow handler. */
enum { PO_ALTSTACK_MIN = 64 * 1024 };

struct po_stack_chunk {
  po_stack_chunk *next;
  char *base;
  size_t len;
  size_t stack_size, guard_size; /* its geometry, to be reused by a like pool */
  po_stack desc[PO_STACKS_PER_CHUNK];
};

/* Chunks of destroyed systems, kept for the next system with the same
 * geometry (glibc keeps thread stacks the same way): a new system's
 * spawns then cost no mmap and no mprotect per guard page. Bounded by
 * SYNCQ_PO_STACK_CACHE_BYTES of address space (MAP_NORESERVE: only the
 * pages fibers touched are resident); past it chunks are unmapped. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static po_stack_chunk *cache;
static size_t cache_bytes;

static po_stack_chunk *cache_take(size_t stack_size, size_t guard_size) {
  pthread_mutex_lock(&cache_lock);
  po_stack_chunk **pp = &cache, *c;
  while ((c = *pp) != NULL && (c->stack_size != stack_size || c->guard_size != guard_size)) pp = &c->next;
  if (c != NULL) {
    *pp = c->next;
    cache_bytes -= c->len;
  }
  pthread_mutex_unlock(&cache_lock);
  return c;
}

/* Keep c for a later system, or unmap it when the cache is full. */
static void cache_put(po_stack_chunk *c) {
  pthread_mutex_lock(&cache_lock);
  bool keep = cache_bytes + c->len <= SYNCQ_PO_STACK_CACHE_BYTES;
  if (keep) {
    c->next = cache;
    cache = c;
    cache_bytes += c->len;
  }
  pthread_mutex_unlock(&cache_lock);
  if (!keep) {
    munmap(c->base, c->len);
    free(c);
  }
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
  int r = syncq_freelist_init(&pool->free);
  if (r != SYNCQ_OK) return r;
  if (pthread_mutex_init(&pool->grow, NULL) != 0) return SYNCQ_ESYS;
  return SYNCQ_OK;
}

void po_stack_pool_destroy(po_stack_pool *pool) {
  po_stack_chunk *c = pool->chunks;
  while (c != NULL) {
    po_stack_chunk *next = c->next;
    cache_put(c); /* every fiber of the pool has exited: its stacks are free */
    c = next;
  }
  pool->chunks = NULL;
  pthread_mutex_destroy(&pool->grow);
}

/* Map a chunk and put all its stacks but one on the free list. */
/* Put a chunk's stacks but the first on the pool's free list; the first
 * in *out. */
static void adopt(po_stack_pool *pool, po_stack_chunk *c, po_stack **out) {
  c->next = pool->chunks;
  pool->chunks = c;
  for (int i = 1; i < PO_STACKS_PER_CHUNK; i++) (void)syncq_freelist_push(&pool->free, &c->desc[i].fl);
  *out = &c->desc[0];
}

static int grow(po_stack_pool *pool, po_stack **out, const char **why) {
  size_t slot = pool->guard_size + pool->stack_size;
  po_stack_chunk *c = cache_take(pool->stack_size, pool->guard_size);
  if (c != NULL) {
    adopt(pool, c, out);
    return SYNCQ_OK;
  }
  c = calloc(1, sizeof *c);
  if (c == NULL) {
    *why = "memory";
    return SYNCQ_ENOMEM;
  }
  c->len = slot * PO_STACKS_PER_CHUNK;
  void *base = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    free(c);
    *why = po_limit_of(ENOMEM);
    return SYNCQ_ELIMIT;
  }
  c->base = base;
  c->stack_size = pool->stack_size;
  c->guard_size = pool->guard_size;
  for (int i = 0; i < PO_STACKS_PER_CHUNK; i++) {
    char *s = c->base + (size_t)i * slot;
    if (pool->guard_size > 0 && mprotect(s, pool->guard_size, PROT_NONE) != 0) {
      /* Name the limit before unmapping: the mapping count is at its
       * peak now (each guard splits the chunk). */
      *why = po_limit_of(errno == ENOMEM ? ENOMEM : errno);
      munmap(c->base, c->len);
      free(c);
      return SYNCQ_ELIMIT;
    }
    c->desc[i].guard = pool->guard_size > 0 ? s : NULL;
    c->desc[i].guard_size = pool->guard_size;
    c->desc[i].lo = s + pool->guard_size;
    c->desc[i].size = pool->stack_size;
    atomic_init(&c->desc[i].fl.next, 0);
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
     * runs again and the fault now kills the program as usual. */
    signal(sig, SIG_DFL);
  }
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
  po_fiber *f = po_fiber_current();
  const char *addr = si != NULL ? (const char *)si->si_addr : NULL;
  if (f != NULL && f->stack != NULL && f->stack->guard != NULL && addr >= f->stack->guard &&
      addr < f->stack->lo) {
    struct syncq_po_proc *p = SYNCQ_FL_CONTAINER(f, struct syncq_po_proc, fiber);
    put_str("syncq po: process ");
    put_num((unsigned long long)p->pid, 10);
    put_str(" overflowed its fiber stack (");
    put_num(f->stack->size, 10);
    put_str(" bytes; fault at 0x");
    put_num((unsigned long long)(uintptr_t)addr, 16);
    put_str(" in its guard page): the program stops here. Give the system a larger stack_size.\n");
    signal(sig, SIG_DFL);
    return;
  }
  chain(sig == SIGBUS ? &prev_bus : &prev_segv, sig, si, uc);
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

#endif /* SYNCQ_HAVE_FIBERS */
