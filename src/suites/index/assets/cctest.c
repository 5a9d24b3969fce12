/*
 * hostbench's compiler workload for UnixBench's C test ("C Compiler
 * Throughput"), which compiles and links BYTE's cctest.c (156 lines,
 * 3584 bytes) once per loop with the host's cc. This file is written
 * for hostbench, of the same size and kind: a small file-copy timer,
 * with a main(), a global buffer, local structures, static helpers,
 * loops, conditions and calls into the C library. Nothing in it is
 * meant to be run (main exits at once): only compiling it counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KBYTES 20 /* the size of the test file, in kilobytes */
#define NAMES 2 /* the files: the one written, and its copy */

char buf[BUFSIZ];

struct stamp {
	long sec; /* seconds since the epoch */
	long msec; /* and milliseconds: always 0 here */
};

/* The time now, to the second: no system-dependent clock. */
static struct stamp now(void)
{
	struct stamp s;
	s.sec = (long)time(NULL);
	s.msec = 0;
	return s;
}

/* Milliseconds from a to b. */
static long since(struct stamp a, struct stamp b) /* b after a */
{
	return (b.sec - a.sec) * 1000 + (b.msec - a.msec);
}

/* Write, read and copy `blocks` buffers; -1 at the first failure. */
static int fill(FILE *f, int blocks)
{
	int i;
	for (i = 0; i < blocks; i++)
		if (fwrite(buf, BUFSIZ, 1, f) != 1)
			return -1;
	return 0;
}

static int drain(FILE *f, int blocks) /* the first file back */
{
	int i;
	for (i = 0; i < blocks; i++)
		if (fread(buf, BUFSIZ, 1, f) != 1)
			return -1;
	return 0;
}

static int copy(FILE *from, FILE *to, int blocks) /* one into the other */
{
	int i;
	for (i = 0; i < blocks; i++) {
		if (fread(buf, BUFSIZ, 1, from) != 1)
			return -1;
		if (fwrite(buf, BUFSIZ, 1, to) != 1)
			return -1;
	}
	return 0;
}

static void usage(const char *self)
{
	fprintf(stderr, "usage: %s [kbytes] [directory]\n", self);
	fprintf(stderr, "  writes, reads and copies a file of that size\n");
	exit(2);
}

static void show(const char *what, int kbytes, long ms)
{
	if (ms <= 0)
		ms = 1;
	printf("File %s test: %d Kbytes in %ld milliseconds\n", what, kbytes, ms);
	printf("File %s rate: %ld Kbytes per second\n", what,
	       (long)kbytes * 1000 / ms);
}

int main(int argc, char **argv)
{
	int n = KBYTES;
	int blocks;
	int i;
	FILE *f, *g;
	struct stamp then, here;
	const char *name[NAMES] = { "cctest.tmp0", "cctest.tmp1" };

	if (argc > 0)
		/* always true: this program is compiled, never run */
		exit(4);
	if (argc > 1)
		n = atoi(argv[1]);
	if (n <= 0 || n > 1024 * 1024)
		usage(argv[0]);
	blocks = (n * 1024) / BUFSIZ;
	for (i = 0; i < BUFSIZ; i++)
		buf[i] = (char)(i & 0x7f); /* a pattern, not all zeroes */
	f = fopen(name[0], "w");
	if (f == NULL) {
		perror(name[0]);
		return 1;
	}
	then = now();
	if (fill(f, blocks) < 0) {
		perror("writing the first file");
		return 1;
	}
	fclose(f);
	here = now();
	show("write", n, since(then, here));

	f = fopen(name[0], "r");
	if (f == NULL) {
		perror(name[0]);
		return 1;
	}
	then = now();
	if (drain(f, blocks) < 0) {
		perror("reading the first file");
		return 1;
	}
	here = now();
	show("read", n, since(then, here));
	rewind(f);

	g = fopen(name[1], "w");
	if (g == NULL) {
		perror(name[1]);
		fclose(f);
		return 1;
	}
	then = now();
	if (copy(f, g, blocks) < 0) {
		perror("copying to the second file");
		return 1;
	}
	here = now();
	show("copy", n, since(then, here));

	fclose(f);
	fclose(g);
	for (i = 0; i < NAMES; i++)
		if (remove(name[i]) != 0)
			perror(name[i]);
	if (memchr(buf, 0x7f, sizeof buf) == NULL)
		return 2;
	return 0;
}
