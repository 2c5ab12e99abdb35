/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktest: a small KTAP test harness for the bpflock suite.
 *
 * Every case runs in a forked child with a timeout, so a crash or a hang in
 * one case is reported against that case and the others still run. Checks
 * print what they expected and what they got, and return whether they held
 * so a case can stop at the first broken precondition.
 */
#ifndef BPFLOCK_KTEST_H
#define BPFLOCK_KTEST_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/*
 * What a case expects of each kernel variant (see README.md):
 * FEATURE passes on stock and ours, fails on baseline; COMMON passes on
 * all three; ABSENT passes only on baseline (the feature is gone);
 * BEYOND passes only on ours (a guarantee stock does not give).
 */
enum kt_kind { KT_FEATURE, KT_COMMON, KT_ABSENT, KT_BEYOND };

struct kt {
	const char *name;
	bool failed;
	bool skipped;
	char note[200];
};

struct kt_case {
	const char *name;
	enum kt_kind kind;
	void (*fn)(struct kt *t, const void *arg);
	const void *arg;
	/* on this base the case expects base_kind instead (KT_ON_BASE) */
	const char *base;
	enum kt_kind base_kind;
};

/*
 * A case whose expectation differs on one base, because that base's tree
 * or series decided otherwise: { "name", KT_COMMON, fn,
 * KT_ON_BASE("6.12", KT_BEYOND) }. `--list` prints the kind for the base
 * in $BASE, with the base after it when it came from here.
 */
#define KT_ON_BASE(b, k) .base = (b), .base_kind = (k)

void kt_log(struct kt *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool kt_fail(struct kt *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kt_skip(struct kt *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kt_main(int argc, char **argv, const char *suite,
	    const struct kt_case *cases, int n);

/* The kernel variant under test (BPFLOCK_VARIANT): stock, baseline, ours. */
const char *kt_variant(void);

/* The base the kernel under test is built from: "6.1", "6.12" (uname). */
const char *kt_base(void);

/* Number of iterations or threads, scaled by BPFLOCK_SCALE (percent). */
long kt_scaled(long n);

#define KT_TRUE(t, cond, what)						\
	((cond) ? true : kt_fail(t, "%s: expected true: %s", what, #cond))

#define KT_EQ(t, got, want, what) ({					\
	long long __g = (long long)(got), __w = (long long)(want);	\
	__g == __w ? true :						\
		kt_fail(t, "%s: got %lld, want %lld", what, __g, __w);	\
})

/* A call returning 0 (or a valid fd) on success, -1 + errno otherwise. */
#define KT_OK(t, ret, what) ({						\
	long long __r = (long long)(ret);				\
	__r >= 0 ? true :						\
		kt_fail(t, "%s: failed: %lld (errno %d %s)", what, __r,	\
			errno, strerror(errno));			\
})

/* A call that must fail with errno 'err' (ret -1/errno or -err). */
#define KT_ERR(t, ret, err, what) ({					\
	long long __r = (long long)(ret);				\
	int __e = __r == -1 ? errno : (int)-__r;			\
	__r < 0 && __e == (err) ? true :				\
		kt_fail(t, "%s: got %lld (errno %d %s), want errno %d %s", \
			what, __r, __r < 0 ? __e : 0,			\
			__r < 0 ? strerror(__e) : "none", err, strerror(err)); \
})

#define KT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
