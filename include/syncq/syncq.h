/*
 * syncq/syncq.h — everything public in one include.
 */
#ifndef SYNCQ_SYNCQ_H
#define SYNCQ_SYNCQ_H

#include "syncq/status.h"
#include "syncq/pr.h"
#include "syncq/backoff.h"
#include "syncq/clock.h"
#include "syncq/platform.h"
#include "syncq/stats.h"
#include "syncq/registry.h"
#include "syncq/counter.h"
#include "syncq/counter/faa.h"
#include "syncq/counter/cas.h"
#include "syncq/counter/mutex.h"

#define SYNCQ_VERSION_MAJOR 0
#define SYNCQ_VERSION_MINOR 1
#define SYNCQ_VERSION_PATCH 0

#endif
