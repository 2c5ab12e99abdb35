// SPDX-License-Identifier: GPL-2.0
/*
 * Locks in LRU hash maps and in inner maps (progs/lru_inner.bpf.c);
 * stock 6.1 refuses both (ENOTSUPP), so every case here is "beyond".
 * Stock 6.12 takes a lock in an inner map (those cases are "feature"
 * there) and refuses it in an LRU map (EOPNOTSUPP: "beyond" on both).
 *
 * LRU: BPF_F_LOCK on every command (update in place, lookup,
 * lookup_and_delete, batch lookup), and an eviction storm: tc programs
 * on every vCPU lock random keys of a 64-entry map over 1024 keys,
 * inserting the missing ones (each insert evicts and reuses an element
 * that another CPU may hold or be copying), while user space reads,
 * rewrites and deletes with BPF_F_LOCK. Invariant: every element has
 * a == b in every BPF_F_LOCK read and at the end (a reused element
 * written without its lock tears; a lock word reset under its holder
 * hangs or tears).
 *
 * Inner maps: tc programs on every vCPU lock element 0 of the inner map
 * in outer[0] while user space swaps inner_a and inner_b there at full
 * rate. Invariant: a == b in both, and a(inner_a) + a(inner_b) equals
 * the program runs. An inner map whose lock sits elsewhere, or that has
 * none, cannot replace them (EINVAL).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

#define MAX_CPUS 8
#define REPEAT 50
#define LRU_KEYS 1024

struct lelem {
	long a;
	struct bpf_spin_lock lock;
	long b;
};

struct storm {
	int prog_fd;
	int map_fd;
	volatile int stop;
	long runs;		/* test runs of REPEAT */
	long reads, torn, updates, deletes, swaps;
	int err;
	const char *what;
};

struct cpu_arg {
	struct storm *s;
	int cpu;
};

static void storm_error(struct storm *s, const char *what)
{
	if (!s->err) {
		s->err = errno ? errno : EINVAL;
		s->what = what;
	}
}

static void *tc_thread(void *arg)
{
	struct cpu_arg *a = arg;
	struct storm *s = a->s;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = REPEAT);
	char pkt[64] = {};

	opts.data_in = pkt;
	opts.data_size_in = sizeof(pkt);
	pin_cpu(a->cpu);
	while (!s->stop) {
		if (bpf_prog_test_run_opts(s->prog_fd, &opts) || opts.retval) {
			storm_error(s, "tc test run");
			break;
		}
		__atomic_add_fetch(&s->runs, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* BPF_F_LOCK reads, in-place rewrites and deletes of random keys. */
static void *lru_user_thread(void *arg)
{
	struct storm *s = arg;
	unsigned int seed = 1;
	struct lelem e;
	__u32 key;

	while (!s->stop) {
		key = rand_r(&seed) % LRU_KEYS;
		switch (rand_r(&seed) % 4) {
		case 0:
		case 1:
			if (!bpf_map_lookup_elem_flags(s->map_fd, &key, &e, BPF_F_LOCK)) {
				s->reads++;
				s->torn += e.a != e.b;
			} else if (errno != ENOENT) {
				storm_error(s, "BPF_F_LOCK lookup");
			}
			break;
		case 2:
			e.a = e.b = key;
			if (!bpf_map_update_elem(s->map_fd, &key, &e, BPF_F_LOCK | BPF_EXIST))
				s->updates++;
			else if (errno != ENOENT)
				storm_error(s, "BPF_F_LOCK update");
			break;
		case 3:
			if (!bpf_map_lookup_and_delete_elem_flags(s->map_fd, &key, &e,
								  BPF_F_LOCK)) {
				s->deletes++;
				s->torn += e.a != e.b;
			} else if (errno != ENOENT) {
				storm_error(s, "BPF_F_LOCK lookup_and_delete");
			}
			break;
		}
	}
	return NULL;
}

static void run_storm(struct storm *s, void *(*user)(void *), int seconds)
{
	pthread_t th[MAX_CPUS], u;
	struct cpu_arg args[MAX_CPUS];
	int i, ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (i = 0; i < ncpu; i++) {
		args[i] = (struct cpu_arg){ s, i };
		pthread_create(&th[i], NULL, tc_thread, &args[i]);
	}
	pthread_create(&u, NULL, user, s);
	sleep(seconds);
	s->stop = 1;
	for (i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
	pthread_join(u, NULL);
}

static void lru_storm(struct kt *t, const void *arg)
{
	const char *map = arg;
	struct embedded_obj o = EMBEDDED_OBJ(lru_inner);
	const char *prog = strcmp(map, "lru") ? "lru_nc_churn" : "lru_churn";
	struct storm s = {};
	struct bpf_object *obj;
	long present = 0, bad = 0;
	struct lelem e;
	__u32 key;

	obj = obj_load(t, &o, (const char *const[]){ prog, NULL });
	if (!obj)
		return;
	s.prog_fd = obj_prog_fd(t, obj, prog);
	s.map_fd = obj_map_fd(t, obj, map);
	run_storm(&s, lru_user_thread, kt_scaled(8) > 1 ? kt_scaled(8) : 2);
	if (s.err) {
		errno = s.err;
		kt_fail(t, "%s: %s", s.what, strerror(s.err));
	}
	for (key = 0; key < LRU_KEYS; key++) {
		if (bpf_map_lookup_elem_flags(s.map_fd, &key, &e, BPF_F_LOCK))
			continue;
		present++;
		bad += e.a != e.b;
	}
	kt_log(t, "%s: %ld test runs x %d, %ld BPF_F_LOCK reads (%ld torn), %ld in-place updates, %ld lookup_and_delete; %ld elements at the end, %ld with a != b",
	       map, s.runs, REPEAT, s.reads, s.torn, s.updates, s.deletes, present, bad);
	KT_EQ(t, s.torn, 0, "torn BPF_F_LOCK reads");
	KT_EQ(t, bad, 0, "elements with a != b at the end");
	KT_TRUE(t, present > 0 && present <= 64, "the LRU map holds at most 64 elements");
	KT_TRUE(t, s.reads > 0 && s.runs > 0, "programs and readers ran");
	bpf_object__close(obj);
}

/* BPF_F_LOCK on each command of an LRU hash map. */
static void lru_flag_commands(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(lru_inner);
	struct lelem e = { .a = 1, .b = 1 }, got, vals[4];
	__u32 key = 7, keys[4], count = 4, out_batch;
	struct bpf_object *obj;
	LIBBPF_OPTS(bpf_map_batch_opts, bo, .elem_flags = BPF_F_LOCK);
	int fd;

	obj = obj_load(t, &o, (const char *const[]){ NULL });
	if (!obj)
		return;
	fd = obj_map_fd(t, obj, "lru");
	KT_ERR(t, bpf_map_update_elem(fd, &key, &e, BPF_F_LOCK | BPF_EXIST), ENOENT,
	       "BPF_F_LOCK|BPF_EXIST on a missing key");
	KT_OK(t, bpf_map_update_elem(fd, &key, &e, BPF_F_LOCK), "BPF_F_LOCK insert");
	e.a = e.b = 5;
	KT_OK(t, bpf_map_update_elem(fd, &key, &e, BPF_F_LOCK | BPF_EXIST),
	      "BPF_F_LOCK update in place");
	KT_OK(t, bpf_map_lookup_elem_flags(fd, &key, &got, BPF_F_LOCK), "BPF_F_LOCK lookup");
	KT_EQ(t, got.a * 10 + got.b, 55, "the value written in place");
	if (bpf_map_lookup_batch(fd, NULL, &out_batch, keys, vals, &count, &bo) &&
	    errno != ENOENT)
		kt_fail(t, "BPF_F_LOCK batch lookup: %s", strerror(errno));
	KT_EQ(t, count, 1, "batch: one element");
	KT_EQ(t, vals[0].a, 5, "batch: its value");
	KT_OK(t, bpf_map_lookup_and_delete_elem_flags(fd, &key, &got, BPF_F_LOCK),
	      "BPF_F_LOCK lookup_and_delete");
	KT_EQ(t, got.b, 5, "lookup_and_delete: the value");
	KT_ERR(t, bpf_map_lookup_elem_flags(fd, &key, &got, BPF_F_LOCK), ENOENT,
	       "deleted");
	bpf_object__close(obj);
}

/* Swap inner_a and inner_b in outer[0] under the programs. */
static int fd_a, fd_b, fd_outer;

static void *swap_thread(void *arg)
{
	struct storm *s = arg;
	int k = 0;

	while (!s->stop) {
		int fd = s->swaps & 1 ? fd_a : fd_b;

		if (bpf_map_update_elem(fd_outer, &k, &fd, 0)) {
			storm_error(s, "swap inner map");
			break;
		}
		s->swaps++;
	}
	return NULL;
}

static void inner_swap_storm(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(lru_inner);
	struct lelem ea, eb;
	struct storm s = {};
	struct bpf_object *obj;
	int k = 0;

	obj = obj_load(t, &o, (const char *const[]){ "inner_bump", NULL });
	if (!obj)
		return;
	s.prog_fd = obj_prog_fd(t, obj, "inner_bump");
	fd_a = obj_map_fd(t, obj, "inner_a");
	fd_b = obj_map_fd(t, obj, "inner_b");
	fd_outer = obj_map_fd(t, obj, "outer");
	run_storm(&s, swap_thread, kt_scaled(6) > 1 ? kt_scaled(6) : 2);
	if (s.err) {
		errno = s.err;
		kt_fail(t, "%s: %s", s.what, strerror(s.err));
	}
	if (!KT_OK(t, bpf_map_lookup_elem_flags(fd_a, &k, &ea, BPF_F_LOCK), "read inner_a") ||
	    !KT_OK(t, bpf_map_lookup_elem_flags(fd_b, &k, &eb, BPF_F_LOCK), "read inner_b"))
		goto out;
	kt_log(t, "%ld test runs x %d, %ld swaps; inner_a a=%ld b=%ld, inner_b a=%ld b=%ld",
	       s.runs, REPEAT, s.swaps, ea.a, ea.b, eb.a, eb.b);
	KT_EQ(t, ea.a, ea.b, "inner_a: a == b");
	KT_EQ(t, eb.a, eb.b, "inner_b: a == b");
	KT_EQ(t, ea.a + eb.a, s.runs * REPEAT, "every run locked one element, once");
	KT_TRUE(t, s.swaps > 0 && ea.a > 0 && eb.a > 0, "both inner maps were used");
out:
	bpf_object__close(obj);
}

/* Another lock layout, or none, cannot replace the template's. */
static void inner_layout_refused(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(lru_inner);
	struct bpf_object *obj;
	int k = 0, fd;

	obj = obj_load(t, &o, (const char *const[]){ "inner_bump", NULL });
	if (!obj)
		return;
	fd_outer = obj_map_fd(t, obj, "outer");
	fd = obj_map_fd(t, obj, "inner_other");
	KT_ERR(t, bpf_map_update_elem(fd_outer, &k, &fd, 0), EINVAL,
	       "inner map with the lock at another offset");
	fd = obj_map_fd(t, obj, "inner_plain");
	KT_ERR(t, bpf_map_update_elem(fd_outer, &k, &fd, 0), EINVAL,
	       "inner map without a lock");
	fd = obj_map_fd(t, obj, "inner_b");
	KT_OK(t, bpf_map_update_elem(fd_outer, &k, &fd, 0), "inner map with the same layout");
	bpf_object__close(obj);
}

int main(int argc, char **argv)
{
	static const struct kt_case fixed[] = {
		{ "lru_flag_commands", KT_BEYOND, lru_flag_commands, NULL,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "lru_eviction_storm", KT_BEYOND, lru_storm, "lru", KT_ON_BASE("6.12", KT_BEYOND) },
		{ "lru_no_common_eviction_storm", KT_BEYOND, lru_storm, "lru_nc",
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "inner_swap_storm", KT_BEYOND, inner_swap_storm, KT_ON_BASE("6.12", KT_FEATURE) },
		{ "inner_layout_refused", KT_BEYOND, inner_layout_refused, KT_ON_BASE("6.12", KT_FEATURE) },
	};
	struct embedded_obj o = EMBEDDED_OBJ(lru_inner);
	struct kt_case *annotated, *all;
	int n = annotated_cases(&o, &annotated), nf = KT_ARRAY_SIZE(fixed);

	if (n < 0)
		return 1;
	all = calloc(n + nf, sizeof(*all));
	if (!all)
		return 1;
	memcpy(all, fixed, sizeof(fixed));
	memcpy(all + nf, annotated, n * sizeof(*all));
	return kt_main(argc, argv, "lru_inner", all, n + nf);
}
