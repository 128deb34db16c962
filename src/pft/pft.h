/* pft/pft.h - the measuring engine of `memcg-policy bench`, in the manner
 * of mmtests' pft: N threads of this process each map a private anonymous
 * region, turn THP off for it (MADV_NOHUGEPAGE), write one byte per page,
 * and unmap it; repeated. Only the writing is timed, as in pft:
 *   faults/cpu = pages written / CPU seconds the threads spent writing
 *   faults/sec = pages written / wall seconds from the first thread's start
 *                to the last thread's end
 * one sample of each per iteration. Nothing is printed here. */
#pragma once

#include <stddef.h>
#include <time.h>

struct pft_result {
	unsigned threads;
	unsigned iterations;
	size_t size;		/* bytes per thread (a multiple of the page size) */
	size_t pages;		/* pages written per iteration, all threads */
	double *faults_per_cpu; /* one sample per iteration */
	double *faults_per_sec;
	double hmean_faults_per_cpu;
	double hmean_faults_per_sec;
	double user, system; /* getrusage(RUSAGE_SELF) over the whole run, seconds */
	double elapsed;	     /* wall seconds over the whole run */
};

/* A clock's time in seconds (CLOCK_MONOTONIC for intervals). */
double clock_seconds(clockid_t clock);

/* Called before each iteration (iteration counts from 1). */
typedef void (*pft_progress_fn)(unsigned threads, unsigned iteration, unsigned iterations, void *data);

/* Runs `iterations` iterations with `threads` threads, each faulting in
 * `size` bytes (rounded up to whole pages). Returns 0 or -errno (mmap or
 * thread creation failed; out->... then untouched). */
int pft_run(unsigned threads, size_t size, unsigned iterations, pft_progress_fn progress, void *data,
	    struct pft_result *out);
void pft_result_free(struct pft_result *r);

/* Harmonic mean of n positive values; 0 if n is 0 or any value is <= 0. */
double harmonic_mean(const double *v, size_t n);
