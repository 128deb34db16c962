/* pft/pft.c - see pft/pft.h */
#include "pft/pft.h"
#include "lib/util.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct pft_shared {
	pthread_mutex_t lock; /* with gate: threads wait until all exist */
	pthread_cond_t gate;
	int gate_state;		 /* 0 wait, 1 go, -1 stop (a thread did not start) */
	pthread_barrier_t ready; /* every thread has its region mapped */
	pthread_barrier_t done;	 /* every thread has written its region */
	size_t size;
	size_t page;
	unsigned iterations;
};

struct pft_worker {
	pthread_t tid;
	struct pft_shared *sh;
	double start, end, cpu; /* this iteration's writing loop */
	int err;		/* first errno; the thread then only keeps step */
};

double clock_seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double timeval_seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static void *pft_worker_main(void *arg)
{
	struct pft_worker *w = arg;
	struct pft_shared *sh = w->sh;

	pthread_mutex_lock(&sh->lock);
	while (sh->gate_state == 0)
		pthread_cond_wait(&sh->gate, &sh->lock);
	int go = sh->gate_state > 0;
	pthread_mutex_unlock(&sh->lock);
	if (!go)
		return NULL;

	for (unsigned i = 0; i < sh->iterations; i++) {
		char *p = MAP_FAILED;
		if (!w->err) {
			p = mmap(NULL, sh->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				w->err = errno;
			else
				(void)madvise(p, sh->size, MADV_NOHUGEPAGE); /* EINVAL without THP: fine */
		}
		pthread_barrier_wait(&sh->ready);
		if (p != MAP_FAILED) {
			volatile char *v = p;
			w->start = clock_seconds(CLOCK_MONOTONIC);
			double cpu0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
			for (size_t off = 0; off < sh->size; off += sh->page)
				v[off] = 1;
			w->cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
			w->end = clock_seconds(CLOCK_MONOTONIC);
		}
		pthread_barrier_wait(&sh->done);
		if (p != MAP_FAILED)
			munmap(p, sh->size);
	}
	return NULL;
}

double harmonic_mean(const double *v, size_t n)
{
	if (n == 0)
		return 0;
	double inv = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] > 0))
			return 0;
		inv += 1.0 / v[i];
	}
	return (double)n / inv;
}

int pft_run(unsigned threads, size_t size, unsigned iterations, pft_progress_fn progress, void *data,
	    struct pft_result *out)
{
	if (threads == 0 || iterations == 0 || size == 0)
		return -EINVAL;
	long pagesz = sysconf(_SC_PAGESIZE);
	struct pft_shared sh = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.gate = PTHREAD_COND_INITIALIZER,
		.page = pagesz > 0 ? (size_t)pagesz : 4096,
		.iterations = iterations,
	};
	sh.size = (size + sh.page - 1) / sh.page * sh.page;
	if (sh.size < size)
		return -EOVERFLOW;

	struct pft_result r = {
		.threads = threads,
		.iterations = iterations,
		.size = sh.size,
		.pages = sh.size / sh.page * threads,
		.faults_per_cpu = xcalloc(iterations, sizeof(double)),
		.faults_per_sec = xcalloc(iterations, sizeof(double)),
	};
	struct pft_worker *workers = xcalloc(threads, sizeof(*workers));
	int err = 0;
	unsigned started = 0;

	/* The caller takes part in both barriers: it paces the iterations. */
	pthread_barrier_init(&sh.ready, NULL, threads + 1);
	pthread_barrier_init(&sh.done, NULL, threads + 1);

	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	double t0 = clock_seconds(CLOCK_MONOTONIC);

	for (; started < threads; started++) {
		workers[started].sh = &sh;
		int e = pthread_create(&workers[started].tid, NULL, pft_worker_main, &workers[started]);
		if (e) {
			err = e;
			break;
		}
	}
	/* All or none: a thread that did not start would leave the others
	 * waiting at the barriers for ever, so they are sent home instead. */
	bool running = started == threads;
	pthread_mutex_lock(&sh.lock);
	sh.gate_state = running ? 1 : -1;
	pthread_cond_broadcast(&sh.gate);
	pthread_mutex_unlock(&sh.lock);

	for (unsigned i = 0; running && i < iterations; i++) {
		if (progress)
			progress(threads, i + 1, iterations, data);
		pthread_barrier_wait(&sh.ready);
		pthread_barrier_wait(&sh.done);
		double first = 0, last = 0, cpu = 0;
		bool any = false;
		for (unsigned t = 0; t < threads; t++) {
			const struct pft_worker *w = &workers[t];
			if (w->err)
				continue;
			if (!any || w->start < first)
				first = w->start;
			if (!any || w->end > last)
				last = w->end;
			cpu += w->cpu;
			any = true;
		}
		/* A clock too coarse to see the loop gives 0, and the harmonic
		 * mean then reports 0 rather than infinity. */
		r.faults_per_cpu[i] = cpu > 0 ? (double)r.pages / cpu : 0;
		r.faults_per_sec[i] = last > first ? (double)r.pages / (last - first) : 0;
	}
	for (unsigned t = 0; t < started; t++) {
		pthread_join(workers[t].tid, NULL);
		if (workers[t].err && !err)
			err = workers[t].err;
	}

	r.elapsed = clock_seconds(CLOCK_MONOTONIC) - t0;
	getrusage(RUSAGE_SELF, &ru1);
	r.user = timeval_seconds(ru1.ru_utime) - timeval_seconds(ru0.ru_utime);
	r.system = timeval_seconds(ru1.ru_stime) - timeval_seconds(ru0.ru_stime);
	r.hmean_faults_per_cpu = harmonic_mean(r.faults_per_cpu, r.iterations);
	r.hmean_faults_per_sec = harmonic_mean(r.faults_per_sec, r.iterations);

	pthread_barrier_destroy(&sh.ready);
	pthread_barrier_destroy(&sh.done);
	free(workers);
	if (err) {
		pft_result_free(&r);
		return -err;
	}
	*out = r;
	return 0;
}

void pft_result_free(struct pft_result *r)
{
	free(r->faults_per_cpu);
	free(r->faults_per_sec);
	r->faults_per_cpu = r->faults_per_sec = NULL;
}
