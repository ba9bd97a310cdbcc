/*
 * results.h — the JSON Lines results writer (format: docs/results-format.md).
 * One record per call, flushed, so an interrupted run keeps what it measured.
 */
#ifndef SYNCQ_LAB_RESULTS_H
#define SYNCQ_LAB_RESULTS_H

#include <jansson.h>
#include <stdio.h>

#define LAB_RESULTS_SCHEMA 1
#define LAB_RESULTS_FILE "results.jsonl"

typedef struct lab_results {
  FILE *f;
  char run_id[64];
} lab_results;

/* Create dir if needed and open dir/results.jsonl for appending. 0, or -1
 * with the reason in why. */
int lab_results_open(lab_results *r, const char *dir, char *why, size_t len);
void lab_results_close(lab_results *r);

/* Write obj (stealing the reference) after adding type, schema and run_id.
 * 0 or -1 (errno set). */
int lab_results_write(lab_results *r, const char *type, json_t *obj);

#endif
