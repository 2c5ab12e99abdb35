// SPDX-License-Identifier: GPL-2.0
/*
 * Programs run concurrently by runtime.c through BPF_PROG_TEST_RUN, after
 * the seed's test_spin_lock.c: a hash counter that must read 1 inside the
 * lock, a "virtual queue" credit scheme in an array, a cgroup storage
 * counter, and exact counters that every run increments.
 */
#include "bpflock.h"

struct hmap_elem {
	volatile int cnt;
	struct bpf_spin_lock lock;
	int test_padding;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct hmap_elem);
} hmap SEC(".maps");

struct cls_elem {
	struct bpf_spin_lock lock;
	volatile int cnt;
};

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct cls_elem);
} cls_map SEC(".maps");

struct vqueue {
	struct bpf_spin_lock lock;
	unsigned long long lasttime;
	int credit;
	unsigned int rate;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct vqueue);
} vqueue SEC(".maps");

/* Exact counters: slot 0 under the lock, slot 1 without it. */
struct counter {
	struct bpf_spin_lock lock;
	__u64 locked;
	__u64 unlocked;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct counter);
} counters SEC(".maps");

#define CREDIT_PER_NS(delta, rate) (((delta) * (rate)) >> 20)
#define MAX_CREDIT 100000

/*
 * Returns 1 (cgroup_skb's "pass") when every invariant held in this run,
 * 0 otherwise: the hash counter read
 * exactly 1 while this run held its lock, the cgroup storage counter read 1
 * under its lock, and the queue's credit (exercised as in the seed) stayed
 * within its bounds.
 */
SEC("cgroup_skb/ingress")
int seed_spin_lock(struct __sk_buff *skb)
{
	struct hmap_elem zero = {}, *val;
	unsigned long long curtime;
	struct cls_elem *cls;
	struct vqueue *q;
	int key = 0, err = 0;

	val = bpf_map_lookup_elem(&hmap, &key);
	if (!val) {
		bpf_map_update_elem(&hmap, &key, &zero, 0);
		val = bpf_map_lookup_elem(&hmap, &key);
		if (!val)
			return 0;
	}
	bpf_spin_lock(&val->lock);
	if (val->cnt)
		err = 2;
	val->cnt++;
	if (val->cnt != 1)
		err = 3;
	val->cnt--;
	bpf_spin_unlock(&val->lock);

	q = bpf_map_lookup_elem(&vqueue, &key);
	if (!q)
		return 0;
	curtime = bpf_ktime_get_ns();
	bpf_spin_lock(&q->lock);
	q->credit += CREDIT_PER_NS(curtime - q->lasttime, q->rate);
	q->lasttime = curtime;
	if (q->credit > MAX_CREDIT)
		q->credit = MAX_CREDIT;
	q->credit -= skb->len;
	/* The test leaves rate at 0: refill by hand once spent. */
	if (q->credit < 0)
		q->credit = MAX_CREDIT;
	if (q->credit < 0 || q->credit > MAX_CREDIT)
		err = 5;
	bpf_spin_unlock(&q->lock);

	cls = bpf_get_local_storage(&cls_map, 0);
	bpf_spin_lock(&cls->lock);
	cls->cnt++;
	if (cls->cnt != 1)
		err = 6;
	cls->cnt--;
	bpf_spin_unlock(&cls->lock);
	return !err;
}

SEC("tc")
int count(struct __sk_buff *skb)
{
	struct counter *c;
	int key = 0;
	__u64 v;

	c = bpf_map_lookup_elem(&counters, &key);
	if (!c)
		return 1;
	bpf_spin_lock(&c->lock);
	c->locked++;
	bpf_spin_unlock(&c->lock);
	/* The same increment without the lock: a plain load and store. */
	v = *(volatile __u64 *)&c->unlocked;
	*(volatile __u64 *)&c->unlocked = v + 1;
	return 0;
}
