// SPDX-License-Identifier: GPL-2.0
/*
 * An outside review of 0025-0029 (callbacks run by run or in one pass,
 * dynptr slots, linked scalars, tail calls in subprograms): programs
 * written independently of the suite that stock 6.1 and ours up to 0033
 * accepted, each reaching a lock word, kernel memory or uninitialised
 * stack, with the refusal ours gives since 0034-0038. The numbers are
 * the review's. Holes 1 (linked scalars) and 5 (passes past the
 * complexity limit) are built instruction by instruction in holes.c
 * (review_linked_scalars*, review_one_budget*).
 */
#include "bpflock.h"

/* Hide a value's origin from clang: it keeps the register as it is. */
#define opaque(x) asm volatile("" : "+r"(x))

struct rval {
	long data[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct rval);
} rmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} rjmp SEC(".maps");

/*
 * 2. A callback verified in one pass (1000 runs) reads the dynptr its
 * caller made over a map value, then overwrites the dynptr's first slot
 * with a scalar: the next run reads through a pointer and size of its
 * choosing. 0026 destroyed the dynptr before 0012's callback check looked
 * at the slot, which then saw nothing to protect (0034).
 */
static long overwrite_dynptr(__u32 i, struct bpf_dynptr *d)
{
	long buf[2];

	bpf_dynptr_read(buf, sizeof(buf), d, 0, 0);
	*(volatile __u64 *)d = 0x10;
	return 0;
}

SEC("tc") __beyond __failure __errno(EACCES)
__msg("a callback cannot overwrite the dynptr its caller keeps at frame 0")
int review_cb_overwrites_dynptr(struct __sk_buff *skb)
{
	struct bpf_dynptr d;
	int key = 0;
	struct rval *v = bpf_map_lookup_elem(&rmap, &key);

	if (!v)
		return 0;
	bpf_dynptr_from_mem(v, sizeof(*v), 0, &d);
	bpf_loop(1000, overwrite_dynptr, &d, 0);
	return 0;
}

/* The twin: the callback only reads the dynptr (1000 runs). */
static long read_dynptr(__u32 i, struct bpf_dynptr *d)
{
	long buf[2];

	bpf_dynptr_read(buf, sizeof(buf), d, 0, 0);
	return 0;
}

SEC("tc") __common __success __retval(0)
int review_cb_reads_dynptr(struct __sk_buff *skb)
{
	struct bpf_dynptr d;
	int key = 0;
	struct rval *v = bpf_map_lookup_elem(&rmap, &key);

	if (!v)
		return 0;
	bpf_dynptr_from_mem(v, sizeof(*v), 0, &d);
	bpf_loop(1000, read_dynptr, &d, 0);
	return 0;
}

/*
 * 3. A static subprogram tail-calls. When the tail call succeeds, the
 * target (which may pull, grow or shrink the packet) returns to main in
 * the subprogram's place, and main reads through the packet pointer it
 * checked before the call (0036).
 */
static __attribute__((noinline)) int tail_call_sub(struct __sk_buff *skb)
{
	int ret = 0;

	bpf_tail_call(skb, &rjmp, 0);
	opaque(ret);
	return ret;
}

SEC("tc") __beyond __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
int review_tail_call_stale_packet(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	int ret;

	if (data + 8 > end)
		return 0;
	ret = tail_call_sub(skb);
	return ret + *(volatile __u8 *)data;
}

/* The twin: the packet pointers are loaded again after the call. */
SEC("tc") __common __success __retval(0)
int review_tail_call_reloads_packet(struct __sk_buff *skb)
{
	int ret = tail_call_sub(skb);
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;

	if (data + 8 > end)
		return ret;
	return ret + (*(volatile __u8 *)data & 0);
}

/*
 * 4. A slot only the callback writes, read after bpf_loop() with a count
 * that may be 0: uninitialised kernel stack, for a loader without
 * CAP_PERFMON (the case loads with CAP_BPF and CAP_NET_ADMIN only).
 * Callbacks verified in one pass went on only after one run or more
 * (0037); the bounded one (run by run) already went on after zero.
 */
static long write_slot(__u32 i, __u64 *slot)
{
	*slot = i + 1;
	return 1;
}

SEC("tc") __beyond __failure __caps_bpf __errno(EACCES) __msg("invalid read from stack")
int review_zero_runs_uninit(struct __sk_buff *skb)
{
	__u64 slot;

	bpf_loop(skb->len, write_slot, &slot, 0);
	return slot;
}

SEC("tc") __beyond __failure __caps_bpf __errno(EACCES) __msg("invalid read from stack")
int review_zero_runs_uninit_bounded(struct __sk_buff *skb)
{
	__u64 slot;

	bpf_loop(skb->len & 3, write_slot, &slot, 0);
	return slot;
}

/* The twin: the caller initialises the slot; any number of runs */
SEC("tc") __common __success __caps_bpf __retval(1)
int review_zero_runs_init(struct __sk_buff *skb)
{
	__u64 slot = 0;

	bpf_loop(skb->len, write_slot, &slot, 0);
	return slot;
}
