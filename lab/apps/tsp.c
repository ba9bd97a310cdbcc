/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tsp.c — branch-and-bound travelling salesman over shared structures.
 *
 * Contract
 *   Source:   Michael & Scott 1998 (paper 001) §4.6, Figure 7: "the
 *             processes cooperate to find the shortest tour in a 17-city
 *             graph. The processes use the priority queue heap to share
 *             information about the most promising tours, and the stack to
 *             keep track of the tours that are yet to be computed", with
 *             shared counters; every structure is a registry entry (lock,
 *             preemption-safe lock, non-blocking, or 001's hybrid).
 *   Scheme:   a partial tour starts at city 0; its lower bound is its
 *             length plus a minimum spanning tree of its last city, the
 *             unvisited cities and city 0 (tsp_bound). Tours of fewer than heap_depth cities
 *             are promising: they go to the heap, keyed by bound, so the
 *             team explores the top of the tree best-first. Deeper tours go
 *             to the stack (depth-first: bounded memory, complete tours
 *             soon). A thread pops the stack, else takes the heap's minimum,
 *             drops the tour if its bound is no better than the best tour,
 *             else expands it: each child within the bound is pushed, and a
 *             child with local_cities or fewer cities left (or refused by a
 *             full structure) is finished by depth-first search on the spot.
 *   Counters: "live" counts tours in the structures or being expanded
 *             (children are added before their parent is retired, so it
 *             reaches 0 only when the search is over: the team stops then);
 *             "expanded" counts expansions (the work, checked against the
 *             threads' own counts).
 *   Bound:    the best length is a C11 atomic updated by a CAS loop to its
 *             minimum: the counter family has no minimum operation, and a
 *             fetch-and-add emulation would expose bounds no tour has.
 *             Each thread records the path of its own best tour.
 *   Atomics:  per expansion: one take (pop or delete_min), one push or
 *             insert per child, two counter fetch-and-adds.
 *   Memory:   tour records from per-thread free lists fed by blocks of
 *             TSP_CHUNK records (a record freed by another thread than
 *             the one that made it joins the freer's list); all blocks are
 *             freed by app_tsp_destroy.
 *   Validation: app_tsp_check (tsp.h) against Held-Karp's optimum.
 *   Progress: that of the structures; idle threads yield until the live
 *             count is 0, so the search as a whole is blocking. They wait
 *             under the lab's watch (lab.h, lab_queue_watch; the
 *             producers are the consumers themselves, as in pool.h): a
 *             heap or stack that lost a tour stops them about 1.1 s after
 *             the last thread fell idle, and the check names both
 *             structures and the tours lost.
 *   Signal safety: none (allocates); process-shared: no (pointers).
 *   Limits:   APP_TSP_MAX_CITIES cities, APP_TSP_MAX_THREADS threads.
 */
#include "tsp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncq/counter.h"
#include "syncq/platform.h"
#include "syncq/pqueue.h"
#include "syncq/stack.h"

#define TSP_CHUNK 256     /* tour records per allocation block */
#define TSP_SQUARE 1000.0 /* cities lie in a TSP_SQUARE x TSP_SQUARE square */
#define TSP_HK_INF UINT32_MAX

struct tsp_tour {
  tsp_tour *next_free;
  uint32_t visited; /* bit c: city c is on the tour */
  uint32_t len;     /* length so far (open path from city 0) */
  uint32_t bound;
  uint8_t depth; /* cities on the tour */
  uint8_t path[APP_TSP_MAX_CITIES];
};

static uint32_t tsp_bound(const app_tsp_instance *in, uint32_t visited, uint32_t cur, uint32_t len);

struct tsp_chunk {
  tsp_chunk *next;
  tsp_tour t[TSP_CHUNK];
};

static inline uint64_t tsp_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int app_tsp_instance_make(app_tsp_instance *in, int n, uint64_t seed) {
  if (in == NULL || n < 3 || n > APP_TSP_MAX_CITIES) return SYNCQ_EINVAL;
  memset(in, 0, sizeof *in);
  double x[APP_TSP_MAX_CITIES], y[APP_TSP_MAX_CITIES];
  uint64_t r = seed;
  for (int i = 0; i < n; i++) {
    r = tsp_mix(r);
    x[i] = (double)(r >> 11) / (double)(1ull << 53) * TSP_SQUARE;
    r = tsp_mix(r);
    y[i] = (double)(r >> 11) / (double)(1ull << 53) * TSP_SQUARE;
  }
  in->n = n;
  for (int i = 0; i < n; i++) {
    in->minout[i] = UINT32_MAX;
    for (int j = 0; j < n; j++) {
      in->d[i][j] = i == j ? 0 : (uint32_t)lround(hypot(x[i] - x[j], y[i] - y[j]));
      if (i != j && in->d[i][j] < in->minout[i]) in->minout[i] = in->d[i][j];
    }
  }
  return SYNCQ_OK;
}

int app_tsp_held_karp(const app_tsp_instance *in, uint64_t *optimum) {
  if (in == NULL || optimum == NULL || in->n < 3 || in->n > APP_TSP_MAX_CITIES) return SYNCQ_EINVAL;
  int m = in->n - 1; /* cities 1..n-1, bit j-1 for city j */
  size_t sets = (size_t)1 << m;
  uint32_t *dp = malloc(sets * (size_t)m * sizeof *dp); /* dp[S][j]: 0 -> S -> j, j in S */
  if (dp == NULL) return SYNCQ_ENOMEM;
  for (size_t i = 0; i < sets * (size_t)m; i++) dp[i] = TSP_HK_INF;
  for (int j = 0; j < m; j++) dp[((size_t)1 << j) * (size_t)m + (size_t)j] = in->d[0][j + 1];
  for (size_t S = 1; S < sets; S++) {
    for (int j = 0; j < m; j++) {
      uint32_t v = dp[S * (size_t)m + (size_t)j];
      if (!(S >> j & 1) || v == TSP_HK_INF) continue;
      for (int k = 0; k < m; k++) {
        if (S >> k & 1) continue;
        size_t T = S | (size_t)1 << k;
        uint32_t w = v + in->d[j + 1][k + 1];
        if (w < dp[T * (size_t)m + (size_t)k]) dp[T * (size_t)m + (size_t)k] = w;
      }
    }
  }
  uint64_t best = UINT64_MAX;
  for (int j = 0; j < m; j++) {
    uint64_t w = (uint64_t)dp[(sets - 1) * (size_t)m + (size_t)j] + in->d[j + 1][0];
    if (w < best) best = w;
  }
  free(dp);
  *optimum = best;
  return SYNCQ_OK;
}

/* ---- the structures, through their ops tables ---- */
static void *tsp_make(size_t size, size_t align) { return syncq_alloc_aligned(size, align); }

int app_tsp_init(app_tsp *s, const app_tsp_instance *in, const app_tsp_config *cfg, unsigned threads) {
  if (s == NULL || in == NULL || cfg == NULL || cfg->pq == NULL || cfg->stack == NULL || cfg->counter == NULL ||
      cfg->pq->family != SYNCQ_FAMILY_PQUEUE || cfg->stack->family != SYNCQ_FAMILY_STACK ||
      cfg->counter->family != SYNCQ_FAMILY_COUNTER || threads == 0 || threads > APP_TSP_MAX_THREADS || in->n < 3 ||
      in->n > APP_TSP_MAX_CITIES)
    return SYNCQ_EINVAL;
  memset(s, 0, sizeof *s);
  s->in = in;
  s->cfg = *cfg;
  s->threads = threads;
  s->heap_depth = APP_TSP_HEAP_DEPTH;
  s->local_cities = APP_TSP_LOCAL_CITIES;
  const syncq_pqueue_ops *pq = cfg->pq->ops;
  const syncq_stack_ops *st = cfg->stack->ops;
  const syncq_counter_ops *co = cfg->counter->ops;
  int r = SYNCQ_OK;
  s->pq = tsp_make(pq->size, pq->align);
  s->stack = tsp_make(st->size, st->align);
  s->live = tsp_make(co->size, co->align);
  s->expanded = tsp_make(co->size, co->align);
  bool pq_ok = false, st_ok = false, live_ok = false, exp_ok = false;
  if (s->pq == NULL || s->stack == NULL || s->live == NULL || s->expanded == NULL) r = SYNCQ_ENOMEM;
  if (r == SYNCQ_OK) {
    syncq_pqueue_config pc = {APP_TSP_PQ_CAPACITY, threads, NULL};
    r = pq->init(s->pq, &pc);
    pq_ok = r == SYNCQ_OK;
  }
  if (r == SYNCQ_OK) {
    syncq_stack_config sc = {APP_TSP_STACK_CAPACITY, threads, NULL};
    r = st->init(s->stack, &sc);
    st_ok = r == SYNCQ_OK;
  }
  if (r == SYNCQ_OK) live_ok = (r = co->init(s->live, 0)) == SYNCQ_OK;
  if (r == SYNCQ_OK) exp_ok = (r = co->init(s->expanded, 0)) == SYNCQ_OK;
  if (r != SYNCQ_OK) {
    if (pq_ok) pq->destroy(s->pq);
    if (st_ok) st->destroy(s->stack);
    if (live_ok) co->destroy(s->live);
    if (exp_ok) co->destroy(s->expanded);
    free(s->pq);
    free(s->stack);
    free(s->live);
    free(s->expanded);
    s->pq = s->stack = s->live = s->expanded = NULL;
    return r;
  }
  /* The first bound: the nearest-neighbour tour, plus one so that the
   * search itself always records a tour (it prunes on bound >= best). */
  uint32_t visited = 1, cur = 0, len = 0;
  for (int k = 1; k < in->n; k++) {
    uint32_t next = 0, dn = UINT32_MAX;
    for (int c = 1; c < in->n; c++)
      if (!(visited >> c & 1) && in->d[cur][c] < dn) dn = in->d[cur][next = (uint32_t)c];
    visited |= 1u << next;
    len += dn;
    cur = next;
  }
  atomic_init(&s->best, len + in->d[cur][0] + 1);
  atomic_init(&s->errors, 0);
  lab_queue_watch_init(&s->watch, (int)threads);
  for (unsigned t = 0; t < threads; t++) s->local[t].best_len = UINT32_MAX;
  /* the root: city 0 alone, in the heap, counted live */
  static const tsp_tour zero;
  tsp_tour *root = malloc(sizeof *root);
  if (root == NULL) {
    app_tsp_destroy(s);
    return SYNCQ_ENOMEM;
  }
  *root = zero;
  root->visited = 1;
  root->depth = 1;
  root->bound = tsp_bound(in, 1, 0, 0);
  /* the root is handed to thread 0's free list after use: make it a chunk of its own */
  tsp_chunk *ch = malloc(sizeof *ch);
  if (ch == NULL) {
    free(root);
    app_tsp_destroy(s);
    return SYNCQ_ENOMEM;
  }
  ch->next = NULL;
  ch->t[0] = *root;
  free(root);
  root = &ch->t[0];
  for (int i = 1; i < TSP_CHUNK; i++) {
    ch->t[i].next_free = s->local[0].free;
    s->local[0].free = &ch->t[i];
  }
  s->local[0].chunks = ch;
  if ((r = co->fetch_add(s->live, 1, NULL)) != SYNCQ_OK || (r = pq->insert(s->pq, root->bound, root)) != SYNCQ_OK) {
    app_tsp_destroy(s);
    return r == SYNCQ_OK ? SYNCQ_ENOMEM : r;
  }
  return SYNCQ_OK;
}

static tsp_tour *tsp_alloc(tsp_local *l) {
  if (l->free == NULL) {
    tsp_chunk *ch = malloc(sizeof *ch);
    if (ch == NULL) return NULL;
    ch->next = l->chunks;
    l->chunks = ch;
    for (int i = 0; i < TSP_CHUNK; i++) {
      ch->t[i].next_free = l->free;
      l->free = &ch->t[i];
    }
  }
  tsp_tour *t = l->free;
  l->free = t->next_free;
  return t;
}

static inline void tsp_free(tsp_local *l, tsp_tour *t) {
  t->next_free = l->free;
  l->free = t;
}

/* A complete tour of length len: lower the bound, keep the path. */
static void tsp_complete(app_tsp *s, tsp_local *l, const uint8_t *path, int n, uint32_t len) {
  uint32_t cur = atomic_load(&s->best);
  while (len < cur && !atomic_compare_exchange_weak(&s->best, &cur, len)) {
  }
  if (len < l->best_len) {
    l->best_len = len;
    memcpy(l->best_path, path, (size_t)n);
  }
}

/* Lower bound of a partial tour ending at cur: its length plus the
 * weight of a minimum spanning tree over cur, the unvisited cities and
 * city 0 (what is left of the tour is a Hamiltonian path from cur through
 * them to 0, a spanning tree of that set). Prim's algorithm, O(k^2). */
static uint32_t tsp_bound(const app_tsp_instance *in, uint32_t visited, uint32_t cur, uint32_t len) {
  int n = in->n, k = 0;
  uint8_t v[APP_TSP_MAX_CITIES + 1];
  uint32_t dist[APP_TSP_MAX_CITIES + 1];
  v[k++] = (uint8_t)cur;
  if (cur != 0) v[k++] = 0;
  for (int c = 1; c < n; c++)
    if (!(visited >> c & 1)) v[k++] = (uint8_t)c;
  uint32_t total = len;
  for (int i = 1; i < k; i++) dist[i] = in->d[cur][v[i]];
  for (int left = k - 1; left > 0; left--) { /* v[1..left] not yet in the tree */
    int best = 1;
    for (int i = 2; i <= left; i++)
      if (dist[i] < dist[best]) best = i;
    total += dist[best];
    uint8_t w = v[best];
    v[best] = v[left];
    dist[best] = dist[left];
    for (int i = 1; i < left; i++)
      if (in->d[w][v[i]] < dist[i]) dist[i] = in->d[w][v[i]];
  }
  return total;
}

/* Depth-first search below a tour, on this thread. */
static void tsp_dfs(app_tsp *s, tsp_local *l, uint8_t *path, int depth, uint32_t visited, uint32_t len) {
  const app_tsp_instance *in = s->in;
  int n = in->n;
  uint32_t cur = path[depth - 1];
  if (depth == n) { /* a complete path: close the tour */
    uint32_t total = len + in->d[cur][0];
    if (total < atomic_load(&s->best)) tsp_complete(s, l, path, n, total);
    return;
  }
  for (int c = 1; c < n; c++) {
    if (visited >> c & 1) continue;
    uint32_t clen = len + in->d[cur][c];
    path[depth] = (uint8_t)c;
    /* relaxed loads of the bound: a stale bound only prunes less, and
     * tsp_complete re-checks by CAS */
    uint32_t best = atomic_load_explicit(&s->best, memory_order_relaxed);
    if (depth + 1 == n) {
      if (clen + in->d[c][0] < best) tsp_complete(s, l, path, n, clen + in->d[c][0]);
      continue;
    }
    if (tsp_bound(in, visited | 1u << c, (uint32_t)c, clen) >= best) continue;
    tsp_dfs(s, l, path, depth + 1, visited | 1u << c, clen);
  }
}

static bool tsp_take(app_tsp *s, tsp_tour **t) {
  void *item;
  int r = ((const syncq_stack_ops *)s->cfg.stack->ops)->pop(s->stack, &item);
  if (r == SYNCQ_OK) {
    *t = item;
    return true;
  }
  if (r != SYNCQ_EMPTY) atomic_fetch_add(&s->errors, 1);
  uint64_t key;
  r = ((const syncq_pqueue_ops *)s->cfg.pq->ops)->delete_min(s->pq, &key, &item);
  if (r == SYNCQ_OK) {
    *t = item;
    return true;
  }
  if (r != SYNCQ_EMPTY) atomic_fetch_add(&s->errors, 1);
  return false;
}

/* Publish a child: heap for shallow tours, stack for deeper ones. False
 * when the structure refused it (full). */
static bool tsp_publish(app_tsp *s, tsp_tour *c) {
  int r = c->depth < s->heap_depth ? ((const syncq_pqueue_ops *)s->cfg.pq->ops)->insert(s->pq, c->bound, c)
                                   : ((const syncq_stack_ops *)s->cfg.stack->ops)->push(s->stack, c);
  if (r == SYNCQ_OK) return true;
  if (r != SYNCQ_ENOMEM && r != SYNCQ_FULL) atomic_fetch_add(&s->errors, 1);
  return false;
}

void app_tsp_worker(app_tsp *s, int id) {
  const syncq_counter_ops *co = s->cfg.counter->ops;
  const app_tsp_instance *in = s->in;
  int n = in->n;
  tsp_local *l = &s->local[id];
  tsp_tour *kids[APP_TSP_MAX_CITIES];
  lab_queue_streak streak = {0}; /* the current idle wait's (polls 0: none) */
  for (;;) {
    tsp_tour *t;
    if (!tsp_take(s, &t)) {
      int64_t live = -1;
      if (co->load(s->live, &live) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
      if (live <= 0 || atomic_load(&s->errors) != 0) break;
      syncq_yield();
      if (lab_queue_watch_empty(&s->watch, &streak)) break; /* tours lost */
      continue;
    }
    if (streak.polls != 0) { /* an idle wait ended */
      lab_queue_watch_end(&s->watch, &streak);
      streak = (lab_queue_streak){0};
    }
    int nk = 0;
    if (t->bound < atomic_load(&s->best)) {
      l->expanded++;
      if (co->fetch_add(s->expanded, 1, NULL) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
      uint32_t cur = t->path[t->depth - 1];
      for (int c = 1; c < n; c++) {
        if (t->visited >> c & 1) continue;
        uint32_t clen = t->len + in->d[cur][c];
        uint32_t bound = tsp_bound(in, t->visited | 1u << c, (uint32_t)c, clen);
        if (bound >= atomic_load(&s->best)) continue;
        int cdepth = t->depth + 1;
        if (n - cdepth <= s->local_cities) { /* finish small subtrees here */
          uint8_t path[APP_TSP_MAX_CITIES];
          memcpy(path, t->path, (size_t)t->depth);
          path[t->depth] = (uint8_t)c;
          tsp_dfs(s, l, path, cdepth, t->visited | 1u << c, clen);
          continue;
        }
        tsp_tour *k = tsp_alloc(l);
        if (k == NULL) { /* out of memory: search it here */
          uint8_t path[APP_TSP_MAX_CITIES];
          memcpy(path, t->path, (size_t)t->depth);
          path[t->depth] = (uint8_t)c;
          tsp_dfs(s, l, path, cdepth, t->visited | 1u << c, clen);
          continue;
        }
        memcpy(k->path, t->path, (size_t)t->depth);
        k->path[t->depth] = (uint8_t)c;
        k->visited = t->visited | 1u << c;
        k->len = clen;
        k->bound = bound;
        k->depth = (uint8_t)cdepth;
        kids[nk++] = k;
      }
    }
    /* children join the live count before their parent leaves it */
    if (nk > 0 && co->fetch_add(s->live, nk, NULL) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
    for (int i = 0; i < nk; i++) {
      if (tsp_publish(s, kids[i])) {
        l->published++;
        continue;
      }
      tsp_tour *k = kids[i]; /* refused: search it here */
      tsp_dfs(s, l, k->path, k->depth, k->visited, k->len);
      tsp_free(l, k);
      if (co->fetch_add(s->live, -1, NULL) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
    }
    tsp_free(l, t);
    if (co->fetch_add(s->live, -1, NULL) != SYNCQ_OK) atomic_fetch_add(&s->errors, 1);
  }
  /* no longer quiet by a wait before finished counts it (once per thread) */
  lab_queue_watch_end(&s->watch, &streak);
  lab_queue_watch_finished(&s->watch);
}

uint32_t app_tsp_best(const app_tsp *s) { return atomic_load(&((app_tsp *)s)->best); }

int64_t app_tsp_expanded(const app_tsp *s) {
  int64_t v = -1;
  if (s->expanded) ((const syncq_counter_ops *)s->cfg.counter->ops)->load(s->expanded, &v);
  return v;
}

int app_tsp_check(const app_tsp *s, uint64_t optimum, char *why, size_t len) {
  const char *names = s->cfg.pq->name;
  int errors = atomic_load(&((app_tsp *)s)->errors);
  if (errors != 0) {
    snprintf(why, len, "%s/%s/%s: %d failed operations", names, s->cfg.stack->name, s->cfg.counter->name, errors);
    return -1;
  }
  const syncq_counter_ops *co = s->cfg.counter->ops;
  int64_t live = -1, expanded = -1;
  co->load(s->live, &live);
  co->load(s->expanded, &expanded);
  uint64_t published = 1; /* the root */
  for (unsigned t = 0; t < s->threads; t++) published += s->local[t].published;
  /* once every thread gave up, the live tours are those lost: none is being expanded, the structures are empty */
  char both[128];
  snprintf(both, sizeof both, "%s/%s", names, s->cfg.stack->name);
  lab_queue_lost lost = {both, "heap and the stack", "tours", live > 0 ? (uint64_t)live : 0, published};
  if (lab_queue_watch_why(&((app_tsp *)s)->watch, &lost, why, len)) return -1;
  uint64_t mine = 0;
  const tsp_local *best = NULL;
  for (unsigned t = 0; t < s->threads; t++) {
    mine += s->local[t].expanded;
    if (best == NULL || s->local[t].best_len < best->best_len) best = &s->local[t];
  }
  void *item;
  uint64_t key;
  bool stack_empty = ((const syncq_stack_ops *)s->cfg.stack->ops)->pop(s->stack, &item) == SYNCQ_EMPTY;
  bool pq_empty = ((const syncq_pqueue_ops *)s->cfg.pq->ops)->delete_min(s->pq, &key, &item) == SYNCQ_EMPTY;
  if (live != 0 || !stack_empty || !pq_empty || expanded != (int64_t)mine) {
    snprintf(why, len, "%s/%s/%s: live count %lld, stack %s, heap %s, work counter %lld against %llu expansions", names,
             s->cfg.stack->name, s->cfg.counter->name, (long long)live, stack_empty ? "empty" : "not empty",
             pq_empty ? "empty" : "not empty", (long long)expanded, (unsigned long long)mine);
    return -1;
  }
  uint32_t b = atomic_load(&((app_tsp *)s)->best);
  if (best == NULL || best->best_len != b || b != optimum) {
    snprintf(why, len, "%s/%s/%s: best tour %u, Held-Karp optimum %llu", names, s->cfg.stack->name,
             s->cfg.counter->name, b, (unsigned long long)optimum);
    return -1;
  }
  /* the path is a tour from city 0 through every city once, of that length */
  int n = s->in->n;
  uint32_t seen = 0, total = 0;
  for (int i = 0; i < n; i++) {
    int c = best->best_path[i];
    if (c >= n || (seen >> c & 1) || (i == 0 && c != 0)) {
      snprintf(why, len, "%s/%s/%s: the best tour is not a tour", names, s->cfg.stack->name, s->cfg.counter->name);
      return -1;
    }
    seen |= 1u << c;
    total += s->in->d[c][best->best_path[(i + 1) % n]];
  }
  if (total != b) {
    snprintf(why, len, "%s/%s/%s: the best tour measures %u, not %u", names, s->cfg.stack->name, s->cfg.counter->name,
             total, b);
    return -1;
  }
  return 0;
}

void app_tsp_destroy(app_tsp *s) {
  if (s == NULL) return;
  if (s->pq) {
    ((const syncq_pqueue_ops *)s->cfg.pq->ops)->destroy(s->pq);
    free(s->pq);
  }
  if (s->stack) {
    ((const syncq_stack_ops *)s->cfg.stack->ops)->destroy(s->stack);
    free(s->stack);
  }
  if (s->live) {
    ((const syncq_counter_ops *)s->cfg.counter->ops)->destroy(s->live);
    free(s->live);
  }
  if (s->expanded) {
    ((const syncq_counter_ops *)s->cfg.counter->ops)->destroy(s->expanded);
    free(s->expanded);
  }
  s->pq = s->stack = s->live = s->expanded = NULL;
  for (unsigned t = 0; t < APP_TSP_MAX_THREADS; t++) {
    tsp_chunk *c = s->local[t].chunks;
    while (c) {
      tsp_chunk *next = c->next;
      free(c);
      c = next;
    }
    s->local[t].chunks = NULL;
    s->local[t].free = NULL;
  }
}
