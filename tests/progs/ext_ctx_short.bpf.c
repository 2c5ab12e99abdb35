// SPDX-License-Identifier: GPL-2.0
/*
 * Replaces ext_ctx_target's ext_ctx_len() declaring only the part of the
 * context it uses (a struct __sk_buff of 4 bytes): sound, since the
 * verifier checks a context by the program type's rules, not by the
 * struct's size in BTF (older headers declare shorter contexts).
 * ext_lk_fn() would replace ext_lk_target's static function, which runs
 * under the target's lock, with one that calls a helper no lock region
 * allows: it must not load.
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

SEC("freplace/ext_lk_fn")
int ext_lk_fn(struct __sk_buff *skb)
{
	return bpf_get_hash_recalc(skb);
}

char _license[] SEC("license") = "GPL";
