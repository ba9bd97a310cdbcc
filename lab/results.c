/* SPDX-License-Identifier: BSD-2-Clause */
/* results.c — JSON Lines writer for syncq-lab (see results.h). */
#include "results.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
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

/* A growing buffer that json_dump_callback fills: the whole record is
 * built in memory before any byte of it reaches the file. */
typedef struct record_buf {
  char *p;
  size_t len, cap;
} record_buf;

static int record_append(const char *buffer, size_t size, void *data) {
  record_buf *b = data;
  if (size > b->cap - b->len) {
    size_t cap = b->cap != 0 ? b->cap : 4096;
    while (size > cap - b->len) {
      if (cap > SIZE_MAX / 2) return -1;
      cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (p == NULL) return -1;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, buffer, size);
  b->len += size;
  return 0;
}

/* All of buf at the end of fd (O_APPEND) with one write() where the kernel
 * takes it whole, as Linux does a regular file's under the file's lock: a
 * record of another process appending to the same file lands before or
 * after it, never inside it (stdio would split a record longer than its
 * buffer into several writes). A short write (a full disk, a signal) is followed by the
 * rest; a fatal signal inside the write can still leave part of the
 * record, which the runner cuts off (cut_partial_record, runner.c). */
static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

int lab_results_write(lab_results *r, const char *type, json_t *obj) {
  json_object_set_new(obj, "type", json_string(type));
  json_object_set_new(obj, "schema", json_integer(LAB_RESULTS_SCHEMA));
  json_object_set_new(obj, "run_id", json_string(r->run_id));
  if (r->launch > 0) json_object_set_new(obj, "launch", json_integer(r->launch));
  record_buf b = {0};
  int rc = json_dump_callback(obj, record_append, &b, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10));
  json_decref(obj);
  if (rc != 0 || record_append("\n", 1, &b) != 0) {
    free(b.p);
    errno = ENOMEM;
    return -1;
  }
  /* Nothing of this file goes through r->f's buffer (the runner flushes it
   * before it reads the file's end), so writing under it keeps the order. */
  int fd = fileno(r->f);
  rc = fd < 0 ? -1 : write_all(fd, b.p, b.len);
  int err = errno;
  free(b.p);
  errno = err;
  return rc;
}
