/* hostbench's compiler workload (UnixBench's C test): a small program with structures, unions,
 * loops, recursion, string handling and a little floating point, compiled and linked once per
 * loop. It is written to give the compiler ordinary work, not to be run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE 64
#define WORDS 12

struct entry {
	char key[32];
	long count;
	double weight;
	struct entry *next;
};

union number {
	long i;
	double d;
	unsigned char bytes[sizeof(double)];
};

static struct entry *table[TABLE];

static unsigned hash(const char *s)
{
	unsigned h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % TABLE;
}

static struct entry *lookup(const char *key, int create)
{
	unsigned h = hash(key);
	struct entry *e;
	for (e = table[h]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return e;
	if (!create)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		exit(1);
	strncpy(e->key, key, sizeof(e->key) - 1);
	e->next = table[h];
	table[h] = e;
	return e;
}

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static double mean(const double *v, int n)
{
	double s = 0;
	int i;
	for (i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

static int compare(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void reverse(char *s)
{
	size_t i, n = strlen(s);
	for (i = 0; i < n / 2; i++) {
		char c = s[i];
		s[i] = s[n - 1 - i];
		s[n - 1 - i] = c;
	}
}

int main(int argc, char **argv)
{
	static const char *words[WORDS] = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta",
		"eta", "theta", "iota", "kappa", "lambda", "mu" };
	struct entry *all[TABLE * 4];
	double weights[WORDS];
	union number u;
	char buf[64];
	int i, j, n = 0;

	for (i = 0; i < 1000; i++) {
		struct entry *e = lookup(words[(i * 7 + argc) % WORDS], 1);
		e->count++;
		e->weight += (double)i / (e->count + 1);
	}
	for (i = 0; i < WORDS; i++) {
		struct entry *e = lookup(words[i], 0);
		weights[i] = e ? e->weight : 0.0;
	}
	for (i = 0; i < TABLE; i++) {
		struct entry *e;
		for (e = table[i]; e && n < TABLE * 4; e = e->next)
			all[n++] = e;
	}
	qsort(all, n, sizeof(all[0]), compare);
	for (j = 0; j < n; j++) {
		snprintf(buf, sizeof(buf), "%s:%ld", all[j]->key, all[j]->count);
		reverse(buf);
		if (argc > 5)
			puts(buf);
	}
	u.d = mean(weights, WORDS);
	printf("%ld %ld %d\n", fib(argc + 10), u.i & 0xff, n);
	return 0;
}
