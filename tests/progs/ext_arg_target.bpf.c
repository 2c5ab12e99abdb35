// SPDX-License-Identifier: GPL-2.0
/*
 * A tc program with a global function that ext_arg_*.bpf.c replace. The
 * function takes a struct of 4 bytes and is called with element 0's cnt,
 * which the lock word follows: the caller's check covers those 4 bytes.
 */
#include "bpflock.h"

struct elem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct elem);
} ext_arg_map SEC(".maps");

struct ext_arg {
	int v;
};

__attribute__((noinline)) int ext_fill(struct ext_arg *a)
{
	if (!a)
		return 0;
	a->v = 1;
	return 1;
}

SEC("tc")
int ext_arg_target(struct __sk_buff *skb)
{
	int key = 0;
	struct elem *e = bpf_map_lookup_elem(&ext_arg_map, &key);

	if (!e)
		return 0;
	return ext_fill((struct ext_arg *)&e->cnt);
}
