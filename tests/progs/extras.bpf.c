// SPDX-License-Identifier: GPL-2.0
/*
 * Maps and programs for what stock 6.1 grew since 2019 and ours must keep:
 * BPF_F_LOCK on local storage (task, socket, inode) and in batch
 * operations, and bpf_timer, whose kernel side shares the lock's machinery.
 */
#include "bpflock.h"

struct locked {
	struct bpf_spin_lock lock;
	int var[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8);
	__type(key, int);
	__type(value, struct locked);
} batch_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, int);
	__type(value, struct locked);
} batch_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct locked);
} task_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct locked);
} sk_store SEC(".maps");

/* Needs CONFIG_BPF_LSM and "bpf" in the active LSMs: created only by
 * tests/stock_extras.c's inode_storage_lock.
 */
struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct locked);
} inode_store SEC(".maps");

struct timer_elem {
	struct bpf_timer timer;
	int fired;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct timer_elem);
} timers SEC(".maps");

static int timer_cb(void *map, int *key, struct timer_elem *e)
{
	__sync_fetch_and_add(&e->fired, 1);
	return 0;
}

SEC("tc")
int arm_timer(struct __sk_buff *skb)
{
	struct timer_elem *e;
	int key = 0;

	e = bpf_map_lookup_elem(&timers, &key);
	if (!e)
		return 1;
	if (bpf_timer_init(&e->timer, &timers, 1 /* CLOCK_MONOTONIC */))
		return 2;
	if (bpf_timer_set_callback(&e->timer, timer_cb))
		return 3;
	if (bpf_timer_start(&e->timer, 1000, 0))
		return 4;
	return 0;
}
