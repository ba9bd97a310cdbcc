/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * results.h — the JSON Lines results writer (format: docs/results-format.md).
 * One record per call, one line built in memory and appended with one
 * write(), so an interrupted run keeps what it measured and writers
 * appending to one file do not interleave pieces of their records.
 */
#ifndef SYNCQ_LAB_RESULTS_H
#define SYNCQ_LAB_RESULTS_H

#include <jansson.h>
#include <stdio.h>

#define LAB_RESULTS_SCHEMA 1
#define LAB_RESULTS_FILE "results.jsonl"

#define LAB_RUN_ID_MAX 64

typedef struct lab_results {
  FILE *f;
  char run_id[LAB_RUN_ID_MAX];
  int launch; /* 1..k: every record carries it ("launch"); 0: a run of one launch */
} lab_results;

/* Create dir if needed and open dir/results.jsonl for appending. run_id:
 * the run this launch belongs to (NULL: a new one, "<UTC stamp>-<pid>");
 * launch: 1..k, or 0 for a run of one launch. 0, or -1 with the reason in
 * why. */
int lab_results_open(lab_results *r, const char *dir, const char *run_id, int launch, char *why, size_t len);
/* A new run id ("<UTC stamp>-<pid>") into out. */
void lab_results_new_run_id(char *out, size_t len);
void lab_results_close(lab_results *r);

/* Write obj (stealing the reference) after adding type, schema and run_id
 * (and launch), with one write() to r->f's descriptor (more only after a
 * short write); nothing goes through r->f's stdio buffer. 0 or -1 (errno
 * set). */
int lab_results_write(lab_results *r, const char *type, json_t *obj);

#endif
