// SPDX-License-Identifier: GPL-2.0
/*
 * An extension (freplace) of a tracing program's function that takes a
 * lock: it would run in NMI with no guard at its entry.
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
} emap SEC(".maps");

SEC("freplace/global_fn")
int ext_lock(int x)
{
	int key = 0;
	struct elem *e = bpf_map_lookup_elem(&emap, &key);

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return x + 1;
}
