// SPDX-License-Identifier: GPL-2.0
/*
 * One element, locked by a program of every tracing type and by socket
 * filters, together with tc programs (tests/tracing.c). Stock 6.1 refuses
 * the lock map in all of these types but tc.
 */
#include "bpflock.h"

struct telem {
	long a;
	struct bpf_spin_lock lock;
	long b;			/* always equal to a under the lock */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct telem);
} tmap SEC(".maps");

/* Lockless counts of each type's increments (this map holds no lock). */
struct tstats {
	long kprobe;
	long uprobe;
	long tp;
	long raw_tp;
	long perf;
	long sock;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct tstats);
} tstats SEC(".maps");

/* The test's tgid: syscall-side programs count only the test's events. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, int);
} tcfg SEC(".maps");

static __always_inline int lock_bump(void)
{
	int key = 0;
	struct telem *e = bpf_map_lookup_elem(&tmap, &key);

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	bpf_spin_unlock(&e->lock);
	return 1;
}

static __always_inline struct tstats *stats(void)
{
	int key = 0;

	return bpf_map_lookup_elem(&tstats, &key);
}

static __always_inline int from_test(void)
{
	int key = 0;
	int *tgid = bpf_map_lookup_elem(&tcfg, &key);

	return tgid && (bpf_get_current_pid_tgid() >> 32) == *tgid;
}

#define BUMP(field) ({							\
	struct tstats *s = stats();					\
	if (s && lock_bump())						\
		__sync_fetch_and_add(&s->field, 1);			\
})

SEC("tc")
int tc_bump(struct __sk_buff *skb)
{
	return !lock_bump();
}

SEC("kprobe/__x64_sys_getppid")
int kprobe_bump(void *ctx)
{
	if (from_test())
		BUMP(kprobe);
	return 0;
}

SEC("uprobe")
int uprobe_bump(void *ctx)
{
	if (from_test())
		BUMP(uprobe);
	return 0;
}

SEC("tp/task/task_rename")
int tp_bump(void *ctx)
{
	if (from_test())
		BUMP(tp);
	return 0;
}

SEC("raw_tp/task_rename")
int raw_tp_bump(void *ctx)
{
	if (from_test())
		BUMP(raw_tp);
	return 0;
}

/* Software cpu-clock samples: hrtimer interrupts on every CPU. */
SEC("perf_event")
int perf_bump(void *ctx)
{
	BUMP(perf);
	return 0;
}

/* Every packet delivered to the socket; the packet is kept. */
SEC("socket")
int sock_bump(struct __sk_buff *skb)
{
	BUMP(sock);
	return skb->len;
}
