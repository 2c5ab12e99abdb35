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

/* A dynptr over element 0's value, handed to @cb for 1000 runs */
#define DYNPTR_LOOP(cb)						\
	struct bpf_dynptr d;					\
	int key = 0;						\
	struct rval *v = bpf_map_lookup_elem(&rmap, &key);	\
								\
	if (!v)							\
		return 0;					\
	bpf_dynptr_from_mem(v, sizeof(*v), 0, &d);		\
	bpf_loop(1000, cb, &d, 0);				\
	return 0

SEC("tc") __beyond __failure __errno(EACCES)
__msg("a callback cannot overwrite the dynptr its caller keeps at frame 0")
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=Expected an initialized dynptr as arg #2")
__on("6.12", "kind=common")
int review_cb_overwrites_dynptr(struct __sk_buff *skb)
{
	DYNPTR_LOOP(overwrite_dynptr);
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
	DYNPTR_LOOP(read_dynptr);
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
__on("6.12", "kind=common")
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
__on("6.12", "kind=common")
int review_zero_runs_uninit(struct __sk_buff *skb)
{
	__u64 slot;

	bpf_loop(skb->len, write_slot, &slot, 0);
	return slot;
}

SEC("tc") __beyond __failure __caps_bpf __errno(EACCES) __msg("invalid read from stack")
__on("6.12", "kind=common")
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

/*
 * The attacker review of 0034-0038 (second round), with the fixes of
 * 0043-0045.
 */
#define __naked __attribute__((naked))
#define __imm_addr(x) [x]"i"(&x)

struct relem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct relem);
} rlmap SEC(".maps");

/*
 * 6. A callback verified in one pass changes the packet, and its next
 * run (never walked) writes through the packet pointer its caller keeps
 * in its stack: the old head, which bpf_skb_change_head() replaced. The
 * one pass starts every run from its caller's state at the call; 0044
 * invalidates the caller's packet pointers at the entry of a one-pass
 * callback that may change the packet.
 */
struct pctx {
	struct __sk_buff *skb;
	__u8 *data;
};

static long write_then_change_head(__u32 i, struct pctx *c)
{
	*(volatile __u8 *)c->data = 0x5a;
	bpf_skb_change_head(c->skb, 256, 0);
	return 0;
}

static long write_then_tail_call(__u32 i, struct pctx *c)
{
	*(volatile __u8 *)c->data = 0x5a;
	bpf_tail_call(c->skb, &rjmp, 0);
	return 0;
}

/* The twin: the callback loads the packet pointers again every run. */
static long reload_then_change_head(__u32 i, struct pctx *c)
{
	struct __sk_buff *skb = c->skb;
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;

	if (data + 8 <= end)
		*(volatile __u8 *)data = 0x5a;
	bpf_skb_change_head(skb, 256, 0);
	return 0;
}

#define PKT_LOOP(n, cb)						\
	struct pctx c;						\
	void *data = (void *)(long)skb->data;			\
	void *end = (void *)(long)skb->data_end;		\
								\
	if (data + 8 > end)					\
		return 0;					\
	c.skb = skb;						\
	c.data = data;						\
	bpf_loop(n, cb, &c, 0);					\
	return 0

SEC("tc") __beyond __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
__on("6.12", "kind=common")
int review_cb_change_head_next_run(struct __sk_buff *skb)
{
	PKT_LOOP(1000, write_then_change_head);
}

SEC("tc") __beyond __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
__on("6.12", "kind=common")
int review_cb_change_head_next_run_bounded(struct __sk_buff *skb)
{
	PKT_LOOP(2, write_then_change_head);
}

SEC("tc") __beyond __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
__on("6.12", "errno=EINVAL") __on("6.12", "msg=tail_call cannot be used in a callback")
__on("6.12", "kind=beyond")
int review_cb_tail_call_next_run(struct __sk_buff *skb)
{
	PKT_LOOP(1000, write_then_tail_call);
}

SEC("tc") __common __success __retval(0)
int review_cb_reload_each_run(struct __sk_buff *skb)
{
	PKT_LOOP(2, reload_then_change_head);
}

/*
 * 7. A global function is verified on its own: its caller kept the
 * packet pointers it checked before calling one that changes the packet
 * or tail-calls (0044). A static one is walked from its caller's state,
 * and stock refuses that twin as well.
 */
__attribute__((noinline)) int review_global_change_head(struct __sk_buff *skb)
{
	return bpf_skb_change_head(skb, 256, 0);
}

__attribute__((noinline)) int review_global_tail_call(struct __sk_buff *skb)
{
	bpf_tail_call(skb, &rjmp, 0);
	return 0;
}

static __attribute__((noinline)) int static_change_head(struct __sk_buff *skb)
{
	return bpf_skb_change_head(skb, 256, 0);
}

#define PKT_CALL(fn)						\
	void *data = (void *)(long)skb->data;			\
	void *end = (void *)(long)skb->data_end;		\
	int ret;						\
								\
	if (data + 8 > end)					\
		return 0;					\
	ret = fn(skb);						\
	*(volatile __u8 *)data = 0x5a;				\
	return ret + *(volatile __u8 *)(data + 7)

SEC("tc") __beyond __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
__on("6.12", "kind=common")
int review_global_change_head_stale(struct __sk_buff *skb)
{
	PKT_CALL(review_global_change_head);
}

SEC("tc") __beyond __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
__on("6.12", "kind=common")
int review_global_tail_call_stale(struct __sk_buff *skb)
{
	PKT_CALL(review_global_tail_call);
}

SEC("tc") __common __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
int review_static_change_head_stale(struct __sk_buff *skb)
{
	PKT_CALL(static_change_head);
}

/*
 * 8. Run 2 of a bpf_loop(2) callback, walked run by run, follows run 1's
 * hidden exit (a tail call that succeeds, LD_ABS past the packet) in the
 * jump history. Run 2 needs its index precise, and backtracking walked
 * from its first instruction into the tail call's helper call with R1
 * looked for ("BUG regs 2", EFAULT), or past LD_ABS into run 1 (0043).
 * Safe programs; stock refuses them (its one walk sees any index).
 */
static __naked __attribute__((used)) long cb_tail_idx(void)
{
	asm volatile(
		"r6 = r1;"			/* the index */
		"r7 = r2;"			/* &skb in the caller's stack */
		"r1 = 0;"
		"*(u32 *)(r10 - 4) = r1;"
		"r2 = r10;"
		"r2 += -4;"
		"r1 = %[rlmap] ll;"
		"call 1;"
		"if r0 == 0 goto 1f;"
		"r0 += r6;"			/* the index must be precise */
		"r0 = *(u8 *)(r0 + 0);"
		"r1 = *(u64 *)(r7 + 0);"
		"r2 = %[rjmp] ll;"
		"r3 = 0;"
		"call 12;"			/* bpf_tail_call */
	"1:"
		"r0 = 0;"
		"exit;"
		:: __imm_addr(rlmap), __imm_addr(rjmp) : "memory");
}

static __naked __attribute__((used)) long cb_ld_abs_idx(void)
{
	asm volatile(
		"r9 = r1;"
		"r7 = r2;"
		"r1 = 0;"
		"*(u32 *)(r10 - 4) = r1;"
		"r2 = r10;"
		"r2 += -4;"
		"r1 = %[rlmap] ll;"
		"call 1;"
		"if r0 == 0 goto 1f;"
		"r0 += r9;"
		"r0 = *(u8 *)(r0 + 0);"
		"r6 = *(u64 *)(r7 + 0);"
		"call 7;"			/* bpf_get_prandom_u32 */
		"r0 = *(u8 *)skb[100];"		/* past the 64-byte packet */
	"1:"
		"r0 = 0;"
		"exit;"
		:: __imm_addr(rlmap) : "memory");
}

#define LOOP2(cb)							\
	asm volatile(							\
		"*(u64 *)(r10 - 8) = r1;"				\
		"r1 = 2;"						\
		"r2 = %[cbf] ll;"					\
		"r3 = r10;"						\
		"r3 += -8;"						\
		"r4 = 0;"						\
		"call 181;"						\
		"r0 = 0;"						\
		"exit;"							\
		:: [cbf]"i"(cb) : "memory")

/* 6.12 keeps the index imprecise through the tail call: every kernel refuses */
SEC("tc") __beyond __success __retval(0)
__on("6.12", "failure")
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=math between map_value pointer and register with unbounded min value is not allowed")
__on("6.12", "kind=common")
__naked int review_tail_call_run2_precision(void)
{
	LOOP2(cb_tail_idx);
}

SEC("tc") __beyond __success __retval(0)
__on("6.12", "failure")
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=math between map_value pointer and register with unbounded min value is not allowed")
__on("6.12", "kind=common")
__naked int review_ld_abs_run2_precision(void)
{
	LOOP2(cb_ld_abs_idx);
}

/*
 * 9. Over-rejection of 0037: bpf_loop() with flags 0 and a count of
 * 1000 calls back at least once, so the slot its callback writes is
 * initialised (0045). Loaded without CAP_PERFMON, as hole 4. 6.12's
 * verifier walks the zero-run path too (stock and ours-6.12): the read is
 * of an uninitialised slot there, refused.
 */
SEC("tc") __common __success __caps_bpf __retval(1)
__on("6.12", "failure") __on("6.12", "errno=EACCES")
__on("6.12", "msg=invalid read from stack R10 off=-8 size=8")
int review_const_count_reads_slot(struct __sk_buff *skb)
{
	__u64 slot;

	bpf_loop(1000, write_slot, &slot, 0);
	return slot;
}

/*
 * The second attacker review (0041, 0043-0045), with the fixes of
 * 0044-0047.
 */

/*
 * 10. A count of 0x100000001: bpf_loop() takes its low 32 bits (1), but
 * the inlined loop compares all 64 with BPF_MAX_LOOPS and runs nothing,
 * so the slot the callback would write is read uninitialised (seen: a
 * kernel text address). 0045 decides "at least one run" on all 64 bits.
 */
static __naked __attribute__((used)) long cb_write_slot(void)
{
	asm volatile(
		"r1 += 0x1234;"
		"*(u64 *)(r2 + 0) = r1;"
		"r0 = 1;"
		"exit;"
		::: "memory");
}

SEC("tc") __beyond __failure __caps_bpf __errno(EACCES) __msg("invalid read from stack")
__on("6.12", "kind=common")
__naked int review_u64_count_zero_runs(void)
{
	asm volatile(
		"r1 = 0x100000001 ll;"
		"r2 = %[cb] ll;"
		"r3 = r10;"
		"r3 += -8;"
		"r4 = 0;"
		"call 181;"			/* bpf_loop, inlined */
		"r0 = *(u64 *)(r10 - 8);"
		"exit;"
		:: [cb]"i"(cb_write_slot) : "memory");
}

/*
 * 11. The callback that changes the packet is not named where it is
 * called: its address reaches bpf_loop() through the caller's stack, and
 * the outer one-pass callback's second run writes through the old head.
 * 0044 takes a helper that calls back to call any function whose address
 * the program takes.
 */
struct fctx {
	struct __sk_buff *skb;
	__u8 *data;
	void *cb;
};

static long change_head_cb(__u32 i, struct fctx *c)
{
	bpf_skb_change_head(c->skb, 256, 0);
	return 1;
}

static long outer_by_address(__u32 i, struct fctx *c)
{
	*(volatile __u8 *)c->data = 0x5a;
	bpf_loop(1, c->cb, c, 0);
	return 0;
}

SEC("tc") __beyond __failure __errno(EACCES) __msg("invalid mem access 'scalar'")
__on("6.12", "kind=common")
int review_cb_address_through_stack(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct fctx c;

	if (data + 8 > end)
		return 0;
	c.skb = skb;
	c.data = data;
	c.cb = change_head_cb;
	bpf_loop(1000, outer_by_address, &c, 0);
	return 0;
}

/*
 * 12. The first pass (callbacks in one pass) forgets c.k and walks both
 * loads; the run-by-run pass knows c.k = 1 and walks the ctx load only,
 * but found the stack pointer type the first pass recorded for it: "same
 * insn cannot be used with different pointers". Stock loads it; 0046
 * starts every pass from the same instruction data. 6.12's verifier walks
 * both loads itself (it takes zero runs of bpf_loop() for possible) and
 * refuses the program with that message, on stock-6.12 and ours-6.12.
 */
static __naked __attribute__((used)) long cb_set1(void)
{
	asm volatile(
		"r1 = 1;"
		"*(u64 *)(r2 + 0) = r1;"
		"r0 = 0;"
		"exit;"
		::: "memory");
}

SEC("tc") __common __success __retval(0)
__on("6.12", "failure") __on("6.12", "errno=EINVAL")
__on("6.12", "msg=same insn cannot be used with different pointers")
__naked int review_pass_keeps_ptr_type(void)
{
	asm volatile(
		"r6 = r1;"
		"r1 = 0;"
		"*(u64 *)(r10 - 8) = r1;"
		"*(u64 *)(r10 - 16) = r1;"
		"r1 = 1;"
		"r2 = %[cb] ll;"
		"r3 = r10;"
		"r3 += -8;"
		"r4 = 0;"
		"call 181;"
		"r1 = *(u64 *)(r10 - 8);"
		"if r1 == 1 goto 1f;"
		"r2 = r10;"
		"r2 += -16;"
		"goto 2f;"
	"1:"
		"r2 = r6;"
	"2:"
		"r0 = *(u32 *)(r2 + 0);"
		"r0 &= 0;"
		"exit;"
		:: [cb]"i"(cb_set1) : "memory");
}

/* The same through an ALU's sanitation state, for a CAP_BPF loader. */
struct kctx {
	__u64 k;
	struct relem *a;
	struct relem *b;
};

static long set_k(__u32 i, struct kctx *c)
{
	c->k = 4;
	return 0;
}

static long move_ptr(__u32 i, struct kctx *c)
{
	c->b = c->a;
	return 0;
}

SEC("tc") __common __success __caps_bpf __retval(0)
int review_pass_keeps_alu_state(struct __sk_buff *skb)
{
	struct kctx c = {};
	struct relem *e;
	int key = 0;
	__u64 k;
	char *p;

	e = bpf_map_lookup_elem(&rlmap, &key);
	if (!e)
		return 0;
	c.a = e;
	c.b = e;
	bpf_loop(1, set_k, &c, 0);
	k = *(volatile __u64 *)&c.k;
	if (k > 4)
		return 0;
	p = (char *)e->data;
	asm volatile("" : "+r"(p));
	p += k;				/* data[], never the lock word */
	k = *(volatile __u8 *)p;
	bpf_loop(1, move_ptr, &c, 0);	/* a pointer move: the first pass refuses */
	return k + c.b->cnt;
}

/*
 * 13. bpf_find_vma()'s callback, walked run by run, keeps the vma in its
 * caller's stack; the caller reads it after the helper dropped the mmap
 * lock (0047).
 */
struct task_struct;
struct vm_area_struct {
	unsigned long vm_start;
} __attribute__((preserve_access_index));

struct vctx {
	struct vm_area_struct *vma;
};

static long keep_vma(struct task_struct *task, struct vm_area_struct *vma, struct vctx *c)
{
	c->vma = vma;
	return 0;
}

/*
 * On 6.12 the vma is an untrusted pointer there, read only through
 * fault-safe loads and taken by no helper or kfunc: a stale read is no
 * worse than any pointer walk a tracing program does. No lock either.
 */
SEC("kprobe/do_nanosleep") __beyond __load_only __failure __errno(EACCES)
__msg("a bpf_find_vma() callback cannot keep a pointer in its caller's stack")
__on("6.12", "success") __on("6.12", "kind=common")
int review_find_vma_keeps_vma(void *ctx)
{
	struct vctx c = {};

	bpf_find_vma(bpf_get_current_task_btf(), 0x400000, keep_vma, &c, 0);
	if (c.vma)
		return c.vma->vm_start;
	return 0;
}
