// SPDX-License-Identifier: GPL-2.0
/*
 * Graph structures (bpf_list_head, bpf_rb_root) need a bpf_spin_lock
 * beside them: on a kernel with the lock they work under it (stock-6.12),
 * on one without it (baseline) they are refused where their BTF is
 * parsed, with EINVAL, and nothing breaks. Built only from trees that
 * have graph structures (tests/Makefile: 6.12 on).
 *
 * - list_under_lock: an object pushed on a map value's list and popped
 *   back under the value's lock.
 * - rbtree_global_lock: a node added to a tree in global data under a
 *   global lock (private(...) sections, as scx_flatcg does) and removed.
 * - global_lock_contention: the contention counters of the map that holds
 *   that global lock (the .data.TREE section's) in its fdinfo
 *   (lock_contended, lock_wait_ns) stay 0 while one thread runs the
 *   program and rise when four do (ours: 0026).
 * - roots_refused: the object's BTF, which holds both roots, is refused
 *   with EINVAL by BPF_BTF_LOAD (baseline only).
 * - user_copy_roots_zero: what a lookup copies to user space shows the
 *   lock and the list head as zero (lookup with and without BPF_F_LOCK,
 *   lookup_and_delete, batch lookup). Stock-6.12 initialises the copy's
 *   list head (bpf_obj_init()), which points it at itself: user space
 *   reads the kernel address of the copy (found by an attacker review).
 * - the programs of progs/graph_fail.bpf.c, each with its verdict: a list
 *   changed outside its lock or under another one, an unlock of another
 *   lock, a lock held at exit or at bpf_throw(), a node used after the
 *   unlock, refused with the reason (stock and ours); and the review
 *   probes there (callbacks, subprograms, branches, the lock word, other
 *   lookups, objects, inner maps and sections), each with stock-6.12's
 *   verdict.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "progs.h"

static void run_graph_prog(struct kt *t, const void *arg)
{
	const char *name = arg;
	const char *progs[] = { name, NULL };
	struct embedded_obj o = EMBEDDED_OBJ(graph);
	struct bpf_object *obj = obj_load(t, &o, progs);
	__u32 retval = ~0U;
	int fd;

	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, name);
	if (fd >= 0 && KT_OK(t, prog_run(fd, 10, &retval), "test_run"))
		KT_EQ(t, retval, 0, "the program's verdict (0: the object came back)");
	bpf_object__close(obj);
}

/* progs/graph.h's struct list_value, as user space sees it */
struct list_value {
	struct bpf_spin_lock lock;
	struct bpf_list_head head;
};

/* The lock and list head of a copied value must read as zero. */
static void roots_zero(struct kt *t, const struct list_value *v, const char *what)
{
	static const struct list_value zero;
	const unsigned long *w = (const void *)&v->head;

	if (!memcmp(v, &zero, sizeof(*v)))
		return;
	kt_fail(t, "%s: lock %#x, list head %#lx %#lx (want zero: not a kernel address)",
		what, *(const unsigned int *)&v->lock, w[0], w[1]);
}

static void user_copy_roots_zero(struct kt *t, const void *arg)
{
	const char *progs[] = { "list_push_pop", NULL };
	struct embedded_obj o = EMBEDDED_OBJ(graph);
	struct bpf_object *obj = obj_load(t, &o, progs);
	struct list_value v, vals[4];
	int fd, err, key = 0, keys[4];
	__u32 count = 4;
	void *batch = NULL;

	if (!obj)
		return;
	fd = obj_map_fd(t, obj, "lists");
	if (fd >= 0) {
		memset(&v, 0xaa, sizeof(v));
		if (KT_OK(t, bpf_map_lookup_elem(fd, &key, &v), "array lookup"))
			roots_zero(t, &v, "array lookup");
		memset(&v, 0xaa, sizeof(v));
		if (KT_OK(t, bpf_map_lookup_elem_flags(fd, &key, &v, BPF_F_LOCK),
			  "array lookup with BPF_F_LOCK"))
			roots_zero(t, &v, "array lookup with BPF_F_LOCK");
		/* ENOENT: the batch reached the end, with what it copied */
		memset(vals, 0xaa, sizeof(vals));
		err = bpf_map_lookup_batch(fd, NULL, &batch, keys, vals, &count, NULL);
		if (err && errno != ENOENT)
			kt_fail(t, "array batch lookup: %d (errno %d)", err, errno);
		else if (KT_EQ(t, count, 1, "batch: one element"))
			roots_zero(t, &vals[0], "array batch lookup");
	}
	fd = obj_map_fd(t, obj, "hlists");
	if (fd >= 0) {
		memset(&v, 0, sizeof(v));
		KT_OK(t, bpf_map_update_elem(fd, &key, &v, BPF_NOEXIST), "hash insert");
		memset(&v, 0xaa, sizeof(v));
		if (KT_OK(t, bpf_map_lookup_elem(fd, &key, &v), "hash lookup"))
			roots_zero(t, &v, "hash lookup");
		memset(&v, 0xaa, sizeof(v));
		if (KT_OK(t, bpf_map_lookup_and_delete_elem(fd, &key, &v), "hash lookup_and_delete"))
			roots_zero(t, &v, "hash lookup_and_delete");
	}
	bpf_object__close(obj);
}

#define CONTENTION_SECONDS 120

static void global_lock_contention(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(graph);
	struct bpf_object *obj = obj_load(t, &o, (const char *const[]){ "rbtree_add_first", NULL });
	struct bpf_map *map;
	int fd;

	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, "rbtree_add_first");
	map = bpf_object__find_map_by_name(obj, ".data.TREE");
	if (fd >= 0 && KT_TRUE(t, map != NULL, "the map of section .data.TREE"))
		check_lock_contention(t, fd, bpf_map__fd(map), kt_scaled(500), 100,
				      CONTENTION_SECONDS);
	bpf_object__close(obj);
}

static void roots_refused(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(graph);
	struct bpf_object *obj = obj_open(t, &o, NULL);
	struct btf *btf;
	int err;

	if (!obj)
		return;
	btf = bpf_object__btf(obj);
	if (!KT_TRUE(t, btf != NULL, "the object has BTF"))
		goto out;
	err = btf__load_into_kernel(btf);
	KT_ERR(t, err, EINVAL, "BPF_BTF_LOAD of types holding bpf_list_head and bpf_rb_root");
out:
	bpf_object__close(obj);
}

int main(int argc, char **argv)
{
	static const struct kt_case named[] = {
		{ "list_under_lock", KT_FEATURE, run_graph_prog, "list_push_pop" },
		{ "rbtree_global_lock", KT_FEATURE, run_graph_prog, "rbtree_add_first" },
		{ "roots_refused", KT_ABSENT, roots_refused, NULL },
		{ "user_copy_roots_zero", KT_BEYOND, user_copy_roots_zero, NULL,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "global_lock_contention", KT_BEYOND, global_lock_contention, NULL,
		  KT_ON_BASE("6.12", KT_BEYOND) },
	};
	struct embedded_obj fail = EMBEDDED_OBJ(graph_fail);
	struct kt_case *cases;
	int n, i;

	n = annotated_cases(&fail, &cases);
	if (n < 0) {
		fprintf(stderr, "cannot read the programs of %s\n", fail.name);
		return 1;
	}
	cases = realloc(cases, (n + KT_ARRAY_SIZE(named)) * sizeof(*cases));
	if (!cases)
		return 1;
	for (i = 0; i < (int)KT_ARRAY_SIZE(named); i++)
		cases[n++] = named[i];
	return kt_main(argc, argv, "graph", cases, n);
}
