/* SPDX-License-Identifier: BSD-2-Clause */
/* results.c — JSON Lines writer for syncq-lab (see results.h). */
#include "results.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
  return 0;
}

void lab_results_new_run_id(char *out, size_t len) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(out, len, "%s-%ld", stamp, (long)getpid());
}

int lab_results_open(lab_results *r, const char *dir, const char *run_id, int launch, char *why, size_t len) {
  char path[4096];
  if (make_dirs(dir) != 0) {
    snprintf(why, len, "cannot create %s: %s", dir, strerror(errno));
    return -1;
  }
  snprintf(path, sizeof path, "%s/%s", dir, LAB_RESULTS_FILE);
  r->f = fopen(path, "a");
  if (r->f == NULL) {
    snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  if (run_id != NULL) snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
  else lab_results_new_run_id(r->run_id, sizeof r->run_id);
  r->launch = launch;
  return 0;
}

void lab_results_close(lab_results *r) {
  if (r->f != NULL) fclose(r->f);
  r->f = NULL;
}

int lab_results_write(lab_results *r, const char *type, json_t *obj) {
  json_object_set_new(obj, "type", json_string(type));
  json_object_set_new(obj, "schema", json_integer(LAB_RESULTS_SCHEMA));
  json_object_set_new(obj, "run_id", json_string(r->run_id));
  if (r->launch > 0) json_object_set_new(obj, "launch", json_integer(r->launch));
  int rc = json_dumpf(obj, r->f, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10));
  json_decref(obj);
  if (rc != 0 || fputc('\n', r->f) == EOF || fflush(r->f) != 0) return -1;
  return 0;
}
