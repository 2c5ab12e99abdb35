// SPDX-License-Identifier: GPL-2.0
/*
 * The writer side of the BPF_F_LOCK tests, after the seed's
 * test_map_lock.c: one random value written into all 16 ints of a hash
 * element and of an array element, each under the element's lock.
 */
#include "bpflock.h"

#define VAR_NUM 16

struct hmap_elem {
	struct bpf_spin_lock lock;
	int var[VAR_NUM];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct hmap_elem);
} hash_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct hmap_elem);
} array_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct hmap_elem);
} cg_storage SEC(".maps");

struct plain {
	int var[VAR_NUM];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct plain);
} plain_hash SEC(".maps");

static __always_inline void fill(struct hmap_elem *e, int v)
{
	int i;

	bpf_spin_lock(&e->lock);
	for (i = 0; i < VAR_NUM; i++)
		e->var[i] = v;
	bpf_spin_unlock(&e->lock);
}

SEC("tc")
int write_uniform(struct __sk_buff *skb)
{
	int key = 0, v = bpf_get_prandom_u32();
	struct hmap_elem *e;

	e = bpf_map_lookup_elem(&hash_map, &key);
	if (e)
		fill(e, v);
	e = bpf_map_lookup_elem(&array_map, &key);
	if (e)
		fill(e, v);
	return 0;
}

/* Attached to a cgroup so that its storage exists; fills it when run. */
SEC("cgroup_skb/ingress")
int fill_cg_storage(struct __sk_buff *skb)
{
	struct hmap_elem *e = bpf_get_local_storage(&cg_storage, 0);

	fill(e, 7);
	return 1;
}
