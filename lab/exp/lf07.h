/* SPDX-License-Identifier: BSD-2-Clause */
/* lf07.h — lf07-sort's parallel sort as a function, for the experiment
 * (lf07.c) and for tests/po/po_sort_test.c, which checks it against qsort. */
#ifndef SYNCQ_LAB_LF07_H
#define SYNCQ_LAB_LF07_H

#include <stdbool.h>
#include <stddef.h>

#include "syncq/po.h"

/* Parameters of one run of the parallel sort. */
typedef struct lf07_params {
  const char *mailbox;
  int sorters;
  syncq_po_send_mode mode;
  bool empty;          /* move the messages, do not sort */
  size_t stack_size;   /* 0: the backend's default (threads 32 KB, fibers 16 KB) */
  const char *backend; /* "thread", "fiber"; NULL: the postoffice's default */
} lf07_params;

typedef struct lf07_result {
  double sort_ms;
  double rss_kb_per_proc;   /* VmRSS growth over N+1 processes; < 0: unknown */
  double stack_kb_per_proc; /* resident stack per Sorter (mincore); < 0: unknown */
  char why[256];            /* on failure */
} lf07_result;

int lf07_sort_run(const lf07_params *p, int *array, int length, lf07_result *r);
void lf07_sort_sequential(int sorters, bool empty, int *array, int length);
void lf07_make_input(int *array, int length);

#endif
