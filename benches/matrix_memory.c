/*
 * How fast schbench's request math runs here from fresh and from written memory. Written for
 * hostbench (it is not schbench's code): the naive product of two side x side matrices of
 * unsigned long into a third, the three in one buffer, as docs/wakeup.md describes schbench's
 * (gcc -O2 keeps the running sum in a register and stores it at every step).
 *
 *   cc -O2 -o matrix_memory benches/matrix_memory.c
 *   ./matrix_memory SIDE OFFSET...
 *
 * For each OFFSET (bytes into a page), two buffers of 3 x SIDE^2 elements in fresh mappings:
 * one never written but by the product, so its two factors read the kernel's zero page (as
 * schbench's malloc'd matrices do), and one written with zeros first (as calloc does where it
 * clears memory). Prints `SIDE OFFSET fresh_us written_us`: the fastest of 7 timings of 5
 * products each, alternating which buffer goes first. scripts/matrix-memory.sh runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void __attribute__((noinline)) product(unsigned long *data, unsigned long side)
{
	unsigned long *a = data, *b = data + side * side, *c = data + 2 * side * side;

	for (unsigned long i = 0; i < side; i++)
		for (unsigned long j = 0; j < side; j++) {
			c[i * side + j] = 0;
			for (unsigned long k = 0; k < side; k++)
				c[i * side + j] += a[i * side + k] * b[k * side + j];
		}
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double five_products(unsigned long *d, unsigned long side)
{
	double t0 = now_us();

	for (int n = 0; n < 5; n++)
		product(d, side);
	return (now_us() - t0) / 5;
}

static unsigned long *fresh(size_t bytes, long offset)
{
	char *map = mmap(NULL, bytes + offset, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return (unsigned long *)(map + offset);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: matrix_memory SIDE OFFSET...\n");
		return 2;
	}
	unsigned long side = strtoul(argv[1], NULL, 0);
	if (side < 1 || side > 4096) {
		fprintf(stderr, "matrix_memory: SIDE must be 1 to 4096\n");
		return 2;
	}
	size_t bytes = 3 * sizeof(unsigned long) * side * side;

	for (int arg = 2; arg < argc; arg++) {
		long offset = strtol(argv[arg], NULL, 0);
		if (offset < 0 || offset > 4095) {
			fprintf(stderr, "matrix_memory: OFFSET must be 0 to 4095\n");
			return 2;
		}
		unsigned long *zero_page = fresh(bytes, offset);
		unsigned long *written = fresh(bytes, offset);
		memset(written, 0, bytes);
		double best_fresh = 1e18, best_written = 1e18;
		for (int r = 0; r < 7; r++) {
			double f, w;
			if (r % 2) {
				w = five_products(written, side);
				f = five_products(zero_page, side);
			} else {
				f = five_products(zero_page, side);
				w = five_products(written, side);
			}
			best_fresh = f < best_fresh ? f : best_fresh;
			best_written = w < best_written ? w : best_written;
		}
		printf("%lu %ld %.0f %.0f\n", side, offset, best_fresh, best_written);
		munmap((char *)zero_page - offset, bytes + offset);
		munmap((char *)written - offset, bytes + offset);
	}
	return 0;
}
