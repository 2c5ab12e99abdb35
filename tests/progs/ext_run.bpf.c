// SPDX-License-Identifier: GPL-2.0
/*
 * Extensions of ext_run_target.bpf.c's functions that use what their
 * target's runner never checked (an attacker's review; each one loads,
 * and the attach is what must fail):
 * - ext_sys_fn() reads the syscall program's context up to byte 4008
 *   where BPF_PROG_RUN sized it by the target's max_ctx_offset (0): kernel
 *   memory past the buffer, or a NULL context;
 * - ext_cg_fn() takes 4 KiB of cgroup storage of its own, but
 *   bpf_get_local_storage() returns the running program's, the target's 8
 *   bytes;
 * - ext_sf_fn() writes skb->cb, which nothing saves around a socket
 *   filter that does not use it: for AF_UNIX, the sender's credentials
 *   (UNIXCB(skb).uid) and next to them a pointer.
 * - ext_tpw_fn() reads 64 bytes past the 4 that bpf_test_finish lets its
 *   writable raw tracepoint programs reach (the review's write there put
 *   0x4141... in the return address);
 * - ext_pk_fn() calls bpf_skb_change_head(), which frees the packet its
 *   target's caller still points into (6.1; 6.12 refuses it at load).
 * ext_sf_len() is the twin that reads skb->len only.
 */
#include "bpflock.h"
#include "ext.h"


struct ext_run_big {
	unsigned long v[512];
};

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct ext_run_big);
} ext_run_big SEC(".maps");

unsigned long long ext_run_leak[4];

SEC("freplace/ext_sys_fn")
int ext_sys_fn(EXT_SYS_CTX)
{
	unsigned long long *p = (void *)ctx;

	ext_run_leak[0] = p[1];
	ext_run_leak[1] = p[500];
	return 7;
}

SEC("freplace/ext_cg_fn")
int ext_cg_fn(struct __sk_buff *skb)
{
	struct ext_run_big *b = bpf_get_local_storage(&ext_run_big, 0);

	ext_run_leak[2] = b->v[500];
	return 1;
}

SEC("freplace/ext_sf_fn")
int ext_sf_fn(struct __sk_buff *skb)
{
	skb->cb[0] = 4242;
	skb->cb[1] = 4343;
	return 1;
}

SEC("freplace/ext_sf_fn")
int ext_sf_len(struct __sk_buff *skb)
{
	return skb->len + 1;
}

unsigned long ext_tpw_seen[2];

SEC("freplace/ext_tpw_fn")
int ext_tpw_fn(struct bpf_raw_tracepoint_args *ctx)
{
	unsigned long *p = (unsigned long *)ctx->args[0];

	ext_tpw_seen[0] = p[1];
	ext_tpw_seen[1] = p[8];
	return 0;
}

SEC("freplace/ext_pk_fn")
int ext_pk_fn(struct __sk_buff *skb)
{
	return bpf_skb_change_head(skb, 1024, 0) ? 0 : 77;
}
