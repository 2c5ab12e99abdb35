// SPDX-License-Identifier: GPL-2.0
/*
 * A timer whose callback program it holds the last reference of, freed by
 * an update of its element (attacker review of patches/6.12 0023-0025):
 * the put of that program with interrupts off schedules work, and the
 * worker's wakeup runs sched_ext's programs; inside the timer's lock
 * region they took locks over its saved flags, or the lock it held.
 * wake_watch sees every queue_work_on() of the test's process and counts
 * those entered while the timer's own lock word is held.
 */
#include "bpflock.h"

struct tval {
	struct bpf_timer t;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct tval);
} tmap SEC(".maps");

struct wstats {
	long calls;
	long under_lock;	/* with the timer's lock word held */
	unsigned long lock;	/* its address, from timer_setup */
	int tgid;		/* set by the test: only its process counts */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct wstats);
} wstats SEC(".maps");

static int timer_cb(void *map, int *key, struct tval *v)
{
	return 0;
}

/* Sets up element 0's timer with this program as its callback's. */
SEC("tc")
int timer_setup(struct __sk_buff *skb)
{
	int key = 0;
	struct tval *v = bpf_map_lookup_elem(&tmap, &key);

	struct wstats *s = bpf_map_lookup_elem(&wstats, &key);

	if (!v || !s)
		return 1;
	/* struct bpf_timer: the callback's pointer, then the lock word */
	s->lock = (unsigned long)v + 8;
	if (bpf_timer_init(&v->t, &tmap, 1 /* CLOCK_MONOTONIC */))
		return 2;
	if (bpf_timer_set_callback(&v->t, timer_cb))
		return 3;
	return 0;
}

/* Overwrites element 0: bpf_timer_cancel_and_free() of its timer. */
SEC("tc")
int timer_free(struct __sk_buff *skb)
{
	struct tval zero = {};
	int key = 0;

	return bpf_map_update_elem(&tmap, &key, &zero, 0) ? 1 : 0;
}

SEC("kprobe/queue_work_on")
int wake_watch(void *ctx)
{
	int key = 0;
	struct wstats *s = bpf_map_lookup_elem(&wstats, &key);
	__u32 word = 0;

	if (!s || (bpf_get_current_pid_tgid() >> 32) != s->tgid)
		return 0;
	__sync_fetch_and_add(&s->calls, 1);
	if (s->lock && !bpf_probe_read_kernel(&word, sizeof(word), (void *)s->lock) && word)
		__sync_fetch_and_add(&s->under_lock, 1);
	return 0;
}
