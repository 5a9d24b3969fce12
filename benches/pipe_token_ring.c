/*
 * The floor for `hostbench sched -r 0 -w 100 -c N -a 1`: N threads pass a one-byte token round
 * a ring of pipes, each reading its own pipe and writing its successor's, with no compute, no
 * yield and no bookkeeping but a per-thread round count. Prints microseconds per round (wall
 * time / rounds of all threads), the figure hostbench reports.
 *
 *   cc -O2 -pthread -o pipe_token_ring benches/pipe_token_ring.c
 *   ./pipe_token_ring SECONDS [THREADS [pin]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAXT 64

static int fds[MAXT][2];
static int nthreads;
static int pin;
static atomic_int stop;
static unsigned long long rounds[MAXT];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *member(void *arg)
{
	long i = (long)arg;
	int own = fds[i][0], next = fds[(i + 1) % nthreads][1];
	char b = 1;
	unsigned long long n = 0;

	if (pin) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(0, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	while (read(own, &b, 1) == 1 && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		n++;
		if (write(next, &b, 1) != 1)
			break;
	}
	rounds[i] = n;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	pthread_t t[MAXT];
	unsigned long long total = 0;
	double start, wall;
	char b = 1;
	int i;

	nthreads = argc > 2 ? atoi(argv[2]) : 2;
	pin = argc > 3;
	if (nthreads < 1 || nthreads > MAXT)
		return 2;
	for (i = 0; i < nthreads; i++)
		if (pipe(fds[i]))
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, member, (void *)(long)i);
	start = now();
	if (write(fds[0][1], &b, 1) != 1)
		return 1;
	usleep((useconds_t)(seconds * 1e6));
	atomic_store(&stop, 1);
	wall = now() - start;
	for (i = 0; i < nthreads; i++)
		if (write(fds[i][1], &b, 1) != 1)
			return 1;
	for (i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		total += rounds[i];
	}
	printf("%.3f\n", wall * 1e6 / total);
	return 0;
}
