/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tsp.h — 001 §4.6's parallel travelling salesman: branch and bound over
 * a shared priority queue of promising partial tours, a shared stack of
 * tours to expand and shared counters, each taken from the registry; and
 * a sequential Held-Karp solver that checks the optimum.
 *
 * Use: app_tsp_instance_make, app_tsp_init, every thread runs
 * app_tsp_worker(s, id), then app_tsp_check against app_tsp_held_karp's
 * optimum, then app_tsp_destroy.
 */
#ifndef SYNCQ_LAB_APPS_TSP_H
#define SYNCQ_LAB_APPS_TSP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lab.h"
#include "syncq/pr.h"
#include "syncq/registry.h"

#define APP_TSP_MAX_CITIES 20
#define APP_TSP_MAX_THREADS 64
#define APP_TSP_PQ_CAPACITY 16384u    /* shallow tours (the heap's share) */
#define APP_TSP_STACK_CAPACITY 16384u /* deeper tours; a full stack means "expand it yourself" */
#define APP_TSP_HEAP_DEPTH 3          /* tours of fewer cities (1-2) go to the heap, the others to the stack */
#define APP_TSP_LOCAL_CITIES 6 /* a tour with this many cities left is finished where it is (720 leaves at most) */

typedef struct app_tsp_instance {
  int n;
  uint32_t d[APP_TSP_MAX_CITIES][APP_TSP_MAX_CITIES]; /* symmetric, integer Euclidean */
  uint32_t minout[APP_TSP_MAX_CITIES];                /* shortest edge out of each city */
} app_tsp_instance;

/* n cities (3 .. APP_TSP_MAX_CITIES) at seeded pseudo-random points of a
 * 1000 x 1000 square. SYNCQ_EINVAL for a bad n. */
int app_tsp_instance_make(app_tsp_instance *in, int n, uint64_t seed);
/* The optimum tour length by Held-Karp dynamic programming (O(2^n n^2)
 * time, 2^(n-1) (n-1) words). SYNCQ_OK, SYNCQ_EINVAL, SYNCQ_ENOMEM. */
int app_tsp_held_karp(const app_tsp_instance *in, uint64_t *optimum);

/* The structures, by registry entry. */
typedef struct app_tsp_config {
  const syncq_algo *pq;      /* SYNCQ_FAMILY_PQUEUE: promising partial tours by lower bound */
  const syncq_algo *stack;   /* SYNCQ_FAMILY_STACK: tours to expand */
  const syncq_algo *counter; /* SYNCQ_FAMILY_COUNTER: live tours, and tours expanded */
} app_tsp_config;

typedef struct tsp_tour tsp_tour;
typedef struct tsp_chunk tsp_chunk;

typedef struct tsp_local {
  SYNCQ_CACHELINE_ALIGNED tsp_tour *free; /* this thread's free tour records */
  tsp_chunk *chunks;                      /* the blocks it allocated */
  uint64_t expanded;                      /* tours it expanded */
  uint64_t published;                     /* tours it put in the heap or the stack */
  uint32_t best_len;                      /* its best complete tour */
  uint8_t best_path[APP_TSP_MAX_CITIES];
} tsp_local;

typedef struct app_tsp {
  const app_tsp_instance *in;
  app_tsp_config cfg;
  void *pq, *stack, *live, *expanded; /* the structures' storage */
  int heap_depth;                     /* tours with fewer cities go to the heap, others to the stack */
  int local_cities;                   /* a tour with this many cities left is finished by the thread that has it */
  unsigned threads;
  _Atomic(uint32_t) best; /* the bound: shortest complete tour so far */
  _Atomic(int) errors;
  lab_queue_watch watch; /* tours lost by the heap or the stack (tsp.c) */
  tsp_local local[APP_TSP_MAX_THREADS];
} app_tsp;

/* SYNCQ_OK; SYNCQ_EINVAL (NULL, wrong families, threads 0 or above
 * APP_TSP_MAX_THREADS); SYNCQ_ENOMEM; or a structure's init status. */
int app_tsp_init(app_tsp *s, const app_tsp_instance *in, const app_tsp_config *cfg, unsigned threads);
void app_tsp_worker(app_tsp *s, int id);
/* 0 when the team's best tour is a tour of length `optimum`, the structures
 * end empty, the live count is 0 and the work counter equals the threads'
 * own counts; else -1 with the reason (first: tours the heap or the stack
 * lost, as the watch found them). */
int app_tsp_check(const app_tsp *s, uint64_t optimum, char *why, size_t len);
/* The shortest tour found (after the team finished). */
uint32_t app_tsp_best(const app_tsp *s);
/* Tours expanded in all (the work counter). */
int64_t app_tsp_expanded(const app_tsp *s);
void app_tsp_destroy(app_tsp *s);

#endif
