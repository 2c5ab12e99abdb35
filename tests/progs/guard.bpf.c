// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing programs that take a lock where a CPU may already hold or wait
 * for one: in NMI (nmi:nmi_handler as tp_btf, tracepoint and raw
 * tracepoint; a kprobe on show_regs(), which the backtrace NMI calls) and
 * in the lock's own slow path (lock:contention_begin as tp_btf and as a
 * tracepoint), against tc programs taking the same lock. Stock 6.1 allows
 * only the tp_btf ones to lock.
 */
#include "bpflock.h"

struct gelem {
	long cnt;
	struct bpf_spin_lock lock;
	int pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct gelem);
} gmap SEC(".maps");

/* Lockless run counts of the tracing programs (this map holds no lock). */
struct gstats {
	long nmi_runs;
	long cont_runs;
	long plain_runs;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct gstats);
} gstats SEC(".maps");

static __always_inline int lock_inc(void)
{
	int key = 0;
	struct gelem *e = bpf_map_lookup_elem(&gmap, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

static __always_inline struct gstats *stats(void)
{
	int key = 0;

	return bpf_map_lookup_elem(&gstats, &key);
}

SEC("tc")
int tc_inc(struct __sk_buff *skb)
{
	return lock_inc();
}

SEC("tp_btf/nmi_handler")
int nmi_inc(void *ctx)
{
	struct gstats *s = stats();

	if (s && !lock_inc())
		__sync_fetch_and_add(&s->nmi_runs, 1);
	return 0;
}

/* Uses no lock map: never skipped by the guard. */
SEC("tp_btf/nmi_handler")
int nmi_plain(void *ctx)
{
	struct gstats *s = stats();

	if (s)
		__sync_fetch_and_add(&s->plain_runs, 1);
	return 0;
}

SEC("tp_btf/contention_begin")
int cont_inc(void *ctx)
{
	struct gstats *s = stats();

	if (s && !lock_inc())
		__sync_fetch_and_add(&s->cont_runs, 1);
	return 0;
}

#define NMI_INC(sec, name)						\
SEC(sec)								\
int name(void *ctx)							\
{									\
	struct gstats *s = stats();					\
									\
	if (s && !lock_inc())						\
		__sync_fetch_and_add(&s->nmi_runs, 1);			\
	return 0;							\
}

NMI_INC("tp/nmi/nmi_handler", nmi_tp_inc)
NMI_INC("raw_tp/nmi_handler", nmi_raw_tp_inc)
NMI_INC("kprobe/show_regs", nmi_kprobe_inc)

SEC("tp/lock/contention_begin")
int cont_tp_inc(void *ctx)
{
	struct gstats *s = stats();

	if (s && !lock_inc())
		__sync_fetch_and_add(&s->cont_runs, 1);
	return 0;
}
