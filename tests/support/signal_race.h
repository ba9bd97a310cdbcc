/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * signal_race.h — the frame of a test whose SIGALRM handler runs inside a
 * race point of its own thread (the handler calls an operation registered
 * SYNCQ_PROP_SIGNAL_SAFE while the thread it interrupted is in the middle
 * of something that operation may reach, as the delay loop's first
 * calibration): the handler installed, helper threads started with
 * SIGALRM blocked (raise() aims at the raising thread anyway), and a
 * watchdog that ends the process if the test has not gone on within
 * SIGNAL_RACE_WATCHDOG_S (a deadlock, not a speed check).
 *
 *   signal_race_install(on_alarm);
 *   signal_race_watch("cas_signal_race_test: the handler's add", &w);
 *   ... the call during which the point raises SIGALRM ...
 *   signal_race_went_on(w);
 *
 * Header-only, for one test program each (its state is static).
 */
#ifndef SYNCQ_TEST_SIGNAL_RACE_H
#define SYNCQ_TEST_SIGNAL_RACE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Far beyond a calibration (milliseconds; seconds under a sanitizer). */
#define SIGNAL_RACE_WATCHDOG_S 20

static _Atomic(int) signal_race_on;
static const char *signal_race_what;

/* SIGALRM runs handler in whichever thread raises it. 0, or -1 (errno). */
static inline int signal_race_install(void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  return sigaction(SIGALRM, &sa, NULL);
}

/* Start fn(arg) on a thread with SIGALRM blocked. 0, or pthread's error. */
static inline int signal_race_spawn(pthread_t *t, void *(*fn)(void *), void *arg) {
  sigset_t alrm, old;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  int r = pthread_sigmask(SIG_BLOCK, &alrm, &old);
  if (r != 0) return r;
  r = pthread_create(t, NULL, fn, arg);
  int back = pthread_sigmask(SIG_SETMASK, &old, NULL);
  return r != 0 ? r : back;
}

static void *signal_race_watchdog(void *p) {
  (void)p;
  struct timespec tick = {0, 10 * 1000 * 1000};
  for (int i = 0; i < SIGNAL_RACE_WATCHDOG_S * 100 && !atomic_load(&signal_race_on); i++) nanosleep(&tick, NULL);
  if (!atomic_load(&signal_race_on)) {
    fprintf(stderr, "%s did not return within %d s (deadlock)\n", signal_race_what, SIGNAL_RACE_WATCHDOG_S);
    _exit(1);
  }
  return NULL;
}

/* Start the watchdog; what names the call it waits for in its message
 * ("treiber_signal_race_test: the handler's push"). 0, or pthread's error. */
static inline int signal_race_watch(const char *what, pthread_t *w) {
  signal_race_what = what;
  return signal_race_spawn(w, signal_race_watchdog, NULL);
}

/* The test has gone on: stop the watchdog and join it. 0, or pthread's error. */
static inline int signal_race_went_on(pthread_t w) {
  atomic_store(&signal_race_on, 1);
  return pthread_join(w, NULL);
}

#endif
