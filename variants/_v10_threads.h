/* v10's merge threads (variants/_v10_merge.pyx): a few worker threads started once, each waiting for
   the next job, and the calling thread, which hands a job out, takes its own share of it and waits for
   the rest.  Plain POSIX threads, so the module builds wherever v8 and v9 build with setuptools alone
   (no OpenMP: Apple's clang ships without it).  Where POSIX threads are missing (Windows, or a build
   with -DV10_NO_THREADS) V10_THREADS is 0: no worker is ever started and every merge runs on the
   calling thread, the same code with one share.

   Why workers started once rather than a thread per merge: a merge worth sharing takes a few hundred
   microseconds, and starting and joining a thread costs tens of them each time; a worker that sleeps
   on a condition variable between merges is woken in a few.  A worker spins a little after each job
   before it sleeps, since the next large merge often follows within microseconds.

   The counters the threads share (the next block of words to take, the flag that stops a merge) are
   read and written with the compilers' atomic builtins (gcc and clang); the rest goes through the
   pool's mutex. */
#ifndef BPE_V10_THREADS_H
#define BPE_V10_THREADS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32) && !defined(V10_NO_THREADS)
#define V10_THREADS 1
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  /* pthread_setname_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#else
#define V10_THREADS 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define V10_ATOMICS 1
#else
#define V10_ATOMICS 0
#endif

/* The atomic operations the threads use, each a plain one where there is no second thread. */
static inline int64_t v10_fetch_add(int64_t *p, int64_t v) {
#if V10_ATOMICS && V10_THREADS
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#else
    int64_t old = *p; *p += v; return old;
#endif
}
static inline int v10_load(const int *p) {
#if V10_ATOMICS && V10_THREADS
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#else
    return *p;
#endif
}
static inline void v10_store(int *p, int v) {
#if V10_ATOMICS && V10_THREADS
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
#else
    *p = v;
#endif
}
static inline int64_t v10_load64(const int64_t *p) {
#if V10_ATOMICS && V10_THREADS
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#else
    return *p;
#endif
}
static inline int v10_cas64(int64_t *p, int64_t expected, int64_t desired) {
#if V10_ATOMICS && V10_THREADS
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#else
    if (*p != expected) return 0;
    *p = desired; return 1;
#endif
}
static inline int64_t v10_fetch_or64(int64_t *p, int64_t v) {
#if V10_ATOMICS && V10_THREADS
    return __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL);
#else
    int64_t old = *p; *p |= v; return old;
#endif
}
static inline int64_t v10_fetch_sub64(int64_t *p, int64_t v) {
#if V10_ATOMICS && V10_THREADS
    return __atomic_fetch_sub(p, v, __ATOMIC_ACQ_REL);
#else
    int64_t old = *p; *p -= v; return old;
#endif
}
static inline void v10_yield(void) {
#if V10_THREADS
    sched_yield();
#endif
}
static inline int v10_exchange(int *p, int v) {
#if V10_ATOMICS && V10_THREADS
    return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
#else
    int old = *p; *p = v; return old;
#endif
}

/* Nanoseconds on a clock that only goes forward (the dispatch cost the summary reports). */
static inline int64_t v10_now_ns(void) {
#if V10_THREADS
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
#else
    return 0;
#endif
}

/* Nanoseconds of CPU this thread has used: with the wall clock around a shared merge, how much of the time
   the calling thread was on a core (a busy machine's scheduler may run another process in its place). */
static inline int64_t v10_thread_cpu_ns(void) {
#if V10_THREADS && defined(CLOCK_THREAD_CPUTIME_ID)
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
        return 0;
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
#else
    return 0;
#endif
}

/* A job: work(state, thread, number) is called once on each worker, thread 1 .. workers (the caller is 0),
   with the job's number (v10_pool_dispatch's), unless the worker wakes only after a later job was handed
   out: then it does that one.  The caller does not wait for the workers through the pool: the job itself
   says when it is done (in v10's merge, a count of the workers inside it, which a late worker, finding the
   job closed or another one's number there, does not join). */
typedef void (*v10_work)(void *state, int thread, int64_t number);

#if V10_THREADS
struct V10Pool;
typedef struct V10Worker {
    struct V10Pool *pool;
    int thread;
    pthread_t id;
} V10Worker;
#endif

typedef struct V10Pool {
    int workers;            /* started and not yet joined */
#if V10_THREADS
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* a new job, or the end: the workers wait on it */
    pthread_cond_t done;    /* the last worker ended its share: the caller waits on it */
    V10Worker *threads;
#endif
    int64_t job;            /* bumped for each job (read by spinning workers without the lock) */
    long owner;             /* the process that started the workers (a forked child has none of them) */
    int pending;            /* workers still on the current job */
    int quit;
    v10_work work;
    void *state;
} V10Pool;

#define V10_THREAD_NAME "bpe-v10-merge"

/* How many times a worker checks for the next job, a pause apart, before it sleeps (about 20 us). */
#define V10_SPINS 2000

static inline void v10_pause(void) {  /* (a spinning thread's hint to the core) */
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#if V10_THREADS
static void *v10_worker_main(void *argument) {
    V10Worker *me = (V10Worker *)argument;
    V10Pool *pool = me->pool;
    int64_t seen = 0;
    int spins;
    v10_work work;
    void *state;
    /* A name for the thread (top, ps -L, /proc/PID/task/TID/comm), which the tests count. */
#if defined(__linux__)
    pthread_setname_np(pthread_self(), V10_THREAD_NAME);
#elif defined(__APPLE__)
    pthread_setname_np(V10_THREAD_NAME);
#endif
    for (;;) {
        /* The next job is often moments away: look for it a little before sleeping on the lock. */
        for (spins = 0; spins < V10_SPINS; spins++) {
            if (__atomic_load_n(&pool->job, __ATOMIC_ACQUIRE) != seen || __atomic_load_n(&pool->quit, __ATOMIC_ACQUIRE))
                break;
            v10_pause();
        }
        pthread_mutex_lock(&pool->lock);
        while (!pool->quit && pool->job == seen)
            pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->quit) {
            pthread_mutex_unlock(&pool->lock);
            return NULL;
        }
        seen = pool->job;
        work = pool->work;
        state = pool->state;
        pthread_mutex_unlock(&pool->lock);
        work(state, me->thread, seen);
        pthread_mutex_lock(&pool->lock);
        if (__atomic_sub_fetch(&pool->pending, 1, __ATOMIC_ACQ_REL) == 0)
            pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->lock);
    }
}
#endif

/* Start `workers` threads; 0, or an errno value (nothing left started).  The workers are started with
   every signal blocked, so Ctrl-C and SIGTERM go to the caller's thread, which checks for them. */
static int v10_pool_start(V10Pool *pool, int workers) {
    memset(pool, 0, sizeof(*pool));
#if V10_THREADS
    int i, error = 0;
    sigset_t all, old;
    if (workers <= 0)
        return 0;
    pool->threads = (V10Worker *)calloc((size_t)workers, sizeof(V10Worker));
    if (pool->threads == NULL)
        return ENOMEM;
    if ((error = pthread_mutex_init(&pool->lock, NULL)) != 0) {
        free(pool->threads); pool->threads = NULL;
        return error;
    }
    if ((error = pthread_cond_init(&pool->wake, NULL)) != 0) {
        pthread_mutex_destroy(&pool->lock); free(pool->threads); pool->threads = NULL;
        return error;
    }
    if ((error = pthread_cond_init(&pool->done, NULL)) != 0) {
        pthread_cond_destroy(&pool->wake); pthread_mutex_destroy(&pool->lock);
        free(pool->threads); pool->threads = NULL;
        return error;
    }
    pool->owner = (long)getpid();
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (i = 0; i < workers; i++) {
        pool->threads[i].pool = pool;
        pool->threads[i].thread = i + 1;
        error = pthread_create(&pool->threads[i].id, NULL, v10_worker_main, &pool->threads[i]);
        if (error != 0)
            break;
        pool->workers = i + 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (error != 0) {
        /* the ones that started are stopped and joined: a failed start leaves no thread behind */
        pthread_mutex_lock(&pool->lock);
        pool->quit = 1;
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->lock);
        for (i = 0; i < pool->workers; i++)
            pthread_join(pool->threads[i].id, NULL);
        pthread_cond_destroy(&pool->done); pthread_cond_destroy(&pool->wake); pthread_mutex_destroy(&pool->lock);
        free(pool->threads);
        memset(pool, 0, sizeof(*pool));
        return error;
    }
    return 0;
#else
    (void)workers;
    return 0;
#endif
}

/* Whether this process is a fork of the one that started the workers: a child has the pool's memory but
   not its threads (nor a usable lock), so the caller forgets it and starts workers of its own. */
static int v10_pool_forked(V10Pool *pool) {
#if V10_THREADS
    return pool->workers > 0 && pool->owner != (long)getpid();
#else
    (void)pool;
    return 0;
#endif
}

/* The number the next job handed out will have. */
static inline int64_t v10_pool_next(V10Pool *pool) {
    return pool->job + 1;
}

/* Hand every worker the job; returns at once. */
static void v10_pool_dispatch(V10Pool *pool, v10_work work, void *state) {
#if V10_THREADS
    if (pool->workers == 0)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->work = work;
    pool->state = state;
    __atomic_store_n(&pool->pending, pool->workers, __ATOMIC_RELAXED);
    __atomic_store_n(&pool->job, pool->job + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
#else
    (void)pool; (void)work; (void)state;
#endif
}

/* Wait up to `milliseconds` for every worker to end its share of the job: 1 when they all have, 0 when
   the time ran out first (the caller checks for a signal and waits again). */
static int v10_pool_wait(V10Pool *pool, int milliseconds) {
#if V10_THREADS
    int spins, finished;
    struct timespec deadline;
    if (pool->workers == 0)
        return 1;
    for (spins = 0; spins < V10_SPINS; spins++) {  /* the last share usually ends within microseconds */
        if (__atomic_load_n(&pool->pending, __ATOMIC_ACQUIRE) == 0)
            break;
        v10_pause();
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += (long)milliseconds * 1000000L;
    deadline.tv_sec += deadline.tv_nsec / 1000000000L;
    deadline.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&pool->lock);
    while (pool->pending > 0) {
        if (pthread_cond_timedwait(&pool->done, &pool->lock, &deadline) == ETIMEDOUT)
            break;
    }
    finished = pool->pending == 0;
    pthread_mutex_unlock(&pool->lock);
    return finished;
#else
    (void)pool; (void)milliseconds;
    return 1;
#endif
}

/* Stop and join every worker (each ends the job it is on first); the pool is then empty. */
static void v10_pool_quit(V10Pool *pool) {
#if V10_THREADS
    int i;
    if (pool->threads == NULL)
        return;
    pthread_mutex_lock(&pool->lock);
    __atomic_store_n(&pool->quit, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (i = 0; i < pool->workers; i++)
        pthread_join(pool->threads[i].id, NULL);
    pthread_cond_destroy(&pool->done); pthread_cond_destroy(&pool->wake); pthread_mutex_destroy(&pool->lock);
    free(pool->threads);
#endif
    memset(pool, 0, sizeof(*pool));
}

#endif
