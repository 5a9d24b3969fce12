/*
 * How fast interbench's empty loop runs here, by interbench v0.31's calibration rule, with the
 * loop placed OFFSET bytes into a 64-byte line of code. Written for hostbench (it is not
 * interbench's code): the rule is the one docs/calibration.md describes — pinned to the first
 * CPU, SCHED_FIFO 99 where permitted (FIFO=0 in the environment: not), burn for 1 s, rescale a
 * guess until a timing lands within 1% of 1 ms, sleep 1 s, accept if a timing lands within
 * 5%, else again — bounded here at 60 s (then it prints the last guess and says so).
 *
 *   cc -O2 -o loop_placement benches/loop_placement.c
 *   ./loop_placement OFFSET        (0..55: the loop's 9 bytes within one line; 56..63: across
 *                                   the line's end, where GCC -O2 put the copy interbench
 *                                   v0.31's calibration times, in the build this project made)
 *
 * Prints `OFFSET LOOPS_PER_MS accepted|unsettled`. scripts/interbench-vs.sh runs it at offset
 * 16 (where hostbench's loop and interbench's tasks' copies lie) and at the offset of
 * interbench's own calibrating copy.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The loop at every offset of a 64-byte line: add, compare, branch, as GCC -O2 compiles
 * `for (i = 0; i < loops; i++) asm volatile("" ::: "memory")`. */
#define LOOP_AT(n)                                                                       \
	void spin_##n(unsigned long loops);                                              \
	__asm__(".text\n.p2align 6\n.globl spin_" #n "\n.type spin_" #n ",@function\n" \
		"spin_" #n ":\n"                                                         \
		"  xor %eax, %eax\n"                                                     \
		"  jmp 2f\n"                                                             \
		"  .p2align 6\n"                                                         \
		"  .fill " #n ", 1, 0x90\n"                                               \
		"2: add $1, %rax\n"                                                      \
		"  cmp %rax, %rdi\n"                                                     \
		"  jne 2b\n"                                                             \
		"  ret\n"                                                                \
		".size spin_" #n ", .-spin_" #n "\n");

#define EIGHT(a) LOOP_AT(a##0) LOOP_AT(a##1) LOOP_AT(a##2) LOOP_AT(a##3) \
		 LOOP_AT(a##4) LOOP_AT(a##5) LOOP_AT(a##6) LOOP_AT(a##7)
LOOP_AT(0) LOOP_AT(1) LOOP_AT(2) LOOP_AT(3) LOOP_AT(4) LOOP_AT(5) LOOP_AT(6) LOOP_AT(7)
LOOP_AT(8) LOOP_AT(9)
EIGHT(1) LOOP_AT(18) LOOP_AT(19) EIGHT(2) LOOP_AT(28) LOOP_AT(29) EIGHT(3) LOOP_AT(38)
LOOP_AT(39) EIGHT(4) LOOP_AT(48) LOOP_AT(49) EIGHT(5) LOOP_AT(58) LOOP_AT(59) LOOP_AT(60)
LOOP_AT(61) LOOP_AT(62) LOOP_AT(63)

#define ROW(a) spin_##a##0, spin_##a##1, spin_##a##2, spin_##a##3, spin_##a##4, \
	       spin_##a##5, spin_##a##6, spin_##a##7, spin_##a##8, spin_##a##9
static void (*const spins[64])(unsigned long) = {
	spin_0, spin_1, spin_2, spin_3, spin_4, spin_5, spin_6, spin_7, spin_8, spin_9,
	ROW(1), ROW(2), ROW(3), ROW(4), ROW(5),
	spin_60, spin_61, spin_62, spin_63,
};

static unsigned long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int offset = argc == 2 ? atoi(argv[1]) : -1;
	void (*spin)(unsigned long);
	unsigned long long guess = 100000, took = 0, start, give_up;
	const char *fifo = getenv("FIFO");
	struct sched_param p = { .sched_priority = 99 };
	cpu_set_t one;
	int accepted = 0;

	if (offset < 0 || offset > 63) {
		fprintf(stderr, "usage: loop_placement OFFSET (0..63)\n");
		return 2;
	}
	spin = spins[offset];
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof one, &one);
	if (!(fifo && fifo[0] == '0'))
		sched_setscheduler(0, SCHED_FIFO, &p);
	start = now_ns();
	give_up = start + 60000000000ULL;
	while (now_ns() - start < 1000000000ULL)
		spin(guess);
	while (now_ns() < give_up) {
		while (took < 990000 || took > 1010000) {
			unsigned long long t0 = now_ns();
			spin(guess);
			took = now_ns() - t0;
			guess = took ? 1000000ULL * guess / took : guess;
		}
		sleep(1);
		start = now_ns();
		spin(guess);
		took = now_ns() - start;
		if (took >= 950000 && took <= 1050000) {
			accepted = 1;
			break;
		}
	}
	printf("%d %llu %s\n", offset, guess, accepted ? "accepted" : "unsettled");
	return 0;
}
