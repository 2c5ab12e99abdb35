// SPDX-License-Identifier: GPL-2.0
/*
 * Replaces ext_ctx_target's ext_ctx_len() declaring only the part of the
 * context it uses (a struct __sk_buff of 4 bytes): sound, since the
 * verifier checks a context by the program type's rules, not by the
 * struct's size in BTF (older headers declare shorter contexts).
 */
#include <linux/types.h>

struct __sk_buff {
	__u32 len;
};

#include <bpf/bpf_helpers.h>

SEC("freplace/ext_ctx_len")
int ext_ctx_len(struct __sk_buff *skb)
{
	return skb->len + 1;
}

char _license[] SEC("license") = "GPL";
