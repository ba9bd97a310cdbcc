/* SPDX-License-Identifier: BSD-2-Clause */
/* syncq-lab: which points an experiment's verdicts read (claimed.h). */
#include "claimed.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_ALGOS 2 /* num and den, or algo */

typedef struct leaf {
  json_t *where;      /* object, or NULL: every point */
  json_t *own_where;  /* where, when the leaf made it (ratio_change_*'s baseline); freed with the leaf */
  json_t *at;         /* object, or NULL: "max_threads" */
  const char *at_max; /* at {K: "max"}: K's largest planned value, as max_threads is threads' */
  const char *metric; /* NULL: any */
  const char *algo[LEAF_ALGOS];
  int nalgo;
  bool peers;          /* peer_ratio_*: every peer of the point too */
  bool panel;          /* in_pack: every variant of the point too */
  bool every_count;    /* rise_then_plateau, along_ratio_*, oversubscribed_*: every thread count */
  double threads_cap;  /* needs_pus: only points up to this many threads (0: no cap) */
  bool planned;        /* a group ran one of algo[] under where */
  double max_threads;  /* the largest threads of those groups */
  bool at_planned;     /* at_max: a group ran one of algo[] with K under where */
  double at_max_value; /* ... the largest K of those groups */
} leaf;

struct lab_claimed {
  json_t **rules; /* owned: the leaves' strings point into them */
  size_t nrules;
  leaf *leaves;
  size_t nleaves, cap;
  int pus; /* the processing units the run plans for (needs_pus) */
};

static const lab_param *param_of(const lab_group *g, const char *key) {
  for (int i = 0; i < g->nparams; i++)
    if (strcmp(g->params[i].key, key) == 0) return &g->params[i];
  return NULL;
}

/* Every key of `obj` is a param of g with that value (strings exactly,
 * numbers numerically, as the report compares them). */
static bool params_match(const json_t *obj, const lab_group *g) {
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    const lab_param *p = param_of(g, key);
    if (p == NULL) return false;
    if (json_is_string(val)) {
      if (p->str == NULL || strcmp(p->str, json_string_value(val)) != 0) return false;
    } else if (json_is_number(val)) {
      if (p->str != NULL || p->num != json_number_value(val)) return false;
    } else {
      return false;
    }
  }
  return true;
}

/* `metric` is m or m's ratio points, "<m>_ratio". */
static bool is_metric_or_ratio(const char *metric, const char *m) {
  size_t n = strlen(m);
  return strncmp(metric, m, n) == 0 && (metric[n] == '\0' || strcmp(metric + n, "_ratio") == 0);
}

/* The group measures the leaf's metric (as its metric or an extra one). */
static bool measures(const leaf *l, const lab_group *g) {
  if (l->metric == NULL) return true;
  if (g->metric != NULL && is_metric_or_ratio(l->metric, g->metric)) return true;
  for (int e = 0; e < g->nextra && e < LAB_MAX_EXTRA; e++)
    if (g->extra[e].metric != NULL && is_metric_or_ratio(l->metric, g->extra[e].metric)) return true;
  return false;
}

static bool names(const leaf *l, const char *algo) {
  for (int i = 0; i < l->nalgo; i++)
    if (strcmp(l->algo[i], algo) == 0) return true;
  return false;
}

/* threads_cap: the largest thread count an enclosing needs_pus lets the
 * rule read (0: any). */
static int add_leaf(lab_claimed *c, const json_t *rule, double threads_cap) {
  const char *op = json_string_value(json_object_get(rule, "op"));
  if (op == NULL) return 0;
  if (strcmp(op, "all") == 0 || strcmp(op, "any") == 0) {
    size_t i;
    json_t *sub;
    json_array_foreach(json_object_get(rule, "rules"), i, sub) {
      if (add_leaf(c, sub, threads_cap) != 0) return -1;
    }
    return 0;
  }
  if (strcmp(op, "needs_pus") == 0) {
    /* As the report decides it (rules.py): nothing is read on a machine
     * short of the units; otherwise only the points that fit on them. */
    json_t *need = json_object_get(rule, "pus"), *per = json_object_get(rule, "pus_per_thread");
    double k = json_is_number(per) ? json_number_value(per) : 1.0;
    if (!json_is_number(need) || k <= 0 || c->pus < json_number_value(need)) return 0;
    double cap = (double)(int)((double)c->pus / k);
    if (threads_cap > 0 && threads_cap < cap) cap = threads_cap;
    return add_leaf(c, json_object_get(rule, "rule"), cap);
  }
  if (strcmp(op, "exercised") == 0) {
    /* The inner rule's points, and below, as a leaf of its own, the
     * point whose count decides whether the inner rule is judged. */
    if (add_leaf(c, json_object_get(rule, "rule"), threads_cap) != 0) return -1;
  }
  leaf l;
  memset(&l, 0, sizeof l);
  static const char *const keys[] = {"num", "den", "algo"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0] && l.nalgo < LEAF_ALGOS; k++) {
    const char *a = json_string_value(json_object_get(rule, keys[k]));
    if (a != NULL) l.algo[l.nalgo++] = a;
  }
  if (l.nalgo == 0) return 0; /* not_measurable, or an op that reads no point */
  l.peers = strncmp(op, "peer_", 5) == 0;
  l.panel = strcmp(op, "in_pack") == 0;
  l.every_count = strcmp(op, "rise_then_plateau") == 0 || strncmp(op, "along_ratio_", 12) == 0 ||
                  strcmp(op, "oversubscribed_ratio_above") == 0;
  l.threads_cap = threads_cap;
  l.metric = json_string_value(json_object_get(rule, "metric"));
  json_t *where = json_object_get(rule, "where");
  l.where = json_is_object(where) ? where : NULL;
  json_t *at = json_object_get(rule, "at");
  l.at = json_is_object(at) ? at : NULL;
  if (l.at != NULL && json_object_size(l.at) == 1) {
    const char *key = json_object_iter_key(json_object_iter(l.at));
    const char *v = json_string_value(json_object_get(l.at, key));
    if (v != NULL && strcmp(v, "max") == 0) l.at_max = key, l.at = NULL;
  }
  if (c->nleaves == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 8;
    leaf *n = realloc(c->leaves, cap * sizeof *n);
    if (n == NULL) return -1;
    c->leaves = n;
    c->cap = cap;
  }
  c->leaves[c->nleaves++] = l;
  if (strncmp(op, "ratio_change_", 13) == 0 && json_is_object(json_object_get(rule, "base"))) {
    /* The same comparison at its baseline: where with base's params in place. */
    json_t *merged = l.where != NULL ? json_deep_copy(l.where) : json_object();
    if (merged == NULL || json_object_update(merged, json_object_get(rule, "base")) != 0) {
      json_decref(merged);
      return -1;
    }
    if (c->nleaves == c->cap) {
      size_t cap = 2 * c->cap;
      leaf *n = realloc(c->leaves, cap * sizeof *n);
      if (n == NULL) {
        json_decref(merged);
        return -1;
      }
      c->leaves = n;
      c->cap = cap;
    }
    l.where = l.own_where = merged;
    c->leaves[c->nleaves++] = l;
  }
  return 0;
}

lab_claimed *lab_claimed_new(const lab_experiment *e, int pus) {
  lab_claimed *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->pus = pus;
  c->rules = calloc(e->nclaims ? e->nclaims : 1, sizeof *c->rules);
  if (c->rules == NULL) {
    free(c);
    return NULL;
  }
  for (size_t i = 0; i < e->nclaims; i++) {
    json_error_t err;
    json_t *rule = json_loads(e->claims[i].rule, 0, &err);
    if (rule == NULL) continue;
    c->rules[c->nrules++] = rule;
    if (add_leaf(c, rule, 0) != 0) {
      lab_claimed_free(c);
      return NULL;
    }
  }
  return c;
}

void lab_claimed_free(lab_claimed *c) {
  if (c == NULL) return;
  for (size_t i = 0; i < c->nrules; i++) json_decref(c->rules[i]);
  for (size_t i = 0; i < c->nleaves; i++) json_decref(c->leaves[i].own_where);
  free(c->rules);
  free(c->leaves);
  free(c);
}

void lab_claimed_plan(lab_claimed *c, const lab_group *g, const char *algo) {
  if (c == NULL) return;
  const lab_param *t = param_of(g, "threads");
  for (size_t i = 0; i < c->nleaves; i++) {
    leaf *l = &c->leaves[i];
    if (l->at != NULL || !names(l, algo) || !measures(l, g)) continue;
    if (l->where != NULL && !params_match(l->where, g)) continue;
    if (l->at_max != NULL) {
      const lab_param *k = param_of(g, l->at_max);
      if (k != NULL && k->str == NULL && (!l->at_planned || k->num > l->at_max_value)) l->at_max_value = k->num;
      l->at_planned = l->at_planned || (k != NULL && k->str == NULL);
      continue;
    }
    if (t == NULL || t->str != NULL) continue; /* no thread count: every point matches */
    if (l->threads_cap > 0 && t->num > l->threads_cap) continue;
    if (!l->planned || t->num > l->max_threads) l->max_threads = t->num;
    l->planned = true;
  }
}

bool lab_claimed_reads(const lab_claimed *c, const lab_group *g, const char *algo, bool peer) {
  if (c == NULL) return false;
  const lab_param *t = param_of(g, "threads");
  for (size_t i = 0; i < c->nleaves; i++) {
    const leaf *l = &c->leaves[i];
    if (!names(l, algo) && !(peer && l->peers) && !l->panel) continue;
    if (!measures(l, g)) continue;
    if (l->where != NULL && !params_match(l->where, g)) continue;
    if (t != NULL && t->str == NULL && l->threads_cap > 0 && t->num > l->threads_cap) continue;
    if (l->at != NULL) {
      if (!params_match(l->at, g)) continue;
    } else if (l->at_max != NULL) {
      const lab_param *k = param_of(g, l->at_max);
      if (k == NULL || k->str != NULL || !l->at_planned || k->num != l->at_max_value) continue;
    } else if (l->every_count) {
      /* every thread count of the curve */
    } else if (t != NULL && t->str == NULL && l->planned && t->num != l->max_threads) {
      continue;
    }
    return true;
  }
  return false;
}
