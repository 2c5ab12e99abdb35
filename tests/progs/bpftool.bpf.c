// SPDX-License-Identifier: GPL-2.0
/*
 * The maps and the writer of tests/bpftool.c: a hash map whose values
 * hold 64 bytes on each side of their lock, a tc program that rewrites
 * all of a random element under the lock, and a map without a lock.
 */
#include "bpflock.h"

#define KEYS 16
#define HALF 8

struct elem {
	__u64 a[HALF];
	struct bpf_spin_lock lock;
	__u64 b[HALF];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KEYS);
	__type(key, __u32);
	__type(value, struct elem);
} lock_hash SEC(".maps");

struct plain {
	__u64 a[HALF];
	__u64 b[HALF];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KEYS);
	__type(key, __u32);
	__type(value, struct plain);
} plain_hash SEC(".maps");

/* Every field of the element becomes its a[0] + 1. */
SEC("tc")
int rewrite(struct __sk_buff *skb)
{
	__u32 key = bpf_get_prandom_u32() % KEYS;
	struct elem *e;
	__u64 v;
	int i;

	e = bpf_map_lookup_elem(&lock_hash, &key);
	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	v = e->a[0] + 1;
	for (i = 0; i < HALF; i++)
		e->a[i] = v;
	for (i = 0; i < HALF; i++)
		e->b[i] = v;
	bpf_spin_unlock(&e->lock);
	return 0;
}
