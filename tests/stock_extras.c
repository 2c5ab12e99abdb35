// SPDX-License-Identifier: GPL-2.0
/*
 * What stock 6.1 added since 2019 and ours must keep: BPF_F_LOCK on
 * lookup_and_delete and on batch operations, on task, socket and inode
 * local storage, and bpf_timer (which shares the lock's kernel machinery).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "progs.h"

#define N 8

struct locked {
	struct bpf_spin_lock lock;
	int var[4];
};

/*
 * Load the maps and the named program; the inode storage map only for
 * the case that uses it, so that the others do not depend on BPF LSM.
 */
static struct bpf_object *load_extras(struct kt *t, const char *prog, bool inode)
{
	struct embedded_obj o = EMBEDDED_OBJ(extras);
	struct bpf_object *obj = obj_open(t, &o, (const char *const[]){ prog, NULL });
	int err;

	if (!obj)
		return NULL;
	bpf_map__set_autocreate(bpf_object__find_map_by_name(obj, "inode_store"), inode);
	err = bpf_object__load(obj);
	if (err) {
		kt_fail(t, "loading %s from extras: %s", prog ? prog : "maps", strerror(-err));
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

static struct bpf_object *open_extras(struct kt *t, const char *prog)
{
	return load_extras(t, prog, false);
}

static void set(struct locked *l, int v)
{
	l->lock.val = 0xdeadbeef;
	l->var[0] = l->var[1] = l->var[2] = l->var[3] = v;
}

static void lookup_and_delete_lock(struct kt *t, const void *arg)
{
	struct bpf_object *obj = open_extras(t, NULL);
	struct locked v, out;
	int key = 1, map;

	if (!obj)
		return;
	map = obj_map_fd(t, obj, "batch_hash");
	set(&v, 5);
	if (KT_OK(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK), "update") &&
	    KT_OK(t, bpf_map_lookup_and_delete_elem_flags(map, &key, &out, BPF_F_LOCK),
		  "lookup_and_delete with BPF_F_LOCK")) {
		KT_EQ(t, out.var[2], 5, "value");
		KT_EQ(t, out.lock.val, 0, "lock word");
		KT_ERR(t, bpf_map_lookup_elem(map, &key, &out), ENOENT, "lookup after delete");
	}
	KT_ERR(t, bpf_map_lookup_and_delete_elem_flags(map, &key, &out, 1ULL << 3), EINVAL,
	       "lookup_and_delete with an unknown flag");
	bpf_object__close(obj);
}

static void batch_ops(struct kt *t, const char *map_name, bool can_delete)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_F_LOCK);
	struct bpf_object *obj = open_extras(t, NULL);
	int keys[N], okeys[N], i, map;
	struct locked vals[N], ovals[N];
	__u32 count = N, batch;

	if (!obj)
		return;
	map = obj_map_fd(t, obj, map_name);
	for (i = 0; i < N; i++) {
		keys[i] = i;
		set(&vals[i], 100 + i);
	}
	if (!KT_OK(t, bpf_map_update_batch(map, keys, vals, &count, &opts),
		   "update_batch with BPF_F_LOCK"))
		goto out;
	KT_EQ(t, count, N, "elements updated");
	count = N;
	memset(ovals, 0xff, sizeof(ovals));
	if (bpf_map_lookup_batch(map, NULL, &batch, okeys, ovals, &count, &opts) &&
	    errno != ENOENT) {
		kt_fail(t, "lookup_batch with BPF_F_LOCK: %s", strerror(errno));
		goto out;
	}
	KT_EQ(t, count, N, "elements looked up");
	for (i = 0; i < (int)count; i++) {
		KT_EQ(t, ovals[i].var[3], 100 + okeys[i], "value of a looked-up element");
		KT_EQ(t, ovals[i].lock.val, 0, "lock word of a looked-up element");
	}
	if (can_delete) {
		count = N;
		if (bpf_map_lookup_and_delete_batch(map, NULL, &batch, okeys, ovals, &count,
						    &opts) && errno != ENOENT)
			kt_fail(t, "lookup_and_delete_batch with BPF_F_LOCK: %s", strerror(errno));
		KT_EQ(t, count, N, "elements looked up and deleted");
	}
	opts.elem_flags = 1ULL << 3;
	count = N;
	KT_ERR(t, bpf_map_update_batch(map, keys, vals, &count, &opts), EINVAL,
	       "update_batch with an unknown flag");
out:
	bpf_object__close(obj);
}

static void batch_hash(struct kt *t, const void *arg)
{
	batch_ops(t, "batch_hash", true);
}

static void batch_array(struct kt *t, const void *arg)
{
	batch_ops(t, "batch_array", false);
}

/* Local storage keyed by an fd (a pidfd, a socket, a file) from user space. */
static void storage_roundtrip(struct kt *t, const char *map_name, int key)
{
	struct bpf_object *obj = load_extras(t, NULL, !strcmp(map_name, "inode_store"));
	struct locked v, out;
	int map;

	if (!obj)
		return;
	map = obj_map_fd(t, obj, map_name);
	set(&v, 9);
	if (KT_OK(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_NOEXIST),
		  "create with BPF_F_LOCK | BPF_NOEXIST")) {
		set(&v, 10);
		KT_OK(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_EXIST),
		      "update in place with BPF_F_LOCK | BPF_EXIST");
		if (KT_OK(t, bpf_map_lookup_elem_flags(map, &key, &out, BPF_F_LOCK),
			  "lookup with BPF_F_LOCK")) {
			KT_EQ(t, out.var[1], 10, "value");
			KT_EQ(t, out.lock.val, 0, "lock word");
		}
	}
	KT_ERR(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_EXIST | BPF_NOEXIST),
	       EINVAL, "BPF_EXIST | BPF_NOEXIST | BPF_F_LOCK");
	bpf_object__close(obj);
}

static void task_storage_lock(struct kt *t, const void *arg)
{
	int pidfd = syscall(SYS_pidfd_open, getpid(), 0);

	if (KT_OK(t, pidfd, "pidfd_open"))
		storage_roundtrip(t, "task_store", pidfd);
}

static void sk_storage_lock(struct kt *t, const void *arg)
{
	int sk = socket(AF_INET, SOCK_DGRAM, 0);

	if (KT_OK(t, sk, "socket"))
		storage_roundtrip(t, "sk_store", sk);
}

/*
 * Inode storage exists with CONFIG_BPF_LSM and "bpf" among the active
 * LSMs, which config/base.config gives every variant: not skipped.
 */
static void inode_storage_lock(struct kt *t, const void *arg)
{
	int fd = memfd_create("bpflock-inode", MFD_CLOEXEC);

	if (KT_OK(t, fd, "memfd_create"))
		storage_roundtrip(t, "inode_store", fd);
}

/* A bpf_timer armed by a program fires its callback. */
static void timer_still_works(struct kt *t, const void *arg)
{
	struct bpf_object *obj = open_extras(t, "arm_timer");
	struct { char timer[16]; int fired; } e;
	int prog, map, key = 0, i;
	__u32 retval;

	if (!obj)
		return;
	prog = obj_prog_fd(t, obj, "arm_timer");
	map = obj_map_fd(t, obj, "timers");
	if (prog >= 0 && KT_OK(t, prog_run(prog, 1, &retval), "test_run") &&
	    KT_EQ(t, retval, 0, "arm_timer's return value")) {
		for (i = 0; i < 100; i++) {
			usleep(10000);
			if (!bpf_map_lookup_elem(map, &key, &e) && e.fired)
				break;
		}
		KT_EQ(t, e.fired, 1, "callbacks run");
	}
	bpf_object__close(obj);
}

static const struct kt_case cases[] = {
	{ "lookup_and_delete_lock", KT_FEATURE, lookup_and_delete_lock },
	{ "batch_hash_lock", KT_FEATURE, batch_hash },
	{ "batch_array_lock", KT_FEATURE, batch_array },
	{ "task_storage_lock", KT_FEATURE, task_storage_lock },
	{ "sk_storage_lock", KT_FEATURE, sk_storage_lock },
	{ "inode_storage_lock", KT_FEATURE, inode_storage_lock },
	{ "timer_still_works", KT_COMMON, timer_still_works },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "stock_extras", cases, KT_ARRAY_SIZE(cases));
}
