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
 * - xlated_hides_object_meta: a loader with CAP_BPF, CAP_PERFMON and
 *   CAP_NET_ADMIN but no CAP_SYSLOG (kptr_restrict=1) reads list_push_pop's
 *   translated program, where the verifier loaded the type's
 *   btf_struct_meta into R2 for bpf_obj_new() and bpf_obj_drop(): no
 *   64-bit immediate may hold a kernel address (stock-6.12 shows it, a
 *   heap address; found by the attacker review of 0026).
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
 * - the programs of progs/graph_pair.bpf.c (ours only): two lists, or a
 *   list and the global tree, changed together under bpf_spin_lock_pair();
 *   a root beside neither lock, a node after the unlock, and an object's
 *   lock in a pair refused.
 */
#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
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

#define KPTR_RESTRICT "/proc/sys/kernel/kptr_restrict"
#define KERNEL_HALF 0xff00000000000000ULL	/* x86-64, 4- and 5-level paging */

/*
 * In a child with only CAP_BPF, CAP_PERFMON and CAP_NET_ADMIN: load
 * list_push_pop and read its translated program. Exit status: the 64-bit
 * immediates that look like kernel addresses (capped at 50), 100 when
 * there is no plain 64-bit immediate at all (nothing was tested), 101 on
 * a setup error.
 */
static int meta_child(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};
	__u64 keep = (1ULL << CAP_BPF) | (1ULL << CAP_PERFMON) | (1ULL << CAP_NET_ADMIN);
	struct embedded_obj o = EMBEDDED_OBJ(graph);
	struct kt t = { .name = "meta_child" };
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), i, n;
	struct bpf_insn insns[512];
	struct bpf_object *obj;
	int fd, plain = 0, kernel = 0;
	__u64 imm;

	d[0].effective = d[0].permitted = (__u32)keep;
	d[1].effective = d[1].permitted = keep >> 32;
	if (syscall(SYS_capset, &h, d))
		return 101;
	obj = obj_load(&t, &o, (const char *const[]){ "list_push_pop", NULL });
	if (!obj)
		return 101;
	fd = obj_prog_fd(&t, obj, "list_push_pop");
	info.xlated_prog_len = sizeof(insns);
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || !info.xlated_prog_len ||
	    info.xlated_prog_len > sizeof(insns))
		return 101;
	n = info.xlated_prog_len / sizeof(insns[0]);
	for (i = 0; i + 1 < n; i++) {
		if (insns[i].code != (BPF_LD | BPF_IMM | BPF_DW) || insns[i].src_reg)
			continue;
		imm = (__u64)(__u32)insns[i + 1].imm << 32 | (__u32)insns[i].imm;
		printf("    # xlated_hides_object_meta: insn %u: r%u = %#llx\n", i, insns[i].dst_reg,
		       (unsigned long long)imm);
		plain++;
		if (imm >= KERNEL_HALF)
			kernel++;
		i++;
	}
	bpf_object__close(obj);
	if (!plain)
		return 100;
	return kernel > 50 ? 50 : kernel;
}

static void xlated_hides_object_meta(struct kt *t, const void *arg)
{
	int restrict_was = sysctl_get(KPTR_RESTRICT), st = -1;
	pid_t pid;

	if (!KT_TRUE(t, restrict_was >= 0 && sysctl_set(KPTR_RESTRICT, 1), "kptr_restrict=1"))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		st = meta_child();
		fflush(stdout);
		_exit(st);
	}
	if (KT_TRUE(t, pid > 0, "fork") && KT_TRUE(t, waitpid(pid, &st, 0) == pid, "waitpid") &&
	    KT_TRUE(t, WIFEXITED(st) && WEXITSTATUS(st) != 101,
		    "the child loads list_push_pop and reads its translated program") &&
	    KT_TRUE(t, WEXITSTATUS(st) != 100, "the program has a plain 64-bit immediate"))
		KT_EQ(t, WEXITSTATUS(st), 0, "kernel addresses shown without CAP_SYSLOG");
	sysctl_set(KPTR_RESTRICT, restrict_was);
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
		{ "xlated_hides_object_meta", KT_BEYOND, xlated_hides_object_meta, NULL,
		  KT_ON_BASE("6.12", KT_BEYOND) },
	};
	struct embedded_obj fail = EMBEDDED_OBJ(graph_fail);
	struct embedded_obj pair = EMBEDDED_OBJ(graph_pair);
	struct kt_case *cases, *pcases;
	int n, np, i;

	n = annotated_cases(&fail, &cases);
	np = annotated_cases(&pair, &pcases);
	if (n < 0 || np < 0) {
		fprintf(stderr, "cannot read the programs of %s and %s\n", fail.name, pair.name);
		return 1;
	}
	cases = realloc(cases, (n + np + KT_ARRAY_SIZE(named)) * sizeof(*cases));
	if (!cases)
		return 1;
	for (i = 0; i < np; i++)
		cases[n++] = pcases[i];
	for (i = 0; i < (int)KT_ARRAY_SIZE(named); i++)
		cases[n++] = named[i];
	return kt_main(argc, argv, "graph", cases, n);
}
