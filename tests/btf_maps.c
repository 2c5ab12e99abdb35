// SPDX-License-Identifier: GPL-2.0
/*
 * Where a struct bpf_spin_lock may sit in a map value, and which map types
 * may hold one: map creation results, and what the verifier says when a
 * program then tries to take the lock. The BTF is built by hand so that
 * layouts a C compiler would not produce can be tried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "insn.h"
#include "progs.h"

#define ENOTSUPP 524

/*
 * Map types that cannot hold a lock: stock 6.1 refuses
 * them with the kernel-internal ENOTSUPP (524), ours and stock-6.12 with
 * EOPNOTSUPP, a code user space can name (see docs/design.md).
 */
#define REFUSED (-1)

static int refused_errno(void)
{
	if (!strcmp(kt_variant(), "stock") && !strcmp(kt_base(), "6.1"))
		return ENOTSUPP;
	return EOPNOTSUPP;
}

enum shape {
	TOP_LEVEL,	/* struct { int cnt; struct bpf_spin_lock l; } */
	TWO_LOCKS,	/* struct { struct bpf_spin_lock a, b; int c; } */
	NESTED,		/* struct { int cnt; struct { int x; lock l; } in; } */
	UNION_VALUE,	/* union { struct bpf_spin_lock l; int x; } */
	UNION_MEMBER,	/* struct { int cnt; union { lock l; int x; } u; } */
	NOT_STRUCT,	/* int */
	MISALIGNED,	/* struct { short s; lock l (offset 2); short t; } */
	WRONG_SIZE,	/* struct { int cnt; struct bpf_spin_lock (8 bytes) l; } */
	PAST_END,	/* struct of 6 bytes { int cnt; lock l (offset 4); } */
	/* packed { char pad[N]; struct { lock l; } in (offset N); } */
	NESTED_AT_64,	/* N = 64: the lock aligned */
	NESTED_AT_62,	/* N = 62: bytes 62..65 of a 64-byte line */
};

struct value_btf {
	int fd;
	__u32 value_id;
	__u32 value_size;
	__u32 key_id;
	__u32 u64_id;	/* cgroup storage keys */
};

/* Build and load a BTF with an int key and a value of the given shape. */
static int make_btf(enum shape shape, struct value_btf *vb)
{
	struct btf *b = btf__new_empty();
	int i32, i16, lock, lock8, inner, pad, v = -1, err, n;

	if (!b)
		return -ENOMEM;
	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	i16 = btf__add_int(b, "short", 2, BTF_INT_SIGNED);
	lock = btf__add_struct(b, "bpf_spin_lock", 4);
	btf__add_field(b, "val", i32, 0, 0);
	vb->key_id = i32;
	vb->u64_id = btf__add_int(b, "unsigned long long", 8, 0);
	switch (shape) {
	case TOP_LEVEL:
		v = btf__add_struct(b, "val", 8);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "l", lock, 32, 0);
		break;
	case TWO_LOCKS:
		v = btf__add_struct(b, "val", 12);
		btf__add_field(b, "a", lock, 0, 0);
		btf__add_field(b, "b", lock, 32, 0);
		btf__add_field(b, "c", i32, 64, 0);
		break;
	case NESTED:
		inner = btf__add_struct(b, "inner", 8);
		btf__add_field(b, "x", i32, 0, 0);
		btf__add_field(b, "l", lock, 32, 0);
		v = btf__add_struct(b, "val", 12);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "in", inner, 32, 0);
		break;
	case UNION_VALUE:
		v = btf__add_union(b, "val", 4);
		btf__add_field(b, "l", lock, 0, 0);
		btf__add_field(b, "x", i32, 0, 0);
		break;
	case UNION_MEMBER:
		inner = btf__add_union(b, "u", 4);
		btf__add_field(b, "l", lock, 0, 0);
		btf__add_field(b, "x", i32, 0, 0);
		v = btf__add_struct(b, "val", 8);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "u", inner, 32, 0);
		break;
	case NOT_STRUCT:
		v = i32;
		break;
	case MISALIGNED:
		v = btf__add_struct(b, "val", 8);
		btf__add_field(b, "s", i16, 0, 0);
		btf__add_field(b, "l", lock, 16, 0);
		btf__add_field(b, "t", i16, 48, 0);
		break;
	case WRONG_SIZE:
		lock8 = btf__add_struct(b, "bpf_spin_lock", 8);
		btf__add_field(b, "val", i32, 0, 0);
		btf__add_field(b, "pad", i32, 32, 0);
		v = btf__add_struct(b, "val", 12);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "l", lock8, 32, 0);
		break;
	case PAST_END:
		v = btf__add_struct(b, "val", 6);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "l", lock, 32, 0);
		break;
	case NESTED_AT_64:
	case NESTED_AT_62:
		n = shape == NESTED_AT_64 ? 64 : 62;
		inner = btf__add_struct(b, "inner", 4);
		btf__add_field(b, "l", lock, 0, 0);
		pad = btf__add_array(b, i32, btf__add_int(b, "char", 1, BTF_INT_CHAR), n);
		v = btf__add_struct(b, "val", n + 4);
		btf__add_field(b, "pad", pad, 0, 0);
		btf__add_field(b, "in", inner, n * 8, 0);
		break;
	}
	vb->value_id = v;
	vb->value_size = btf__resolve_size(b, v);
	err = btf__load_into_kernel(b);
	vb->fd = err ? err : btf__fd(b);
	if (!err)
		vb->fd = dup(vb->fd);
	btf__free(b);
	return vb->fd < 0 ? vb->fd : 0;
}

static int create_map(enum bpf_map_type type, const struct value_btf *vb,
		      __u32 key_size, __u32 key_id, __u32 max_entries, __u32 flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		.btf_fd = vb->fd,
		.btf_key_type_id = key_id,
		.btf_value_type_id = vb->value_id,
		.map_flags = flags,
	);

	return bpf_map_create(type, "lockmap", key_size, vb->value_size,
			      max_entries, &opts);
}

struct shape_case {
	enum shape shape;
	int lock_off;	/* where the program points the helper */
	int prog_err;	/* 0: the program loads */
	const char *msg;
	/*
	 * On 6.12 the lock is a field of the value's btf_record, found in
	 * nested structs too, and the program's BTF is parsed for it when
	 * loaded: a shape may be refused with the BTF (btf_err), and the
	 * verifier has one message for a value without a usable lock.
	 */
	int btf_err_612;
	int prog_err_612;
};

#define NO_VALID_LOCK_612 "map 'lockmap' has no valid bpf_spin_lock"

/* Load LOCK_PROG on @map_fd's lock at @off: 0 or -errno, the log in @log. */
static int load_lock_prog(int map_fd, int off, char *log, size_t size)
{
	struct bpf_insn insns[] = LOCK_PROG(map_fd, off);
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		.log_buf = log, .log_size = size, .log_level = 1);
	int fd;

	log[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "lockprog", "GPL",
			   insns, KT_ARRAY_SIZE(insns), &opts);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Create a hash map of that shape and load a program taking the lock. */
static void shape_check(struct kt *t, const void *arg)
{
	const struct shape_case *c = arg;
	bool on_612 = !strcmp(kt_base(), "6.12");
	int prog_err = on_612 ? c->prog_err_612 : c->prog_err;
	const char *msg = on_612 ? NO_VALID_LOCK_612 : c->msg;
	static char log[1 << 16];
	struct value_btf vb;
	int map_fd, err;

	if (on_612 && c->btf_err_612) {
		KT_ERR(t, make_btf(c->shape, &vb), c->btf_err_612, "BTF load");
		return;
	}
	if (!KT_OK(t, make_btf(c->shape, &vb), "BTF load"))
		return;
	map_fd = create_map(BPF_MAP_TYPE_HASH, &vb, 4, vb.key_id, 1, 0);
	if (!KT_OK(t, map_fd, "hash map creation"))
		return;
	err = load_lock_prog(map_fd, c->lock_off, log, sizeof(log));
	if (!prog_err) {
		if (!KT_OK(t, err, "program load"))
			kt_log(t, "verifier log:\n%s", log);
		return;
	}
	KT_ERR(t, err, prog_err, "program load");
	if (!log_has(log, msg))
		kt_fail(t, "verifier log lacks \"%s\"; log:\n%s", msg, log);
}

/* A member that runs past the struct's size is refused with the BTF. */
static void lock_past_value_end(struct kt *t, const void *arg)
{
	struct value_btf vb;

	KT_ERR(t, make_btf(PAST_END, &vb), EINVAL, "BTF load");
}

/*
 * A lock a packed value puts off its alignment through a nested struct,
 * 62 bytes in: in an array of 72-byte elements, element 0's word crosses
 * a cache line, and a lock cmpxchg on it is a split lock (a bus lock for
 * the whole machine; a fault in the kernel where the CPU detects split
 * locks, which TCG does not). Stock 6.12 takes the lock there, in
 * programs and BPF_F_LOCK (an attacker review of 6.12's 0030). Ours
 * refuses the struct's fields: the value holds no lock, as when a lock
 * declared in the value itself is misaligned, so a program's lock call
 * and BPF_F_LOCK are refused (or the BTF with it). The same value with
 * the struct 64 bytes in works. 6.1 finds no lock in a nested struct
 * (shape_nested): a 6.12 case.
 */
static void nested_misaligned_refused(struct kt *t, const void *arg)
{
	struct { char pad[64]; __u32 l; } v = {};
	static char log[1 << 16];
	struct value_btf vb;
	int fd, err;

	if (strcmp(kt_base(), "6.12")) {
		kt_skip(t, "base %s finds no lock in a nested struct (shape_nested)", kt_base());
		return;
	}
	if (!KT_OK(t, make_btf(NESTED_AT_64, &vb), "BTF load, lock 64 bytes in"))
		return;
	fd = create_map(BPF_MAP_TYPE_ARRAY, &vb, 4, vb.key_id, 8, 0);
	close(vb.fd);
	if (!KT_OK(t, fd, "array map, lock 64 bytes in"))
		return;
	KT_OK(t, bpf_map_update_elem(fd, &(int){ 0 }, &v, BPF_F_LOCK),
	      "BPF_F_LOCK update, lock 64 bytes in");
	KT_OK(t, load_lock_prog(fd, 64, log, sizeof(log)), "program locking 64 bytes in");
	close(fd);

	err = make_btf(NESTED_AT_62, &vb);
	if (err) {
		KT_ERR(t, err, EINVAL, "BTF load, lock 62 bytes in");
		return;
	}
	fd = create_map(BPF_MAP_TYPE_ARRAY, &vb, 4, vb.key_id, 8, 0);
	close(vb.fd);
	if (fd < 0) {
		KT_ERR(t, fd, EINVAL, "array map, lock 62 bytes in");
		return;
	}
	KT_ERR(t, bpf_map_update_elem(fd, &(int){ 0 }, &v, BPF_F_LOCK), EINVAL,
	       "BPF_F_LOCK update of element 0 (its word at bytes 62..65)");
	err = load_lock_prog(fd, 62, log, sizeof(log));
	if (KT_ERR(t, err, EINVAL, "program locking 62 bytes in") &&
	    !log_has(log, NO_VALID_LOCK_612))
		kt_fail(t, "log lacks \"%s\":\n%s", NO_VALID_LOCK_612, log);
	close(fd);
}

struct type_case {
	enum bpf_map_type type;
	__u32 key_size;		/* 0: no key BTF */
	__u32 max_entries;
	__u32 flags;
	int err;		/* 0: created */
};

/* Which map types accept a value with a lock. */
static void map_type_check(struct kt *t, const void *arg)
{
	const struct type_case *c = arg;
	struct value_btf vb;
	int fd;

	if (!KT_OK(t, make_btf(TOP_LEVEL, &vb), "BTF load"))
		return;
	fd = create_map(c->type, &vb, c->key_size,
			c->key_size == 4 ? vb.key_id : c->key_size == 8 ? vb.u64_id : 0,
			c->max_entries, c->flags);
	if (c->err)
		KT_ERR(t, fd, c->err == REFUSED ? refused_errno() : c->err, "map creation");
	else
		KT_OK(t, fd, "map creation");
}

/* A program may not write to a map holding a lock: no RDONLY_PROG maps. */
static void rdonly_prog_refused(struct kt *t, const void *arg)
{
	struct value_btf vb;

	if (!KT_OK(t, make_btf(TOP_LEVEL, &vb), "BTF load"))
		return;
	KT_ERR(t, create_map(BPF_MAP_TYPE_ARRAY, &vb, 4, vb.key_id, 1,
			     BPF_F_RDONLY_PROG), EACCES, "array with BPF_F_RDONLY_PROG");
}

/* Memory-mapping would expose the lock word: refused. */
static void mmap_refused(struct kt *t, const void *arg)
{
	struct value_btf vb;
	void *p;
	int fd;

	if (!KT_OK(t, make_btf(TOP_LEVEL, &vb), "BTF load"))
		return;
	fd = create_map(BPF_MAP_TYPE_ARRAY, &vb, 4, vb.key_id, 4, BPF_F_MMAPABLE);
	if (!KT_OK(t, fd, "mmapable array"))
		return;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		kt_fail(t, "mmap of an array holding a lock succeeded");
		munmap(p, 4096);
		return;
	}
	KT_EQ(t, errno, ENOTSUPP, "mmap errno");
}

#define SHAPE(n, s, off, err, m, btf_612, err_612) { n, KT_FEATURE, shape_check, \
	&(const struct shape_case){ s, off, err, m, btf_612, err_612 } }
#define TYPE(n, kind, ...) { n, kind, map_type_check,			\
	&(const struct type_case){ __VA_ARGS__ } }

static const struct kt_case cases[] = {
	/* 6.12: two locks and a misaligned one are refused with the BTF,
	 * a nested lock is found (EFAULT for the misaligned one is 6.12's:
	 * the struct names a lock, and its record comes out empty)
	 */
	SHAPE("shape_top_level", TOP_LEVEL, 4, 0, NULL, 0, 0),
	SHAPE("shape_two_locks", TWO_LOCKS, 0, EACCES,
	      "map 'lockmap' has more than one 'struct bpf_spin_lock'", E2BIG, 0),
	SHAPE("shape_nested", NESTED, 8, EACCES,
	      "map 'lockmap' doesn't have 'struct bpf_spin_lock'", 0, 0),
	SHAPE("shape_union_value", UNION_VALUE, 0, EACCES,
	      "map 'lockmap' is not a struct type or bpf_spin_lock is mangled", 0, EINVAL),
	SHAPE("shape_union_member", UNION_MEMBER, 4, EACCES,
	      "map 'lockmap' doesn't have 'struct bpf_spin_lock'", 0, EINVAL),
	SHAPE("shape_not_struct", NOT_STRUCT, 0, EACCES,
	      "map 'lockmap' is not a struct type or bpf_spin_lock is mangled", 0, EINVAL),
	SHAPE("shape_misaligned", MISALIGNED, 2, EACCES,
	      "map 'lockmap' is not a struct type or bpf_spin_lock is mangled", EFAULT, 0),
	SHAPE("shape_wrong_size", WRONG_SIZE, 4, EACCES,
	      "map 'lockmap' doesn't have 'struct bpf_spin_lock'", 0, EINVAL),
	{ "shape_past_value_end", KT_COMMON, lock_past_value_end },
	{ "shape_nested_misaligned_refused", KT_BEYOND, nested_misaligned_refused, NULL,
	  KT_ON_BASE("6.12", KT_BEYOND) },
	TYPE("type_hash", KT_COMMON, BPF_MAP_TYPE_HASH, 4, 1, 0, 0),
	TYPE("type_array", KT_COMMON, BPF_MAP_TYPE_ARRAY, 4, 1, 0, 0),
	TYPE("type_cgroup_storage", KT_COMMON, BPF_MAP_TYPE_CGROUP_STORAGE, 8, 0, 0, 0),
	TYPE("type_sk_storage", KT_COMMON, BPF_MAP_TYPE_SK_STORAGE, 4, 0,
	     BPF_F_NO_PREALLOC, 0),
	TYPE("type_task_storage", KT_COMMON, BPF_MAP_TYPE_TASK_STORAGE, 4, 0,
	     BPF_F_NO_PREALLOC, 0),
	TYPE("type_percpu_hash", KT_FEATURE, BPF_MAP_TYPE_PERCPU_HASH, 4, 1, 0, REFUSED),
	TYPE("type_percpu_array", KT_FEATURE, BPF_MAP_TYPE_PERCPU_ARRAY, 4, 1, 0, REFUSED),
	TYPE("type_lru_percpu_hash", KT_FEATURE, BPF_MAP_TYPE_LRU_PERCPU_HASH, 4, 1, 0, REFUSED),
	TYPE("type_percpu_cgroup_storage", KT_FEATURE, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE,
	     8, 0, 0, REFUSED),
	TYPE("type_queue", KT_COMMON, BPF_MAP_TYPE_QUEUE, 0, 1, 0, EINVAL),
	TYPE("type_stack", KT_COMMON, BPF_MAP_TYPE_STACK, 0, 1, 0, EINVAL),
	{ "rdonly_prog_refused", KT_FEATURE, rdonly_prog_refused },
	{ "mmap_refused", KT_FEATURE, mmap_refused },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "btf_maps", cases, KT_ARRAY_SIZE(cases));
}
