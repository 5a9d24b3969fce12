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
 *   arithoh|arith_short|arith_int|arith_long|arith_float|arith_double DEADLINE_NS
 *       (built with -DHB_arith and -Darithoh or -Ddatum=TYPE, one program each)
 *   hanoi hanoi DEADLINE_NS
 *   spawn spawn DEADLINE_NS
 *   execl execl START_NS DEADLINE_NS COUNT
 *
 * Deadlines are CLOCK_MONOTONIC nanoseconds. Each program ends with the worker protocol's line,
 * `report {"count":C,"timebase":T,"time_s":S}` (timebase 0: the count is a rate), or `error
 * MESSAGE` when a self-check fails. The arithmetic tests have no self-check: UnixBench's arith.c
 * lets the compiler drop the arithmetic, and so do they (see there).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <signal.h>
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

#if defined(HB_dhry2reg) || defined(HB_arith) || defined(HB_hanoi)
/* dhry_1.c, arith.c and hanoi.c loop for ever and are ended by alarm(): SIGALRM's handler
 * prints the count and exits, so the timed loop holds nothing but the work and its counter. Here the alarm rings
 * at the copy's deadline (setitimer, to the microsecond); the handler writes the worker
 * protocol's line with write(2) and leaves with _exit. */
static volatile unsigned long long loop_start;

static void report_and_exit(double count)
{
	char line[160];
	int n = snprintf(line, sizeof line, "report {\"count\":%.0f,\"timebase\":1,\"time_s\":%.6f}\n",
			 count, (now_ns() - loop_start) / 1e9);
	if (n > 0 && write(1, line, (size_t)n) != n)
		_exit(1);
	_exit(0);
}

static void ring_at(unsigned long long deadline, void (*handler)(int))
{
	struct itimerval when = { { 0, 0 }, { 0, 0 } };
	unsigned long long now = now_ns();
	unsigned long long left = deadline > now ? deadline - now : 1000;
	when.it_value.tv_sec = (time_t)(left / 1000000000ULL);
	when.it_value.tv_usec = (suseconds_t)(left % 1000000000ULL / 1000);
	if (when.it_value.tv_sec == 0 && when.it_value.tv_usec == 0)
		when.it_value.tv_usec = 1;
	signal(SIGALRM, handler);
	loop_start = now;
	setitimer(ITIMER_REAL, &when, NULL);
}
#endif

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

/* dhry_1.c's Run_Index: a global, so the loop keeps its count in memory, as there. */
unsigned long run_index;

/* At the alarm: the values that hold at every point of an iteration after the first (those
 * Dhrystone's own report lists as what a correct run prints; Proc_1 sets the record's Int_Comp
 * to 5 before Proc_3 makes it 17), so a build that broke the benchmark fails; arr_2_glob[8][7]
 * gains one an iteration from 10, so it counts the runs. */
static void dhry_alarm(int sig)
{
	unsigned long runs = run_index;
	unsigned counted = (unsigned)arr_2_glob[8][7] - 10u;
	(void)sig;
	if (runs > 1 &&
	    (ch_1_glob != 'A' || ch_2_glob != 'B' || int_glob != 5 || arr_1_glob[8] != 7 ||
	     (counted != (unsigned)runs && counted != (unsigned)(runs - 1)) ||
	     ptr_glob->discr != IDENT_1 || ptr_glob->enum_comp != IDENT_3 ||
	     (ptr_glob->int_comp != 17 && ptr_glob->int_comp != 5) ||
	     next_ptr_glob->discr != IDENT_1 ||
	     strcmp(next_ptr_glob->str_comp, "DHRYSTONE PROGRAM, SOME STRING") != 0)) {
		static const char line[] = "error Dhrystone self-check failed\n";
		if (write(1, line, sizeof line - 1) < 0) {
			/* Nothing more can be said: the exit status says it. */
		}
		_exit(1);
	}
	report_and_exit((double)runs);
}

/* The main loop is main itself, as in dhry_1.c: GCC compiles main as code that runs once and
 * inlines into it only what makes it smaller, so Proc_1 stays a call there, and here. The loop
 * runs until the alarm rings at the copy's deadline. */
int main(int argc, char **argv)
{
	char str_1[31], str_2[31];
	int int_1, int_2, int_3;
	ident enum_loc;
	char ch;

	if (argc != 3 || strcmp(argv[1], "dhry2reg") != 0) {
		fprintf(stderr, "usage: dhry2reg DEADLINE_NS\n");
		return 2;
	}
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

	run_index = 0;
	ring_at(strtoull(argv[2], NULL, 10), dhry_alarm);
	for (run_index = 1;; ++run_index) {
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
				int_2 = run_index;
				int_glob = run_index;
			}
		int_2 = int_2 * int_1;
		int_1 = int_2 / int_3;
		int_2 = 7 * (int_2 - int_3) - int_1;
		proc_2(&int_1);
	}
}
#endif

#ifdef HB_whetstone
/* ---- The double-precision Whetstone (Curnow and Wichmann; Longbottom's self-timing C). ---- */

/* Laid out as whets.c, since what the compiler makes of it depends on the layout: the section
 * loops' variables are locals of whetstones() (j, k and l are longs), the three procedures take
 * them as parameters and sit in the same file (the compiler may inline them), p3 works through
 * its pointers in whets.c's order, and after each section a procedure of its own adds the
 * section's time and check value to file-level totals (whets.c's pout). No barrier inside a
 * loop (sections 4 and 7 reach a fixed point, and compilers hoist them, there as here). */

/* UnixBench's Makefile builds whets.c with -DGTODay: its sections are timed by the wall clock
 * (gettimeofday), not by the CPU time used, so time the process spends preempted or stopped
 * counts against it, as in every other UnixBench test. */
static double wall_seconds(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static double time_used, check_sum;

void pa(double e[4], double t, double t2)
{
	long n;
	for (n = 0; n < 6; n++) {
		e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
		e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
		e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
		e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
	}
}

void po(double e[4], long j, long k, long l)
{
	e[j] = e[k];
	e[k] = e[l];
	e[l] = e[j];
}

void p3(double *x, double *y, double *z, double t, double t1, double t2)
{
	*x = *y;
	*y = *z;
	*x = t * (*x + *y);
	*y = t1 * (*x + *y);
	*z = (*x + *y) / t2;
}

/* After each section, outside its timing: its time and check value into the totals. */
void section_done(double check, double seconds)
{
	check_sum += check;
	time_used += seconds;
}

/* Every section `xtra` times with inner loops of x100 times the section constants; adds the
 * wall-clock time used (the first section's a tenth, as the original counts it) and the check
 * values to the totals. */
static void whetstones(long xtra, long x100)
{
	long n1 = 12 * x100, n2 = 14 * x100, n3 = 345 * x100, n4 = 210 * x100;
	long n5 = 32 * x100, n6 = 899 * x100, n7 = 616 * x100, n8 = 93 * x100;
	long n1mult = 10, i, ix, j, k, l;
	double x, y, z, e1[4], start, seconds;
	double t = 0.49999975, t0 = t, t1 = 0.50000025, t2 = 2.0;

	check_sum = 0;

	e1[0] = 1.0; e1[1] = -1.0; e1[2] = -1.0; e1[3] = -1.0;
	start = wall_seconds();
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
	seconds = (wall_seconds() - start) / n1mult;
	section_done(e1[3], seconds);

	start = wall_seconds();
	for (ix = 0; ix < xtra; ix++) {
		for (i = 0; i < n2; i++)
			pa(e1, t, t2);
		t = 1.0 - t;
	}
	t = t0;
	seconds = wall_seconds() - start;
	section_done(e1[3], seconds);

	j = 1;
	start = wall_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n3; i++) {
			j = j == 1 ? 2 : 3;
			j = j > 2 ? 0 : 1;
			j = j < 1 ? 1 : 0;
		}
	seconds = wall_seconds() - start;
	section_done((double)j, seconds);

	j = 1; k = 2; l = 3;
	start = wall_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n4; i++) {
			j = j * (k - j) * (l - k);
			k = l * k - (l - j) * k;
			l = (l - k) * (k + j);
			e1[l - 2] = j + k + l;
			e1[k - 2] = j * k * l;
		}
	seconds = wall_seconds() - start;
	x = e1[0] + e1[1];
	section_done(x, seconds);

	x = 0.5;
	y = 0.5;
	start = wall_seconds();
	for (ix = 0; ix < xtra; ix++) {
		for (i = 1; i < n5; i++) {
			x = t * atan(t2 * sin(x) * cos(x) / (cos(x + y) + cos(x - y) - 1.0));
			y = t * atan(t2 * sin(y) * cos(y) / (cos(x + y) + cos(x - y) - 1.0));
		}
		t = 1.0 - t;
	}
	t = t0;
	seconds = wall_seconds() - start;
	section_done(y, seconds);

	x = 1.0; y = 1.0; z = 1.0;
	start = wall_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n6; i++)
			p3(&x, &y, &z, t, t1, t2);
	seconds = wall_seconds() - start;
	section_done(z, seconds);

	j = 0; k = 1; l = 2;
	e1[0] = 1.0; e1[1] = 2.0; e1[2] = 3.0;
	start = wall_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n7; i++)
			po(e1, j, k, l);
	seconds = wall_seconds() - start;
	section_done(e1[2], seconds);

	x = 0.75;
	start = wall_seconds();
	for (ix = 0; ix < xtra; ix++)
		for (i = 0; i < n8; i++)
			x = sqrt(exp(log(x) / t1));
	seconds = wall_seconds() - start;
	section_done(x, seconds);
}

static int whetstone(double seconds)
{
	long x100 = 100, xtra = 1;
	int tries;
	/* Calibration as whets.c under UnixBench: five times more passes until a run takes over
	 * half a second (at most ten tries), then enough passes for the requested time. */
	for (tries = 0; tries < 10; tries++) {
		time_used = 0;
		whetstones(xtra, x100);
		if (time_used > 0.5)
			break;
		xtra *= 5;
	}
	if (time_used > 0)
		xtra = (long)(seconds * xtra / time_used);
	if (xtra < 1)
		xtra = 1;
	time_used = 0;
	whetstones(xtra, x100);
	if (!(time_used > 0) || check_sum == 0 || !isfinite(check_sum))
		return fail("Whetstone: wrong answer (check value zero or not finite)");
	report(xtra * x100 / (10.0 * time_used), 0, time_used);
	return 0;
}
#endif

#ifdef HB_arith
/* ---- arith.c: sum i*i / (i*i - 1) for i in 2..101 in the type `datum`; arithoh: the bare
 * loop. Built as UnixBench builds it: one program per type (-Ddatum=TYPE, or -Darithoh), the
 * summing function beside the loop that calls it, its argument overwritten by the loop and its
 * result fed back in and never looked at. At UnixBench's flags the compiler may drop the
 * arithmetic altogether: GCC 12 at -O3 -ffast-math keeps, for every type, the counter's
 * increment and an empty 100-step loop (arithoh: the increment alone). Whatever the compiler
 * makes of it, the figure is what UnixBench's arith programs measure with the same compiler;
 * the report's note and docs/index.md say so. ---- */
volatile unsigned long arith_loops;

int arith_sum(int i)
{
#ifndef arithoh
	datum x = 0, y = 0, z = 0;
#endif
	for (i = 2; i <= 101; i++) {
#ifndef arithoh
		x = i;
		y = x * x;
		z += y / (y - 1);
#endif
	}
#ifndef arithoh
	return x + y + z;
#else
	return 0;
#endif
}

static void arith_alarm(int sig)
{
	(void)sig;
	report_and_exit((double)arith_loops);
}

static int arith(unsigned long long deadline)
{
	int result = 0;
	arith_loops = 0;
	ring_at(deadline, arith_alarm);
	for (;;) {
		++arith_loops;
		result = arith_sum(result);
	}
}
#endif

#ifdef HB_hanoi
/* ---- hanoi.c: the Tower of Hanoi's 10 discs, over and over. As in hanoi.c, a move is
 * mov(1, from, to), which takes a disc off one peg's count and puts it on another's, and the
 * middle move of every level is such a call; the counter is a plain global the alarm's handler
 * reads. ---- */
unsigned long hanoi_loops;
int pegs[4];

void hanoi_move(int n, int from, int to)
{
	int spare;
	if (n == 1) {
		pegs[from]--;
		pegs[to]++;
		return;
	}
	spare = 6 - (from + to);
	hanoi_move(n - 1, from, spare);
	hanoi_move(1, from, to);
	hanoi_move(n - 1, spare, to);
}

static void hanoi_alarm(int sig)
{
	/* Every finished loop moved 10 discs from peg 1 to peg 3; one loop may be under way. */
	long on_3 = pegs[3], want = 10L * (long)hanoi_loops;
	int total = pegs[1] + pegs[2] + pegs[3];
	(void)sig;
	if ((total != 10 && total != 9) || on_3 < want - 10 || on_3 > want + 10) {
		static const char msg[] = "error Tower of Hanoi: the discs moved wrongly\n";
		if (write(1, msg, sizeof msg - 1) < 0)
			_exit(1);
		_exit(1);
	}
	report_and_exit((double)hanoi_loops);
}

static int hanoi(unsigned long long deadline)
{
	pegs[1] = 10;
	ring_at(deadline, hanoi_alarm);
	for (;;) {
		hanoi_move(10, 1, 3);
		hanoi_loops++;
	}
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

/* Every program but Dhrystone, whose main is its loop (above). */
#ifndef HB_dhry2reg
int main(int argc, char **argv)
{
#ifdef HB_whetstone
	if (argc == 3 && !strcmp(argv[1], "whetstone"))
		return whetstone(atof(argv[2]));
#endif
#ifdef HB_arith
	if (argc == 3 && !strncmp(argv[1], "arith", 5))
		return arith(strtoull(argv[2], NULL, 10));
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
	fprintf(stderr, "usage: whetstone|arith|hanoi|spawn|execl ...\n");
	return 2;
}
#endif
