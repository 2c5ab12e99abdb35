// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for tests/jit.c: one element {a, lock, b}; every run adds one
 * to a and b under the lock, so a == b in every locked read and both equal
 * the number of runs at the end, whichever path (the x86-64 JIT's inline
 * lock or the helper) each run took.
 */
#include "bpflock.h"

struct elem {
	__u64 a;
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct elem);
} elems SEC(".maps");

SEC("tc")
int bump(struct __sk_buff *skb)
{
	int key = 0;
	struct elem *e = bpf_map_lookup_elem(&elems, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	bpf_spin_unlock(&e->lock);
	return 0;
}
