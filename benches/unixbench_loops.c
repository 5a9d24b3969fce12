/*
 * Minimal C loops doing what hostbench's index tests do, to measure the harness's own cost:
 * each runs for SECONDS and prints loops per second.
 *
 *   cc -O2 -o unixbench_loops benches/unixbench_loops.c
 *   ./unixbench_loops syscall|pipe|context1|spawn|execl SECONDS
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "syscall";
	double secs = argc > 2 ? atof(argv[2]) : 5, start, end;
	unsigned long n = 0;
	int i;

	/* execl chain: argv = execl SECONDS START COUNT */
	if (strcmp(mode, "execl") == 0 && argc > 4) {
		start = atof(argv[3]);
		n = strtoul(argv[4], NULL, 10);
		if (now() >= start + secs) {
			printf("%.1f\n", n / (now() - start));
			return 0;
		}
		char s[32], c[32];
		snprintf(s, sizeof(s), "%.9f", start);
		snprintf(c, sizeof(c), "%lu", n + 1);
		execl("/proc/self/exe", argv[0], "execl", argv[2], s, c, (char *)NULL);
		return 1;
	}
	start = now();
	end = start + secs;
	if (strcmp(mode, "execl") == 0) {
		char s[32];
		snprintf(s, sizeof(s), "%.9f", start);
		execl("/proc/self/exe", argv[0], "execl", argv[2], s, "0", (char *)NULL);
		return 1;
	} else if (strcmp(mode, "syscall") == 0) {
		while (now() < end)
			for (i = 0; i < 1000; i++, n++) {
				close(dup(0));
				getpid();
				getuid();
				umask(022);
			}
	} else if (strcmp(mode, "pipe") == 0) {
		char buf[512];
		int p[2];
		if (pipe(p))
			return 1;
		while (now() < end)
			for (i = 0; i < 100; i++, n++)
				if (write(p[1], buf, 512) != 512 || read(p[0], buf, 512) != 512)
					return 1;
	} else if (strcmp(mode, "context1") == 0) {
		int p1[2], p2[2];
		unsigned long v, check;
		if (pipe(p1) || pipe(p2))
			return 1;
		if (fork() == 0) {
			close(p1[1]);
			close(p2[0]);
			while (read(p1[0], &v, sizeof(v)) == sizeof(v))
				if (write(p2[1], &v, sizeof(v)) != sizeof(v))
					break;
			_exit(0);
		}
		close(p1[0]);
		close(p2[1]);
		while (now() < end)
			for (i = 0; i < 100; i++, n++)
				if (write(p1[1], &n, sizeof(n)) != sizeof(n) || read(p2[0], &check, sizeof(check)) != sizeof(check))
					return 1;
		close(p1[1]);
		wait(NULL);
	} else if (strcmp(mode, "spawn") == 0) {
		while (now() < end) {
			pid_t pid = fork();
			if (pid == 0)
				_exit(0);
			waitpid(pid, NULL, 0);
			n++;
		}
	} else {
		return 2;
	}
	printf("%.1f\n", n / (now() - start));
	return 0;
}
