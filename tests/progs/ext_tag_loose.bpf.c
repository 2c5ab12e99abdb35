// SPDX-License-Identifier: GPL-2.0
/*
 * 6.12: sound replacements of ext_ctx_target.bpf.c's tagged functions
 * with other tags: the context untagged (it is the context by its
 * struct's name), a NULL check where the target's argument is never NULL,
 * and a trusted pointer whose local struct declares one field more.
 */
#include "bpflock.h"

#ifdef __arg_ctx
struct ext_small {
	long v;
};

struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

SEC("freplace/ext_ctx_tagged")
int ext_ctx_tagged(struct __sk_buff *skb)
{
	return skb->len + 1;
}

SEC("freplace/ext_nonnull")
int ext_nonnull(struct ext_small *s)
{
	return s ? s->v + 1 : 0;
}

SEC("freplace/ext_trusted")
int ext_trusted(struct task_struct *t __arg_trusted __arg_nullable)
{
	return t ? t->tgid : 0;
}
#endif
