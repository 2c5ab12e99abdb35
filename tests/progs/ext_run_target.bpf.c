// SPDX-License-Identifier: GPL-2.0
/*
 * Targets whose runners check the program they run, not its extensions
 * (ext_run.bpf.c replaces their global functions): a syscall program that
 * never reads its context (max_ctx_offset 0: BPF_PROG_RUN takes any
 * ctx_size_in, 0 too), a cgroup_skb program with 8 bytes of cgroup
 * storage, a socket filter that never touches skb->cb (so nothing
 * saves and clears the control block around it), a writable raw
 * tracepoint program for bpf_test_finish that reads 4 bytes of its
 * buffer (the tracepoint's writable_size) and a tc program that keeps a
 * packet pointer across a call to a function that changes no packet data.
 * None is attached or run.
 */
#include "bpflock.h"
#include "ext.h"


struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, long);
} ext_run_small SEC(".maps");

volatile int ext_run_sink;

__attribute__((noinline)) int ext_sys_fn(EXT_SYS_CTX)
{
	return ctx ? 1 : 2;
}

SEC("syscall")
int ext_sys_target(void *ctx)
{
	return ext_sys_fn(ctx);
}

__attribute__((noinline)) int ext_cg_fn(struct __sk_buff *skb)
{
	return skb->len;
}

SEC("cgroup_skb/ingress")
int ext_cg_target(struct __sk_buff *skb)
{
	long *v = bpf_get_local_storage(&ext_run_small, 0);

	*v += 1;
	ext_run_sink = ext_cg_fn(skb);
	return 1;
}

__attribute__((noinline)) int ext_sf_fn(struct __sk_buff *skb)
{
	return skb->len;
}

SEC("socket")
int ext_sf_target(struct __sk_buff *skb)
{
	return ext_sf_fn(skb) ? 0xffff : 0;
}

__attribute__((noinline)) int ext_tpw_fn(struct bpf_raw_tracepoint_args *ctx)
{
	return ctx->args[0] != 0;
}

SEC("raw_tp.w/bpf_test_finish")
int ext_tpw_target(struct bpf_raw_tracepoint_args *ctx)
{
	int *err = (int *)ctx->args[0];

	return ext_tpw_fn(ctx) + *err;
}

__attribute__((noinline)) int ext_pk_fn(struct __sk_buff *skb)
{
	return skb->len;
}

SEC("tc")
int ext_pk_target(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	unsigned long *p = data;
	int r;

	if ((void *)(p + 4) > end)
		return 0;
	p[0] = 1;
	r = ext_pk_fn(skb);
	p[3] = r;
	return 0;
}
