/*
 * Minimal C loops doing what hostbench's index tests do, to measure the harness's own cost:
 * each runs for SECONDS and prints its score in the test's unit (lps, KBps, lpm).
 *
 *   cc -O3 -ffast-math -march=native -mtune=native -o unixbench_loops benches/unixbench_loops.c
 *   ./unixbench_loops syscall|pipe|context1|spawn|execl SECONDS
 *   ./unixbench_loops fstime write|read|copy BUFSIZE MAXBLOCKS SECONDS DIR
 *   ./unixbench_loops looper SECONDS DIR CONCURRENT   (UnixBench's shell test: /bin/sh
 *                                                      multi.sh CONCURRENT in DIR, per minute)
 *
 * fstime follows fstime.c's schedule as hostbench does: fsync and pauses before each phase
 * (scaled by SECONDS/30, as hostbench scales them), the read test writes for 2 s first, the
 * copy test writes and reads for 2 s each; alarm() ends a phase.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile sig_atomic_t rang;

static void on_alarm(int sig)
{
	(void)sig;
	rang = 1;
}

/* A phase of `secs` seconds ended by the alarm (setitimer for fractions of a second). */
static void alarm_in(double secs)
{
	struct itimerval it = { { 0, 0 }, { (time_t)secs, (suseconds_t)((secs - (time_t)secs) * 1e6) } };
	rang = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static double scale;

static void pause_s(double s)
{
	struct timespec ts = { (time_t)(s * scale), (long)((s * scale - (time_t)(s * scale)) * 1e9) };
	nanosleep(&ts, NULL);
}

static void settle(int f, int g, double second)
{
	fsync(f);
	if (g >= 0)
		fsync(g);
	pause_s(2.0);
	fsync(f);
	if (g >= 0)
		fsync(g);
	pause_s(second);
}

/* One fstime phase; returns KB per second. */
static double fstime_phase(char mode, int f, int g, char *buf, size_t bufsize, long blocks, double secs)
{
	double start, kb = 0;
	long i;
	ssize_t n;
	settle(f, mode == 'c' ? g : -1, mode == 'c' ? 1.0 : 2.0);
	lseek(f, 0, SEEK_SET);
	alarm_in(secs);
	start = now();
	if (mode == 'w') {
		for (;;) {
			for (i = 0; i < blocks; i++) {
				if (write(f, buf, bufsize) != (ssize_t)bufsize)
					exit(1);
				kb += bufsize / 1024.0;
				if (rang)
					goto done;
			}
			lseek(f, 0, SEEK_SET);
		}
	} else if (mode == 'r') {
		while (!rang) {
			n = read(f, buf, bufsize);
			if (n < (ssize_t)bufsize)
				lseek(f, 0, SEEK_SET);
			kb += n / 1024.0;
		}
	} else {
		lseek(g, 0, SEEK_SET);
		while (!rang) {
			n = read(f, buf, bufsize);
			if (n < (ssize_t)bufsize) {
				lseek(f, 0, SEEK_SET);
				lseek(g, 0, SEEK_SET);
				continue;
			}
			if (write(g, buf, n) != n)
				exit(1);
			kb += n / 1024.0;
		}
	}
done:
	return kb / (now() - start);
}

static int fstime(int argc, char **argv)
{
	char mode, p0[4096], p1[4096], *buf;
	size_t bufsize, i;
	long blocks;
	double secs, r;
	int f, g;
	if (argc < 7)
		return 2;
	mode = argv[2][0];
	bufsize = strtoul(argv[3], NULL, 10);
	blocks = strtol(argv[4], NULL, 10) * 1024 / (long)bufsize;
	secs = atof(argv[5]);
	scale = secs / 30 < 1 ? secs / 30 : 1;
	snprintf(p0, sizeof p0, "%s/dummy0.%d", argv[6], getpid());
	snprintf(p1, sizeof p1, "%s/dummy1.%d", argv[6], getpid());
	f = open(p0, O_RDWR | O_CREAT | O_EXCL, 0600);
	g = open(p1, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (f < 0 || g < 0)
		return 1;
	unlink(p0);
	unlink(p1);
	buf = malloc(bufsize);
	for (i = 0; i < bufsize; i++)
		buf[i] = (char)(i & 0xff);
	signal(SIGALRM, on_alarm);
	if (mode == 'w') {
		r = fstime_phase('w', f, g, buf, bufsize, blocks, secs);
	} else if (mode == 'r') {
		fstime_phase('w', f, g, buf, bufsize, blocks, 2 * scale);
		r = fstime_phase('r', f, g, buf, bufsize, blocks, secs);
	} else {
		fstime_phase('w', f, g, buf, bufsize, blocks, 2 * scale);
		fstime_phase('r', f, g, buf, bufsize, blocks, 2 * scale);
		r = fstime_phase('c', f, g, buf, bufsize, blocks, secs);
	}
	printf("%.1f\n", r);
	return 0;
}

/* looper.c: `/bin/sh multi.sh N` in DIR over and over; completed runs per minute. */
static int looper(int argc, char **argv)
{
	double secs, start, end;
	unsigned long n = 0;
	int status;
	if (argc < 5 || chdir(argv[3]))
		return 2;
	secs = atof(argv[2]);
	start = now();
	end = start + secs;
	while (now() < end) {
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 1);
			execl("/bin/sh", "sh", "multi.sh", argv[4], (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || status != 0)
			return 1;
		if (now() <= end)
			n++;
	}
	printf("%.1f\n", n * 60 / (now() - start));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "syscall";
	double secs = argc > 2 ? atof(argv[2]) : 5, start, end;
	unsigned long n = 0;
	int i;

	if (strcmp(mode, "fstime") == 0)
		return fstime(argc, argv);
	if (strcmp(mode, "looper") == 0)
		return looper(argc, argv);
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
				exit(0); /* as spawn.c: exit(), whose stdio clean-up costs the child a few pages */
			waitpid(pid, NULL, 0);
			n++;
		}
	} else {
		return 2;
	}
	printf("%.1f\n", n / (now() - start));
	return 0;
}
