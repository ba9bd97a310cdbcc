/* SPDX-License-Identifier: BSD-2-Clause */
/* A program that uses an installed syncq: exits 0 when it works. */
#include <stdio.h>
#include <syncq/syncq.h>

int main(void) {
  syncq_counter *c;
  int64_t v = 0;
  if (syncq_counter_create("faa", 41, &c) != SYNCQ_OK) return 1;
  syncq_counter_fetch_add(c, 1, NULL);
  syncq_counter_load(c, &v);
  syncq_counter_destroy(c);
  printf("installed syncq works: %lld\n", (long long)v);
  return v == 42 ? 0 : 1;
}
