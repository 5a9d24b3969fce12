/*
 * hostbench's C versions of the UnixBench tests that UnixBench compiles with the host's own
 * compiler and flags: Dhrystone 2 (dhry2reg), the double-precision Whetstone, the arithmetic
 * loops (arithoh, short, int, long, float, double), the Tower of Hanoi, and the process tests
 * spawn and execl. hostbench writes this file, dhry_2.c and dhry.h into its cache directory and
 * builds there, with the host's cc and UnixBench's flags (-O3 -ffast-math -march=native
 * -mtune=native), one program per test as UnixBench's Makefile does: -DHB_NAME selects the
 * program's code, Dhrystone is two translation units (with dhry_2.c), and only Whetstone links
 * the maths library (a library more makes every fork and exec of spawn and execl dearer). Their
 * raw scores depend on the compiler exactly as UnixBench's do.
 *
 *   dhry2reg dhry2reg DEADLINE_NS
 *   whetstone whetstone SECONDS
 *   arith arith overhead|short|int|long|float|double DEADLINE_NS
 *   hanoi hanoi DEADLINE_NS
 *   spawn spawn DEADLINE_NS
 *   execl execl START_NS DEADLINE_NS COUNT
 *
 * Deadlines are CLOCK_MONOTONIC nanoseconds. Each program ends with the worker protocol's line,
 * `report {"count":C,"timebase":T,"time_s":S}` (timebase 0: the count is a rate), or `error
 * MESSAGE` when a self-check fails: nothing can be optimised away unnoticed.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

__attribute__((unused)) static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

__attribute__((unused)) static void report(double count, double timebase, double seconds)
{
	printf("report {\"count\":%.6f,\"timebase\":%g,\"time_s\":%.6f}\n", count, timebase, seconds);
	fflush(stdout);
}

__attribute__((unused)) static int fail(const char *what)
{
	printf("error %s\n", what);
	fflush(stdout);
	return 1;
}

#ifdef HB_dhry2reg
/* ---- Dhrystone 2.1 (Weicker), with its record, globals, strings and arrays. ---- */

/* As in Dhrystone's own two files: this one has the main loop and Proc_1..5, dhry_2.c has
 * Proc_6..8 and Func_1..3, compiled apart, so the compiler knows nothing of them here. */
#include "dhry.h"

struct record *ptr_glob, *next_ptr_glob;
int int_glob;
int bool_glob;
char ch_1_glob, ch_2_glob;
int arr_1_glob[50];
int arr_2_glob[50][50];

void proc_3(struct record **ref)
{
	if (ptr_glob != NULL)
		*ref = ptr_glob->ptr_comp;
	proc_7(10, int_glob, &ptr_glob->int_comp);
}

void proc_1(struct record *val)
{
	struct record *next = val->ptr_comp;
	*val->ptr_comp = *ptr_glob;
	val->int_comp = 5;
	next->int_comp = val->int_comp;
	next->ptr_comp = val->ptr_comp;
	proc_3(&next->ptr_comp);
	if (next->discr == IDENT_1) {
		next->int_comp = 6;
		proc_6(val->enum_comp, &next->enum_comp);
		next->ptr_comp = ptr_glob->ptr_comp;
		proc_7(next->int_comp, 10, &next->int_comp);
	} else {
		*val = *val->ptr_comp;
	}
}

void proc_2(int *ref)
{
	int loc = *ref + 10;
	ident e = IDENT_2;
	do {
		if (ch_1_glob == 'A') {
			loc -= 1;
			*ref = loc - int_glob;
			e = IDENT_1;
		}
	} while (e != IDENT_1);
}

void proc_4(void)
{
	int loc = ch_1_glob == 'A';
	bool_glob = loc | bool_glob;
	ch_2_glob = 'B';
}

void proc_5(void)
{
	ch_1_glob = 'A';
	bool_glob = 0;
}

static int dhry2reg(unsigned long long deadline)
{
	char str_1[31], str_2[31];
	int int_1 = 0, int_2 = 0, int_3 = 0;
	ident enum_loc = IDENT_1;
	char ch;
	long runs = 0, run;
	unsigned long long start = now_ns();

	next_ptr_glob = malloc(sizeof(struct record));
	ptr_glob = malloc(sizeof(struct record));
	if (!next_ptr_glob || !ptr_glob)
		return fail("Dhrystone: out of memory");
	ptr_glob->ptr_comp = next_ptr_glob;
	ptr_glob->discr = IDENT_1;
	ptr_glob->enum_comp = IDENT_3;
	ptr_glob->int_comp = 40;
	strcpy(ptr_glob->str_comp, "DHRYSTONE PROGRAM, SOME STRING");
	strcpy(str_1, "DHRYSTONE PROGRAM, 1'ST STRING");
	arr_2_glob[8][7] = 10;

	while (now_ns() < deadline) {
		for (run = runs + 1; run <= runs + 10000; ++run) {
			proc_5();
			proc_4();
			int_1 = 2;
			int_2 = 3;
			strcpy(str_2, "DHRYSTONE PROGRAM, 2'ND STRING");
			enum_loc = IDENT_2;
			bool_glob = !func_2(str_1, str_2);
			while (int_1 < int_2) {
				int_3 = 5 * int_1 - int_2;
				proc_7(int_1, int_2, &int_3);
				int_1 += 1;
			}
			proc_8(arr_1_glob, arr_2_glob, int_1, int_3);
			proc_1(ptr_glob);
			for (ch = 'A'; ch <= ch_2_glob; ++ch)
				if (enum_loc == func_1(ch, 'C')) {
					proc_6(IDENT_1, &enum_loc);
					strcpy(str_2, "DHRYSTONE PROGRAM, 3'RD STRING");
					int_2 = run;
					int_glob = run;
				}
			int_2 = int_2 * int_1;
			int_1 = int_2 / int_3;
			int_2 = 7 * (int_2 - int_3) - int_1;
			proc_2(&int_1);
		}
		runs += 10000;
	}
	/* The values Dhrystone's own report says a correct run prints. */
	if (int_glob != 5 || !bool_glob || ch_1_glob != 'A' || ch_2_glob != 'B' ||
	    arr_1_glob[8] != 7 || arr_2_glob[8][7] != (int)(unsigned)(runs + 10) ||
	    ptr_glob->discr != IDENT_1 || ptr_glob->enum_comp != IDENT_3 ||
	    ptr_glob->int_comp != 17 || next_ptr_glob->discr != IDENT_1 ||
	    next_ptr_glob->enum_comp != IDENT_2 || next_ptr_glob->int_comp != 18 ||
	    int_1 != 5 || int_2 != 13 || int_3 != 7 || enum_loc != IDENT_2 ||
	    strcmp(str_2, "DHRYSTONE PROGRAM, 2'ND STRING") != 0 ||
	    strcmp(next_ptr_glob->str_comp, "DHRYSTONE PROGRAM, SOME STRING") != 0)
		return fail("Dhrystone self-check failed");
	report((double)runs, 1, (now_ns() - start) / 1e9);
	return 0;
}
#endif

#ifdef HB_whetstone
/* ---- The double-precision Whetstone (Curnow and Wichmann; Longbottom's self-timing C). ---- */

/* As whets.c: the procedures in the same file, which the compiler may inline, and no barrier
 * inside a loop (sections 4 and 7 reach a fixed point, and compilers hoist them, there as
 * here). */

static double user_seconds(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6;
}

static double t, t1, t2, e1[4];
static int j, k, l;

void pa(double e[4])
{
	int n;
	for (n = 0; n < 6; n++) {
		e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
		e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
		e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
		e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
	}
}

void po(void)
{
	e1[j] = e1[k];
	e1[k] = e1[l];
	e1[l] = e1[j];
}

void p3(double *x, double *y, double *z)
{
	double x1 = *y, y1 = *z;
	x1 = t * (x1 + y1);
	y1 = t1 * (x1 + y1);
	*x = x1;
	*y = y1;
	*z = (x1 + y1) / t2;
}

/* Every section `xtra` times with inner loops of x100 times the section constants; returns the
 * user time used (the first section's a tenth, as the original counts it) and the check sum. */
static double whetstones(long xtra, long x100, double *check)
{
	long n1 = 12 * x100, n2 = 14 * x100, n3 = 345 * x100, n4 = 210 * x100;
	long n5 = 32 * x100, n6 = 899 * x100, n7 = 616 * x100, n8 = 93 * x100;
	long n1mult = 10, ix, i;
	double t0, x, y, z, used = 0, start;

	t = 0.49999975;
	t0 = t;
	t1 = 0.50000025;
	t2 = 2.0;
	*check = 0;

	e1[0] = 1.0; e1[1] = -1.0; e1[2] = -1.0; e1[3] = -1.0;
	start = user_seconds();
	for (ix = 0; ix < xtra; ix++) {
		for (i = 0; i < n1 * n1mult; i++) {
			e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
			e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
			e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
			e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
		}
		t = 1.0 - t;
	}
	t = t0;
	used += (user_seconds() - start) / n1mult;
	*check += e1[3];

	start = user_seconds();
	for (ix = 0; ix < xtra; ix++) {
		for (i = 0; i < n2; i++)
			pa(e1);
		t = 1.0 - t;
	}
	t = t0;
	used += user_seconds() - start;
	*check += e1[3];

	j = 1;
	start = user_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n3; i++) {
			j = j == 1 ? 2 : 3;
			j = j > 2 ? 0 : 1;
			j = j < 1 ? 1 : 0;
		}
	used += user_seconds() - start;
	*check += j;

	j = 1; k = 2; l = 3;
	start = user_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n4; i++) {
			j = j * (k - j) * (l - k);
			k = l * k - (l - j) * k;
			l = (l - k) * (k + j);
			e1[l - 2] = j + k + l;
			e1[k - 2] = j * k * l;
		}
	used += user_seconds() - start;
	*check += e1[0] + e1[1];

	x = 0.5;
	y = 0.5;
	start = user_seconds();
	for (ix = 0; ix < xtra; ix++) {
		for (i = 1; i < n5; i++) {
			x = t * atan(t2 * sin(x) * cos(x) / (cos(x + y) + cos(x - y) - 1.0));
			y = t * atan(t2 * sin(y) * cos(y) / (cos(x + y) + cos(x - y) - 1.0));
		}
		t = 1.0 - t;
	}
	t = t0;
	used += user_seconds() - start;
	*check += y;

	x = 1.0; y = 1.0; z = 1.0;
	start = user_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n6; i++)
			p3(&x, &y, &z);
	used += user_seconds() - start;
	*check += z;

	j = 0; k = 1; l = 2;
	e1[0] = 1.0; e1[1] = 2.0; e1[2] = 3.0;
	start = user_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n7; i++)
			po();
	used += user_seconds() - start;
	*check += e1[2];

	x = 0.75;
	start = user_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n8; i++)
			x = sqrt(exp(log(x) / t1));
	used += user_seconds() - start;
	*check += x;
	return used;
}

static int whetstone(double seconds)
{
	long x100 = 100, xtra = 1;
	double used = 0, check;
	int tries;
	/* Calibration as whets.c under UnixBench: five times more passes until a run takes over
	 * half a second (at most ten tries), then enough passes for the requested time. */
	for (tries = 0; tries < 10; tries++) {
		used = whetstones(xtra, x100, &check);
		if (used > 0.5)
			break;
		xtra *= 5;
	}
	if (used > 0)
		xtra = (long)(seconds * xtra / used);
	if (xtra < 1)
		xtra = 1;
	used = whetstones(xtra, x100, &check);
	if (!(used > 0) || check == 0 || !isfinite(check))
		return fail("Whetstone: wrong answer (check value zero or not finite)");
	report(xtra * x100 / (10.0 * used), 0, used);
	return 0;
}
#endif

#ifdef HB_arith
/* ---- arith.c: sums i*i / (i*i - 1) for i in 2..101 in a type; arithoh: the bare loop. ---- */

static volatile int arith_top = 101;

#define DUMB(name, type)                                                \
	NOINLINE static long name(long seed)                            \
	{                                                               \
		type x = 0, y = 0, z = 0;                               \
		int i, top = arith_top;                                 \
		for (i = 2; i <= top; i++) {                            \
			x = (type)i;                                    \
			y = x * x;                                      \
			z += y / (y - 1);                               \
		}                                                       \
		return (long)(x + y + z) + seed;                        \
	}
DUMB(dumb_short, short)
DUMB(dumb_int, int)
DUMB(dumb_long, long)
DUMB(dumb_float, float)
DUMB(dumb_double, double)

NOINLINE static long dumb_overhead(long seed)
{
	int i, top = arith_top;
	for (i = 2; i <= top; i++)
		__asm__ volatile("" : : "r"(i));
	return seed;
}

static int arith(const char *kind, unsigned long long deadline)
{
	long (*f)(long) = NULL, loops = 0, result = 0, i;
	unsigned long long start = now_ns();
	if (!strcmp(kind, "overhead")) f = dumb_overhead;
	else if (!strcmp(kind, "short")) f = dumb_short;
	else if (!strcmp(kind, "int")) f = dumb_int;
	else if (!strcmp(kind, "long")) f = dumb_long;
	else if (!strcmp(kind, "float")) f = dumb_float;
	else if (!strcmp(kind, "double")) f = dumb_double;
	else return fail("arith: unknown kind");
	while (now_ns() < deadline) {
		for (i = 0; i < 10000; i++)
			result = f(result & 0xff) & 0xffff;
		loops += 10000;
	}
	__asm__ volatile("" : : "r"(result));
	report((double)loops, 1, (now_ns() - start) / 1e9);
	return 0;
}
#endif

#ifdef HB_hanoi
/* ---- hanoi.c: the Tower of Hanoi's 10 discs, recursively. ---- */

static long moves;

NOINLINE static void mov(int n, int from, int to)
{
	if (n == 1) {
		moves++;
		return;
	}
	mov(n - 1, from, 6 - from - to);
	moves++;
	mov(n - 1, 6 - from - to, to);
}

static int hanoi(unsigned long long deadline)
{
	long loops = 0;
	unsigned long long start = now_ns();
	while (now_ns() < deadline) {
		moves = 0;
		mov(10, 1, 3);
		if (moves != 1023)
			return fail("Tower of Hanoi: wrong number of moves");
		loops++;
	}
	report((double)loops, 1, (now_ns() - start) / 1e9);
	return 0;
}
#endif

/* ---- spawn.c: forking a child that exits at once (with exit(), as spawn.c's does). ---- */

#ifdef HB_spawn
static int spawn(unsigned long long deadline)
{
	long loops = 0;
	int status;
	unsigned long long start = now_ns();
	while (now_ns() < deadline) {
		pid_t pid = fork();
		if (pid < 0)
			return fail("spawn: fork failed");
		if (pid == 0)
			exit(0);
		if (waitpid(pid, &status, 0) != pid)
			return fail("spawn: waitpid failed");
		loops++;
	}
	report((double)loops, 1, (now_ns() - start) / 1e9);
	return 0;
}
#endif

/* ---- execl.c: a chain of execs of the program itself. ---- */

#ifdef HB_execl
static int execl_chain(const char *self, const char *start_s, const char *deadline_s,
		       const char *count_s)
{
	unsigned long long start = strtoull(start_s, NULL, 10);
	unsigned long long deadline = strtoull(deadline_s, NULL, 10);
	unsigned long long now = now_ns();
	long count = strtol(count_s, NULL, 10);
	char next[32];
	if (now >= deadline) {
		report((double)count, 1, (now - start) / 1e9);
		return 0;
	}
	snprintf(next, sizeof next, "%ld", count + 1);
	execl(self, self, "execl", start_s, deadline_s, next, (char *)NULL);
	return fail("execl: exec failed");
}
#endif

int main(int argc, char **argv)
{
#ifdef HB_dhry2reg
	if (argc == 3 && !strcmp(argv[1], "dhry2reg"))
		return dhry2reg(strtoull(argv[2], NULL, 10));
#endif
#ifdef HB_whetstone
	if (argc == 3 && !strcmp(argv[1], "whetstone"))
		return whetstone(atof(argv[2]));
#endif
#ifdef HB_arith
	if (argc == 4 && !strcmp(argv[1], "arith"))
		return arith(argv[2], strtoull(argv[3], NULL, 10));
#endif
#ifdef HB_hanoi
	if (argc == 3 && !strcmp(argv[1], "hanoi"))
		return hanoi(strtoull(argv[2], NULL, 10));
#endif
#ifdef HB_spawn
	if (argc == 3 && !strcmp(argv[1], "spawn"))
		return spawn(strtoull(argv[2], NULL, 10));
#endif
#ifdef HB_execl
	if (argc == 5 && !strcmp(argv[1], "execl"))
		return execl_chain(argv[0], argv[2], argv[3], argv[4]);
#endif
	(void)argc;
	(void)argv;
	fprintf(stderr, "usage: dhry2reg|whetstone|arith KIND|hanoi|spawn|execl ...\n");
	return 2;
}
