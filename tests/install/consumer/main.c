/* SPDX-License-Identifier: BSD-2-Clause */
/* A program that uses an installed syncq: exits 0 when it works. It also
 * counts in the static inline bodies (SYNCQ_STATS), into the library's
 * per-thread counters: the exported syncq_stats_tls, shared or static. */
#define SYNCQ_STATS 1

#include <stdio.h>
#include <syncq/static/queue/nblfq.h>
#include <syncq/syncq.h>

static SYNCQ_CACHELINE_ALIGNED unsigned char ring[SYNCQ_QUEUE_NBLFQ_BYTES(8)];

int main(void) {
  syncq_counter *c;
  int64_t v = 0;
  if (syncq_counter_create("faa", 41, &c) != SYNCQ_OK) return 1;
  syncq_counter_fetch_add(c, 1, NULL);
  syncq_counter_load(c, &v);
  syncq_counter_destroy(c);
  printf("installed syncq works: %lld\n", (long long)v);

  syncq_queue_nblfq *q = (syncq_queue_nblfq *)(void *)ring;
  static int item;
  void *out = NULL;
  if (syncq_queue_nblfq_init(q, 8) != SYNCQ_OK) return 1;
  syncq_stats_reset();
  if (syncq_queue_nblfq_enqueue_inline(q, &item) != SYNCQ_OK) return 1;
  if (syncq_queue_nblfq_dequeue_inline(q, &out) != SYNCQ_OK || out != &item) return 1;
  unsigned long long cas = (unsigned long long)syncq_stats_self()->cas_attempts;
  printf("inline NBLFQ counted %llu CAS (SYNCQ_STATS)\n", cas);
  return v == 42 && cas == 2 ? 0 : 1;
}
