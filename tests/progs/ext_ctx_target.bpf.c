// SPDX-License-Identifier: GPL-2.0
/*
 * Targets of extensions whose arguments are a context (ext_ctx_*.bpf.c):
 * a tc program's global function taking its struct __sk_buff, and (6.12)
 * functions whose tags say what their types say already (arg:ctx on the
 * context) or more than an extension needs (arg:nonnull), and a trusted
 * kernel pointer declared CO-RE style with the one field it reads.
 * ext_lk_target (6.12) calls a static function while it holds its
 * element's lock: no extension may replace it, since one is verified
 * without the lock its target holds around it.
 */
#include "bpflock.h"

struct ext_small {
	long v;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct ext_small);
} ext_ctx_map SEC(".maps");

__attribute__((noinline)) int ext_ctx_len(struct __sk_buff *skb)
{
	return skb ? skb->len : 0;
}

SEC("tc")
int ext_ctx_target(struct __sk_buff *skb)
{
	return ext_ctx_len(skb);
}

#ifdef __arg_ctx
struct ext_locked {
	long v;
	struct bpf_spin_lock lock;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct ext_locked);
} ext_lk_map SEC(".maps");

/* static: its context argument makes its BTF reliable, but it is not global */
static __attribute__((noinline)) int ext_lk_fn(struct __sk_buff *skb)
{
	return skb ? 2 : 1;
}

SEC("tc")
int ext_lk_target(struct __sk_buff *skb)
{
	struct ext_locked *e;
	int key = 0;

	e = bpf_map_lookup_elem(&ext_lk_map, &key);
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->v += ext_lk_fn(skb);
	bpf_spin_unlock(&e->lock);
	return 0;
}

struct task_struct {
	int pid;
} __attribute__((preserve_access_index));

__attribute__((noinline)) int ext_ctx_tagged(struct __sk_buff *skb __arg_ctx)
{
	return skb->len;
}

__attribute__((noinline)) int ext_nonnull(struct ext_small *s __arg_nonnull)
{
	return s->v;
}

__attribute__((noinline)) int ext_trusted(struct task_struct *t __arg_trusted __arg_nullable)
{
	return t ? t->pid : 0;
}

SEC("tc")
int ext_tag_target(struct __sk_buff *skb)
{
	int key = 0, r = ext_ctx_tagged(skb) + ext_trusted((void *)0);
	struct ext_small *e = bpf_map_lookup_elem(&ext_ctx_map, &key);

	if (e)
		r += ext_nonnull(e);
	return r;
}
#endif
