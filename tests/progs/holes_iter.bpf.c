// SPDX-License-Identifier: GPL-2.0
/*
 * Map element iterators that write the value they are handed in place:
 * into the lock word (never attachable on ours), or clear of it.
 */
#include "bpflock.h"

struct bpf_iter_meta {
	void *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__bpf_map_elem {
	struct bpf_iter_meta *meta;
	struct bpf_map *map;
	void *key;
	void *value;
} __attribute__((preserve_access_index));

/* The value's layout: cnt at 0, the lock at 4, data[] at 8..15. */
SEC("iter/bpf_map_elem")
int store_lock_word(struct bpf_iter__bpf_map_elem *ctx)
{
	__u32 *v = ctx->value;

	if (v)
		v[1] = 1;
	return 0;
}

SEC("iter/bpf_map_elem")
int add_lock_word(struct bpf_iter__bpf_map_elem *ctx)
{
	__u32 *v = ctx->value;

	if (v)
		__sync_fetch_and_add(&v[1], 1);
	return 0;
}

SEC("iter/bpf_map_elem")
int store_cnt(struct bpf_iter__bpf_map_elem *ctx)
{
	__u32 *v = ctx->value;

	if (v)
		v[0] += 1;
	return 0;
}

SEC("iter/bpf_map_elem")
int store_data(struct bpf_iter__bpf_map_elem *ctx)
{
	__u32 *v = ctx->value;

	if (v) {
		v[2] += 2;
		v[3] += 3;
	}
	return 0;
}

static const char lock_fmt[] = "A";

/* bpf_snprintf() writes "A" and its NUL over the lock word's bytes 4-5 */
SEC("iter/bpf_map_elem")
int snprintf_lock_word(struct bpf_iter__bpf_map_elem *ctx)
{
	__u32 *v = ctx->value;

	if (v)
		bpf_snprintf((char *)&v[1], 2, lock_fmt, NULL, 0);
	return 0;
}
