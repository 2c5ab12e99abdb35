// SPDX-License-Identifier: GPL-2.0
/*
 * Sleepable programs that reach their lock through an outer map
 * (tests/sleepable.c). An inner map removed from its outer map while a
 * sleepable program may still use it is freed only after an RCU tasks
 * trace grace period too (free_after_mult_rcu_gp), so ours allows them.
 * The syscall program looks the inner map up, then calls a sleepable
 * helper (bpf_copy_from_user) before it looks the element up and locks
 * it: user space may replace and drop that inner map meanwhile.
 *
 * Kept apart from progs/sleepable.bpf.c: stock 6.1 cannot create an
 * outer map whose inner maps hold a lock at all (ENOTSUPP), which would
 * fail every load of that object.
 */
#include "bpflock.h"

struct oelem {
	long a;
	struct bpf_spin_lock lock;
	long b;			/* always equal to a under the lock */
};

struct inner_t {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct oelem);
};

/* swapped in outer[0] under the programs by tests/sleepable.c */
struct inner_t sl_inner SEC(".maps");
struct inner_t sl_inner_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner_t);
} sl_outer SEC(".maps") = {
	.values = { [0] = &sl_inner },
};

struct copy_ctx {
	__u64 src;
};

static __always_inline int inner_add(void *inner, long n)
{
	int key = 0;
	struct oelem *e = bpf_map_lookup_elem(inner, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->a += n;
	e->b += n;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* Lock element 0 of outer[0]'s inner map; 0 on success. */
static __always_inline int outer_add(long n)
{
	int key = 0;
	void *inner = bpf_map_lookup_elem(&sl_outer, &key);

	return inner ? inner_add(inner, n) : 1;
}

/* the contender, on every vCPU */
SEC("tc") __beyond __success __retval(0)
__on("6.12", "kind=feature")
int outer_tc_bump(struct __sk_buff *skb)
{
	return outer_add(1);
}

/*
 * Run by tests/sleepable.c: adds the amount at ctx->src, read between
 * the lookup of the inner map and the lock of its element.
 */
SEC("syscall") __beyond __success __load_only
__on("6.12", "kind=feature")
int outer_lock_syscall(struct copy_ctx *ctx)
{
	int key = 0;
	void *inner = bpf_map_lookup_elem(&sl_outer, &key);
	long n = 0;

	if (!inner)
		return 1;
	if (bpf_copy_from_user(&n, sizeof(n), (void *)ctx->src))
		return 2;
	if (n < 1 || n > 100)
		return 3;
	return inner_add(inner, n) ? 4 : 0;
}

SEC("fentry.s/__x64_sys_getpgid") __needs_error_injection __beyond __success __load_only
__on("6.12", "kind=feature")
int outer_lock_fentry_s(void *ctx)
{
	outer_add(1);
	return 0;
}

SEC("lsm.s/file_open") __beyond __success __load_only
__on("6.12", "kind=feature")
int outer_lock_lsm_s(void *ctx)
{
	outer_add(1);
	return 0;
}

/* Still no sleepable helper under a lock reached through an outer map. */
SEC("syscall") __beyond __failure __errno(EINVAL)
__msg("function calls are not allowed while holding a lock: bpf_copy_from_user#148 is not one of")
__on("6.12", "kind=beyond")
int outer_copy_under_lock(struct copy_ctx *ctx)
{
	int key = 0;
	void *inner = bpf_map_lookup_elem(&sl_outer, &key);
	struct oelem *e;
	long n = 0;

	if (!inner)
		return 1;
	e = bpf_map_lookup_elem(inner, &key);
	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	bpf_copy_from_user(&n, sizeof(n), (void *)ctx->src);
	e->a += n;
	e->b += n;
	bpf_spin_unlock(&e->lock);
	return 0;
}
