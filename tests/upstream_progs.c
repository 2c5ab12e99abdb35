// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's own test_progs cases for the feature, prog_tests/spinlock.c
 * and prog_tests/map_lock.c, run faithfully outside test_progs (which
 * needs vmlinux BTF to build): the tree's progs/test_spin_lock.c and
 * progs/test_map_lock.c, loaded as cgroup_skb programs as
 * bpf_prog_test_load() does, with the same threads and the same checks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "progs.h"

/* selftests' pkt_v4: Ethernet + IPv4 + TCP, 54 bytes */
static struct {
	unsigned char eth[14];
	unsigned char ip[20];
	unsigned char tcp[20];
} __attribute__((packed)) pkt_v4 = {
	.eth = { [12] = 0x08, [13] = 0x00 },
	.ip = { 0x45, 0, 0, 40, [8] = 64, [9] = 6 },
	.tcp = { [12] = 5 << 4, [13] = 0x02 },
};

struct run_result {
	int prog_fd;
	int err;
	__u32 retval;
};

/* spin_lock_thread() of both prog_tests: one test_run, repeat 10000 */
static void *spin_lock_thread(void *arg)
{
	struct run_result *r = arg;
	LIBBPF_OPTS(bpf_test_run_opts, topts,
		.data_in = &pkt_v4,
		.data_size_in = sizeof(pkt_v4),
		.repeat = 10000,
	);

	r->err = bpf_prog_test_run_opts(r->prog_fd, &topts) ? errno : 0;
	r->retval = topts.retval;
	return NULL;
}

static struct bpf_object *load_cgroup_skb(struct kt *t, const struct embedded_obj *o,
					  int *prog_fd)
{
	struct bpf_object *obj = obj_open(t, o, NULL);
	struct bpf_program *p;
	int err;

	if (!obj)
		return NULL;
	p = bpf_object__next_program(obj, NULL);
	bpf_program__set_autoload(p, true);
	bpf_program__set_type(p, BPF_PROG_TYPE_CGROUP_SKB);
	err = bpf_object__load(obj);
	if (err) {
		kt_fail(t, "bpf_prog_test_load of %s: %s", o->name, strerror(-err));
		bpf_object__close(obj);
		return NULL;
	}
	*prog_fd = bpf_program__fd(p);
	return obj;
}

static void check_runs(struct kt *t, struct run_result *r, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (r[i].err)
			kt_fail(t, "thread %d: test_run: %s", i, strerror(r[i].err));
		KT_EQ(t, r[i].retval, 0, "test_run retval");
	}
}

static void test_spinlock(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(up_spin_lock);
	struct run_result r[4] = {};
	struct bpf_object *obj;
	pthread_t th[4];
	int prog_fd, i;

	obj = load_cgroup_skb(t, &o, &prog_fd);
	if (!obj)
		return;
	for (i = 0; i < 4; i++) {
		r[i].prog_fd = prog_fd;
		pthread_create(&th[i], NULL, spin_lock_thread, &r[i]);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	check_runs(t, r, 4);
	bpf_object__close(obj);
}

struct reader {
	int map_fd;
	int err;
	int bad;	/* lookups that saw var[0] != 0 or non-uniform vars */
};

/* parallel_map_access() of prog_tests/map_lock.c */
static void *parallel_map_access(void *arg)
{
	struct reader *rd = arg;
	int vars[17], i, j, key = 0;

	for (i = 0; i < 10000; i++) {
		if (bpf_map_lookup_elem_flags(rd->map_fd, &key, vars, BPF_F_LOCK)) {
			rd->err = errno;
			break;
		}
		if (vars[0] != 0)
			rd->bad++;
		for (j = 2; j < 17; j++)
			if (vars[j] != vars[1]) {
				rd->bad++;
				break;
			}
	}
	return NULL;
}

static void test_map_lock(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(up_map_lock);
	struct run_result r[4] = {};
	struct reader rd[2] = {};
	int prog_fd, vars[17] = {}, key = 0, i;
	struct bpf_object *obj;
	pthread_t th[6];

	obj = load_cgroup_skb(t, &o, &prog_fd);
	if (!obj)
		return;
	rd[0].map_fd = obj_map_fd(t, obj, "hash_map");
	rd[1].map_fd = obj_map_fd(t, obj, "array_map");
	if (rd[0].map_fd < 0 || rd[1].map_fd < 0)
		goto out;
	bpf_map_update_elem(rd[0].map_fd, &key, vars, BPF_F_LOCK);
	for (i = 0; i < 4; i++) {
		r[i].prog_fd = prog_fd;
		pthread_create(&th[i], NULL, spin_lock_thread, &r[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_create(&th[4 + i], NULL, parallel_map_access, &rd[i]);
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	check_runs(t, r, 4);
	for (i = 0; i < 2; i++) {
		if (rd[i].err)
			kt_fail(t, "reader %d: lookup: %s", i, strerror(rd[i].err));
		KT_EQ(t, rd[i].bad, 0, "inconsistent lookups");
	}
out:
	bpf_object__close(obj);
}

static const struct kt_case cases[] = {
	{ "test_progs_spinlock", KT_FEATURE, test_spinlock },
	{ "test_progs_map_lock", KT_FEATURE, test_map_lock },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "upstream_progs", cases, KT_ARRAY_SIZE(cases));
}
