/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lc98_mpi_run.c — syncq-lab starts mpirun itself for its MPI points: the
 * build records each MPI's helper, launcher and the launcher's options
 * (SYNCQ_LAB_MPI, from lab/CMakeLists.txt; the options are written once,
 * in lc98_mpi_options.cmake, which also gives them to the tests that
 * check the launch), and every sample that needs MPI runs
 *     timeout <bound> <mpirun> <options> -n <np> <helper> <args>
 * and parses the helper's lines ("<variant> <values...> ok" or
 * "... FAIL <why>"). Open MPI runs as root when the lab does.
 *
 * Placement (LC98_MPI_PLACEMENT): both launchers are told to map ranks to
 * cores in turn and bind each to its core. Left to their defaults they
 * differ: Open MPI binds to cores up to one rank per core and not at all
 * beyond, MPICH's hydra never binds, and the same shared-memory code spent
 * 1.5 to 2.5 times the communication time under hydra's unbound ranks as
 * under Open MPI's bound ones, so a variant measured in one launcher's
 * launch was not comparable with one measured in the other's. Open MPI
 * refuses to bind more ranks than cores unless told "overload-allowed";
 * hydra deals them round the cores as Open MPI then does
 * (tests/am/mpi_placement_run.sh checks the two agree).
 */
#include "lc98_mpi_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SYNCQ_LAB_MPI
#define SYNCQ_LAB_MPI ""
#endif
#ifndef SYNCQ_LAB_MPI_ABSENT
#define SYNCQ_LAB_MPI_ABSENT "not configured"
#endif

#define LC98_MPI_TIMEOUT_S 300 /* a hung launch fails the point instead of the whole run */
#define LC98_MPI_OUT_MAX 8192  /* output kept for an error message */

int lc98_mpi_list(lc98_mpi *out, int cap, const char **absent) {
  static const char spec[] = SYNCQ_LAB_MPI; /* impl|helper|mpirun|options,... */
  int n = 0;
  const char *p = spec;
  while (*p && n < cap) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char item[1024];
    if (len >= sizeof item) break;
    memcpy(item, p, len);
    item[len] = '\0';
    char *a = strchr(item, '|'), *b = a ? strchr(a + 1, '|') : NULL, *c = b ? strchr(b + 1, '|') : NULL;
    if (a && b && c) {
      *a = *b = *c = '\0';
      snprintf(out[n].impl, sizeof out[n].impl, "%.15s", item);
      snprintf(out[n].helper, sizeof out[n].helper, "%.511s", a + 1);
      snprintf(out[n].mpirun, sizeof out[n].mpirun, "%.255s", b + 1);
      snprintf(out[n].options, sizeof out[n].options, "%.255s", c + 1);
      if (access(out[n].helper, X_OK) == 0 && access(out[n].mpirun, X_OK) == 0) n++;
    }
    p += len;
    if (*p == ',') p++;
  }
  if (absent) *absent = n == 0 ? (spec[0] ? "the MPI helpers or mpirun are missing" : SYNCQ_LAB_MPI_ABSENT) : NULL;
  return n;
}

void lc98_mpi_command(const lc98_mpi *m, int np, char *out, size_t len) {
  snprintf(out, len, "%s %s -n %d", m->mpirun, m->options, np);
}

int lc98_mpi_launch(lab_ctx *ctx, const lc98_mpi *m, int np, const char *args, lc98_mpi_line *lines, int cap) {
  if (strcmp(m->impl, "openmpi") == 0 && geteuid() == 0) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  char pre[640], cmd[2048]; /* mpirun and options: 255 characters each at most */
  lc98_mpi_command(m, np, pre, sizeof pre);
  snprintf(cmd, sizeof cmd, "timeout -k 5 %d %s '%s' %s 2>&1", LC98_MPI_TIMEOUT_S, pre, m->helper, args);
  fflush(NULL);
  FILE *f = popen(cmd, "r");
  if (f == NULL) {
    lab_fail(ctx, "cannot start %s", m->mpirun);
    return -1;
  }
  char line[1024], *all = calloc(1, LC98_MPI_OUT_MAX);
  size_t used = 0;
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    size_t l = strlen(line);
    if (all && used + l < LC98_MPI_OUT_MAX) {
      memcpy(all + used, line, l);
      used += l;
    }
    if (n >= cap) continue;
    lc98_mpi_line *o = &lines[n];
    memset(o, 0, sizeof *o);
    char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
    if (tok == NULL || strlen(tok) >= sizeof o->variant) continue;
    snprintf(o->variant, sizeof o->variant, "%s", tok);
    bool parsed = false;
    while ((tok = strtok_r(NULL, " \t\n", &save)) != NULL) {
      if (strcmp(tok, "ok") == 0) {
        o->ok = 1;
        parsed = true;
        break;
      }
      if (strcmp(tok, "FAIL") == 0) {
        char *rest = strtok_r(NULL, "\n", &save);
        snprintf(o->why, sizeof o->why, "%s", rest ? rest : "");
        parsed = true;
        break;
      }
      char *e;
      double v = strtod(tok, &e);
      if (*e != '\0' || o->nv >= LC98_MPI_MAX_VALUES) break;
      o->v[o->nv++] = v;
    }
    if (parsed) n++;
  }
  int st = pclose(f);
  if (n == 0 || st != 0) {
    const char *tail = all && used > 600 ? all + used - 600 : (all ? all : "");
    lab_fail(ctx, "%s exited with status %d after %d result lines; its output ends: %s", pre, st, n, tail);
    free(all);
    return -1;
  }
  free(all);
  return n;
}
