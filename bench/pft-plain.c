/* pft-plain.c - the plainest page-fault loop, as a yardstick for
 * `memcg-policy bench`: one thread maps a fresh private anonymous region,
 * turns THP off for it, writes one byte per page, unmaps it, and repeats.
 * Only the writing loop is timed, as in pft.
 *
 * Usage: pft-plain [SIZE-MiB [ITERATIONS]]   (default 256 and 5)
 * Prints faults/sec (pages over the wall time of the loops) and faults/cpu
 * (pages over the thread's CPU time in the loops). Both are totals over all
 * iterations, which for equal work is the harmonic mean of the iterations'
 * rates: the figure `memcg-policy bench` reports as Hmean ...-1.
 *
 * Build: make build/pft-plain */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 256;
	long iterations = argc > 2 ? atol(argv[2]) : 5;
	long page = sysconf(_SC_PAGESIZE);
	if (mib <= 0 || iterations <= 0) {
		fprintf(stderr, "usage: pft-plain [SIZE-MiB [ITERATIONS]]\n");
		return 2;
	}
	size_t size = (size_t)mib << 20;
	double wall = 0, cpu = 0;
	long pages = 0;

	for (long i = 0; i < iterations; i++) {
		char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("pft-plain: mmap");
			return 1;
		}
		madvise(p, size, MADV_NOHUGEPAGE);
		double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
		for (size_t off = 0; off < size; off += (size_t)page)
			((volatile char *)p)[off] = 1;
		cpu += seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
		wall += seconds(CLOCK_MONOTONIC) - w0;
		pages += (long)(size / (size_t)page);
		munmap(p, size);
	}
	printf("faults/sec %.4f\nfaults/cpu %.4f\n", (double)pages / wall, (double)pages / cpu);
	return 0;
}
