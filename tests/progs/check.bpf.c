// SPDX-License-Identifier: GPL-2.0
/*
 * bpflock-check's program: a socket filter that counts under a
 * bpf_spin_lock. Stock 6.1 refuses it ("socket filter progs cannot use
 * bpf_spin_lock yet"); a kernel with bpflock loads and runs it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct check_val {
	struct bpf_spin_lock lock;
	__u64 runs;
	__u64 twin;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct check_val);
} check_map SEC(".maps");

SEC("socket")
int check_lock(struct __sk_buff *skb)
{
	struct check_val *v;
	__u32 key = 0;

	v = bpf_map_lookup_elem(&check_map, &key);
	if (!v)
		return 0;
	bpf_spin_lock(&v->lock);
	v->runs++;
	v->twin++;
	bpf_spin_unlock(&v->lock);
	return 0;
}

char _license[] SEC("license") = "GPL";
