/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading the suite's embedded BPF objects, and turning the annotated
 * programs of an object (see progs/bpflock.h) into ktest cases.
 */
#ifndef BPFLOCK_PROGS_H
#define BPFLOCK_PROGS_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ktest.h"

struct embedded_obj {
	const char *name;
	const void *data;
	size_t size;
};

/* An object file linked in by tests/Makefile as progs/NAME.bpf.o. */
#define EMBEDDED_OBJ(n) ({						\
	extern const char _binary_##n##_bpf_o_start[];			\
	extern const char _binary_##n##_bpf_o_end[];			\
	(struct embedded_obj){ #n, _binary_##n##_bpf_o_start,		\
		(size_t)(_binary_##n##_bpf_o_end - _binary_##n##_bpf_o_start) }; \
})

/* Open an object; only the named programs will load (NULL: none). */
struct bpf_object *obj_open(struct kt *t, const struct embedded_obj *o,
			    const char *const *progs);

/* Open and load, returning the object or NULL after a failed check. */
struct bpf_object *obj_load(struct kt *t, const struct embedded_obj *o,
			    const char *const *progs);

/* Find a loaded program's or map's fd by name; -1 after a failed check. */
int obj_prog_fd(struct kt *t, struct bpf_object *obj, const char *name);
int obj_map_fd(struct kt *t, struct bpf_object *obj, const char *name);

/* BPF_PROG_TEST_RUN on a 64-byte packet (tc, xdp, cgroup_skb, ...). */
int prog_run(int prog_fd, int repeat, __u32 *retval);

/* One thread's share of prog_run_threads(). */
struct prog_runner {
	int prog_fd;
	long runs;		/* test runs, each of 'repeat' program runs */
	int repeat;
	__u32 want;		/* the return value of a good run */
	long bad;		/* runs that returned something else */
	__u32 bad_retval;
	int err;		/* first test_run errno */
	const volatile int *stop; /* when set, stop before the next test run */
	long done;		/* test runs completed */
	volatile int finished;	/* the thread has returned */
};

#define PROG_RUN_MAX_THREADS 8

/* pthread body: runs r->runs test runs of r->prog_fd (fewer if *r->stop). */
void *prog_runner_thread(void *arg);

/*
 * Run a program from n threads at once; returns the runs whose return
 * value was not want. Failed test runs fail t; bad runs are logged.
 */
long prog_run_threads(struct kt *t, int prog_fd, int n, long runs, int repeat,
		      __u32 want);

/*
 * One case per annotated program of the object. Returns the number of
 * cases written to *cases (malloc'ed), -1 on error.
 */
int annotated_cases(const struct embedded_obj *o, struct kt_case **cases);

/* Does a verifier line (not a quoted source line) of the log hold msg? */
bool log_has(const char *log, const char *msg);

/* Does the kernel have an error-injection list (fentry.s targets)? */
bool kernel_has_error_injection(void);

/* Load a program of an object with a log, for custom verdict checks. */
int load_one_logged(const struct embedded_obj *o, const char *prog,
		    int (*prepare)(struct bpf_object *obj, void *ctx), void *ctx,
		    char *log, size_t log_size);

/* Run the calling thread on one CPU only. */
void pin_cpu(int cpu);

/* An integer sysctl (a /proc/sys path): its value, -1 if unreadable. */
int sysctl_get(const char *path);
bool sysctl_set(const char *path, int v);

/* Does img[0..len) hold the n bytes of pat? (JIT-ed images) */
bool has_bytes(const __u8 *img, __u32 len, const __u8 *pat, __u32 n);

/* A "name:\tvalue" line of fd's fdinfo; -1 if there is none. */
long long fdinfo_value(int fd, const char *name);

/*
 * The map's contention counters in fdinfo (lock_contended, lock_wait_ns):
 * 0 after runs x repeat runs of prog_fd from one thread, above 0 once
 * four threads have contended (rounds of 2 x runs each, for at most
 * max_seconds: a loaded host may run the guest's vCPUs one at a time).
 */
void check_lock_contention(struct kt *t, int prog_fd, int map_fd, long runs, int repeat,
			   int max_seconds);

/*
 * BTF for hand-written programs with callbacks, for which the verifier
 * wants func_info: static functions "f0".."f<n-1>" returning int, taking
 * nargs[i] pointers each. Returns the BTF's fd (or -errno) and each
 * function's type id in ids[i].
 */
int funcs_btf_load(int n, const int *nargs, __u32 *ids);

/* Effective capabilities: all that are permitted, or only CAP_BPF and CAP_NET_ADMIN. */
int progs_set_caps(bool bpf_only);

#endif
