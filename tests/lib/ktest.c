// SPDX-License-Identifier: GPL-2.0
/* ktest: see ktest.h. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"

static const char *const kind_names[] = {
	[KT_FEATURE] = "feature",
	[KT_COMMON] = "common",
	[KT_ABSENT] = "absent",
	[KT_BEYOND] = "beyond",
};

static void vnote(struct kt *t, const char *fmt, va_list ap)
{
	if (!t->note[0])
		vsnprintf(t->note, sizeof(t->note), fmt, ap);
}

void kt_log(struct kt *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("    # %s: ", t->name);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

bool kt_fail(struct kt *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("    # %s: FAIL: ", t->name);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	va_start(ap, fmt);
	vnote(t, fmt, ap);
	va_end(ap);
	t->failed = true;
	return false;
}

void kt_skip(struct kt *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(t, fmt, ap);
	va_end(ap);
	t->skipped = true;
}

const char *kt_variant(void)
{
	const char *v = getenv("BPFLOCK_VARIANT");

	return v ? v : "unknown";
}

const char *kt_base(void)
{
	static char base[16];
	struct utsname u;
	char *dot;

	if (!base[0]) {
		if (uname(&u) || !(dot = strchr(u.release, '.')) ||
		    !(dot = strchr(dot + 1, '.')))
			return "unknown";
		snprintf(base, sizeof(base), "%.*s", (int)(dot - u.release), u.release);
	}
	return base;
}

long kt_scaled(long n)
{
	const char *s = getenv("BPFLOCK_SCALE");
	long pct = s ? strtol(s, NULL, 10) : 100;

	if (pct <= 0)
		pct = 100;
	n = n * pct / 100;
	return n > 0 ? n : 1;
}

static unsigned int case_timeout(void)
{
	const char *s = getenv("BPFLOCK_TEST_TIMEOUT");

	return s ? (unsigned int)strtoul(s, NULL, 10) : 300;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Wait for the case's child, killing it past the timeout. Polled from the
 * parent: the guest kernel has no POSIX timers, so no alarm().
 */
static int wait_case(pid_t pid, int *status, bool *timed_out)
{
	double deadline = mono_now() + case_timeout();
	pid_t r;

	*timed_out = false;
	while ((r = waitpid(pid, status, WNOHANG)) == 0) {
		if (mono_now() > deadline) {
			*timed_out = true;
			kill(pid, SIGKILL);
			return waitpid(pid, status, 0);
		}
		usleep(20000);
	}
	return r;
}

/* Run one case in a child; the shared page carries its verdict back. */
static int run_case(const char *suite, const struct kt_case *c, int idx)
{
	bool timed_out;
	struct kt *t;
	int status, ok;
	pid_t pid;

	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED) {
		printf("not ok %d %s/%s # harness: mmap failed\n", idx, suite, c->name);
		return 0;
	}
	memset(t, 0, sizeof(*t));
	t->name = c->name;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		c->fn(t, c->arg);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || wait_case(pid, &status, &timed_out) < 0)
		kt_fail(t, "harness: could not run the case");
	else if (timed_out)
		kt_fail(t, "timed out after %u s (hang?)", case_timeout());
	else if (WIFSIGNALED(status))
		kt_fail(t, "killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		kt_fail(t, "exited with status %d", WEXITSTATUS(status));

	ok = !t->failed;
	if (t->failed)
		printf("not ok %d %s/%s\n", idx, suite, c->name);
	else if (t->skipped)
		printf("ok %d %s/%s # SKIP %s\n", idx, suite, c->name, t->note);
	else
		printf("ok %d %s/%s\n", idx, suite, c->name);
	fflush(stdout);
	munmap(t, sizeof(*t));
	return ok;
}

int kt_main(int argc, char **argv, const char *suite,
	    const struct kt_case *cases, int n)
{
	const char *only = NULL;
	int i, failed = 0;

	if (argc > 1 && !strcmp(argv[1], "--list")) {
		const char *base = getenv("BASE");

		for (i = 0; i < n; i++) {
			const struct kt_case *c = &cases[i];
			bool here = c->base && base && !strcmp(c->base, base);

			printf("%s/%s %s%s%s\n", suite, c->name,
			       kind_names[here ? c->base_kind : c->kind],
			       here ? " " : "", here ? base : "");
		}
		return 0;
	}
	if (argc > 1)
		only = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n# suite: %s\n1..%d\n", suite, n);
	for (i = 0; i < n; i++) {
		if (only && !strstr(cases[i].name, only)) {
			printf("ok %d %s/%s # SKIP not selected\n", i + 1, suite,
			       cases[i].name);
			continue;
		}
		failed += !run_case(suite, &cases[i], i + 1);
	}
	printf("# %s: %d of %d failed\n", suite, failed, n);
	return failed ? 1 : 0;
}
