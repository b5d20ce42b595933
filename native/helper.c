/*
 * fedscore's native kernels, a second thread for the fused training step (train.c): a
 * persistent helper that runs one half of a job while the calling thread runs the other.
 *
 * The halves are fixed by the job (images, output units or weight rows), never by the thread
 * count, so a step gives the same bits whether one thread runs both halves (pool workers, which
 * already have a core each) or two share them (the main thread): helper_run's caller decides.
 * A step hands out a dozen jobs of 0.05–10 ms each; creating a thread per job (products.c
 * does for large products) costs tens of microseconds, so the helper stays and spins on an
 * atomic ticket between jobs, and sleeps on a condition variable after SPIN_MS without work.
 * On a busy machine the helper may not get a core in time: the caller then takes the second
 * half back (whoever claims it first runs it), so a step is never slower than on one thread
 * by more than the wait for a helper that had started.
 */
#include "_train.h"
#include <sched.h>
#include <stdatomic.h>

#define SPIN_MS 2.0

struct Helper {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_ulong posted, done;
  atomic_int claim; /* 0: the posted half is free, 1: taken (by the helper or back by the caller) */
  void (*fn)(void *, int);
  void *arg;
  int stop, sleeping;
};

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void *helper_main(void *p) {
  Helper *h = (Helper *)p;
  unsigned long seen = 0;
  for (;;) {
    double since = -1;
    for (unsigned spins = 1; atomic_load_explicit(&h->posted, memory_order_acquire) == seen; spins++) {
      relax();
      if ((spins & 1023) != 0) continue;
      sched_yield(); /* share the core with whatever else wants it */
      if (since < 0) since = now_ms();
      if (now_ms() - since < SPIN_MS) continue;
      pthread_mutex_lock(&h->mu);
      h->sleeping = 1;
      while (atomic_load_explicit(&h->posted, memory_order_acquire) == seen) pthread_cond_wait(&h->cv, &h->mu);
      h->sleeping = 0;
      pthread_mutex_unlock(&h->mu);
    }
    seen = atomic_load_explicit(&h->posted, memory_order_acquire);
    if (h->stop) return NULL;
    int free_ = 0;
    if (atomic_compare_exchange_strong(&h->claim, &free_, 1)) {
      h->fn(h->arg, 1);
      atomic_store_explicit(&h->done, seen, memory_order_release);
    }
  }
}

Helper *helper_start(void) {
  Helper *h = (Helper *)calloc(1, sizeof(Helper));
  if (h == NULL) return NULL;
  pthread_mutex_init(&h->mu, NULL);
  pthread_cond_init(&h->cv, NULL);
  atomic_init(&h->posted, 0);
  atomic_init(&h->done, 0);
  atomic_init(&h->claim, 1);
  if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
    return NULL;
  }
  return h;
}

static void post(Helper *h, unsigned long ticket) {
  pthread_mutex_lock(&h->mu);
  atomic_store_explicit(&h->posted, ticket, memory_order_release);
  if (h->sleeping) pthread_cond_signal(&h->cv);
  pthread_mutex_unlock(&h->mu);
}

void helper_run(Helper *h, void (*fn)(void *, int), void *arg) {
  const unsigned long ticket = atomic_load_explicit(&h->posted, memory_order_relaxed) + 1;
  h->fn = fn;
  h->arg = arg;
  atomic_store_explicit(&h->claim, 0, memory_order_relaxed);
  post(h, ticket);
  fn(arg, 0);
  int free_ = 0;
  if (atomic_compare_exchange_strong(&h->claim, &free_, 1)) { /* the helper has not started it: run it here */
    fn(arg, 1);
    return;
  }
  for (unsigned spins = 1; atomic_load_explicit(&h->done, memory_order_acquire) != ticket; spins++) {
    relax();
    if ((spins & 4095) == 0) sched_yield(); /* the helper may have lost its core on a busy machine */
  }
}

void helper_stop(Helper *h) {
  if (h == NULL) return;
  h->stop = 1;
  post(h, atomic_load_explicit(&h->posted, memory_order_relaxed) + 1);
  pthread_join(h->thread, NULL);
  pthread_mutex_destroy(&h->mu);
  pthread_cond_destroy(&h->cv);
  free(h);
}
