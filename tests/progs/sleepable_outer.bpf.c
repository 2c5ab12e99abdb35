// SPDX-License-Identifier: GPL-2.0
/*
 * Sleepable programs may not reach a lock through an outer map
 * (tests/sleepable.c): an inner map removed from its outer map is freed
 * after a normal RCU grace period, which a sleepable program does not
 * hold while it runs. The same program, not sleepable, is accepted. Kept
 * apart from progs/sleepable.bpf.c: stock 6.1 cannot create an outer map
 * whose inner maps hold a lock at all (ENOTSUPP), which would fail every
 * load of that object.
 */
#include "bpflock.h"

struct oelem {
	long a;
	struct bpf_spin_lock lock;
	long b;
};

struct inner_t {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct oelem);
};

struct inner_t sl_inner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner_t);
} sl_outer SEC(".maps") = {
	.values = { [0] = &sl_inner },
};

static __always_inline int outer_bump(void)
{
	int key = 0;
	struct oelem *e;
	void *inner;

	inner = bpf_map_lookup_elem(&sl_outer, &key);
	if (!inner)
		return 1;
	e = bpf_map_lookup_elem(inner, &key);
	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

#define OUTER_MSG "sleepable programs cannot use inner maps holding a bpf_spin_lock: " \
	"pass the inner map to the program directly"

SEC("syscall") __beyond __failure __errno(EINVAL) __msg(OUTER_MSG)
int outer_lock_syscall(void *ctx)
{
	return outer_bump();
}

SEC("fentry.s/__x64_sys_getpgid") __beyond __failure __errno(EINVAL) __msg(OUTER_MSG)
int outer_lock_fentry_s(void *ctx)
{
	outer_bump();
	return 0;
}

SEC("lsm.s/file_open") __beyond __failure __errno(EINVAL) __msg(OUTER_MSG)
int outer_lock_lsm_s(void *ctx)
{
	outer_bump();
	return 0;
}

/* The same map and code, not sleepable: accepted (0013, 0016). */
SEC("fentry/__x64_sys_getpgid") __beyond __success __load_only
int outer_lock_fentry(void *ctx)
{
	outer_bump();
	return 0;
}

/* The inner map passed directly: accepted. */
SEC("syscall") __beyond __success __load_only
int inner_direct_syscall(void *ctx)
{
	int key = 0;
	struct oelem *e = bpf_map_lookup_elem(&sl_inner, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	bpf_spin_unlock(&e->lock);
	return 0;
}
