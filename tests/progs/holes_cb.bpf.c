// SPDX-License-Identifier: GPL-2.0
/*
 * Attacker review of 0025 (bounded callbacks verified run by run, the
 * others forgetting what they write) and 0026 (dynptr slots read where
 * used): programs that try to leave a lock held, write a lock word, or
 * lock one element and unlock another, with the verdict each must get.
 *
 * The cases marked FOUND were holes: ours accepted 1 (and its mirror),
 * 2, 3, 4 (both), 5, 11 and 15, each unsafe when run (cb_runs_leak_demo
 * in holes.c shows 1 on stock), and 12 used freed memory before it
 * refused. 0025-0029 close them (docs/design.md, "Pruning and precision
 * holes stock 6.1 has"); each case expects the refusal ours now gives.
 */
#include "bpflock.h"

struct bpf_map;

struct elem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct elem);
} cmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, int);
	__type(value, struct elem);
} chash SEC(".maps");

/* Hide a value's origin from clang: it keeps the register as it is. */
#define opaque(x) asm volatile("" : "+r"(x))

/* A few helper calls: jumps and instructions enough for a checkpoint. */
#define CHECKPOINT() do {		\
	bpf_get_prandom_u32();		\
	bpf_get_prandom_u32();		\
	bpf_get_prandom_u32();		\
	bpf_get_prandom_u32();		\
	bpf_get_prandom_u32();		\
	bpf_get_prandom_u32();		\
} while (0)

/*
 * 1. FOUND (0025). A bounded loop whose callback returns (0: go on,
 * 1: stop) a value it reads in its caller's stack through its context
 * pointer. cb_unroll_exit() decides from R0 whether another run follows,
 * and prepare_func_exit() marks R0 precise, but backtrack_insn() stops at
 * a load through a register other than r10 ("scalars can only be spilled
 * into stack..."): the caller's slot is never marked precise. The path
 * where it says "go on" (f = 2) is pruned, at the checkpoint before the
 * call, against the one where it says "stop" (f = 3). Its second run,
 * never verified, locks element 1 (the callback steps its pointer by
 * what the first run left in g) and unlocks element 0: element 1 stays
 * locked (cb_runs_leak_demo). Every slot a callback reads lies in its
 * caller's stack, behind its context pointer. Stock accepts it too (it
 * walks one run).
 */
struct run_ctx {
	struct elem *e;
	long f;		/* odd: stop after this run; even: go on */
	long g;		/* 0 before the first run, 1 after it */
};

static long step_by_g(__u32 i, struct run_ctx *c)
{
	struct elem *x = (void *)c->e + c->g * sizeof(struct elem);

	bpf_spin_lock(&x->lock);
	bpf_spin_unlock(&c->e->lock);
	c->g = 1;
	return c->f & 1;
}

SEC("tc") __beyond __failure __msg("doesn't point to 'struct bpf_spin_lock'")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=off 20 doesn't point to 'struct bpf_spin_lock' that is at 4")
__on("6.12", "kind=feature")
int cb_runs_pruned_by_ctx_read(struct __sk_buff *skb)
{
	struct run_ctx c = {};
	int k0 = 0;
	long f;

	c.e = bpf_map_lookup_elem(&cmap, &k0);
	if (!c.e)
		return 0;
	if (skb->len > 32)	/* taken at run time, explored second */
		f = 2;
	else
		f = 3;
	opaque(f);
	c.f = f;
	CHECKPOINT();
	bpf_loop(2, step_by_g, &c, 0);
	return 0;
}

/*
 * Its mirror (same finding), for the run-time demonstration in holes.c:
 * locks element 2 and, in the second run, releases element 1 (what the
 * first one left locked).
 */
static long step_back_by_g(__u32 i, struct run_ctx *c)
{
	struct elem *x = (void *)c->e - c->g * sizeof(struct elem);

	bpf_spin_lock(&c->e->lock);
	bpf_spin_unlock(&x->lock);
	c->g = 1;
	return c->f & 1;
}

SEC("tc") __beyond __failure __msg("doesn't point to 'struct bpf_spin_lock'")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=off -12 doesn't point to 'struct bpf_spin_lock' that is at 4")
__on("6.12", "kind=feature")
int cb_runs_pruned_unlocks_other(struct __sk_buff *skb)
{
	struct run_ctx c = {};
	int k2 = 2;
	long f;

	c.e = bpf_map_lookup_elem(&cmap, &k2);
	if (!c.e)
		return 0;
	if (skb->len > 32)	/* taken at run time, explored second */
		f = 2;
	else
		f = 3;
	opaque(f);
	c.f = f;
	CHECKPOINT();
	bpf_loop(2, step_back_by_g, &c, 0);
	return 0;
}

/* The same with "go on" on both paths: the second run is walked (stock walks one). */
SEC("tc") __beyond __failure __msg("doesn't point to 'struct bpf_spin_lock'")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=off 20 doesn't point to 'struct bpf_spin_lock' that is at 4")
__on("6.12", "kind=feature")
int cb_runs_second_run_walked(struct __sk_buff *skb)
{
	struct run_ctx c = {};
	int k0 = 0;

	c.e = bpf_map_lookup_elem(&cmap, &k0);
	if (!c.e)
		return 0;
	c.f = 2;
	bpf_loop(2, step_by_g, &c, 0);
	return 0;
}

/*
 * 2. FOUND (stock 6.1 too). The root of 1 without callbacks: a scalar
 * read back from the stack through a pointer that is not r10 is not
 * tracked to its slot, so the slot is imprecise where the paths meet and
 * the path with the other value is pruned. It picks the element to lock:
 * the run locks element 1 and unlocks element 0.
 */
SEC("tc") __beyond __failure __msg("doesn't point to 'struct bpf_spin_lock'")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=off 20 doesn't point to 'struct bpf_spin_lock' that is at 4")
__on("6.12", "kind=feature")
int prune_stack_read_via_pointer(struct __sk_buff *skb)
{
	int k0 = 0;
	struct elem *e, *x;
	long f, *p, v;

	e = bpf_map_lookup_elem(&cmap, &k0);
	if (!e)
		return 0;
	if (skb->len > 32)	/* taken at run time, explored second */
		f = 2;
	else
		f = 1;
	opaque(f);
	*(volatile long *)&v = f;
	CHECKPOINT();
	p = &v;
	opaque(p);
	x = (void *)e + (*p - 1) * sizeof(struct elem);
	bpf_spin_lock(&x->lock);
	bpf_spin_unlock(&e->lock);
	return 0;
}

/*
 * 3. FOUND (stock 6.1 too; upstream fixed it in 6.2 with "dynptr has to
 * be at a constant offset"). A dynptr argument's fixed offset is checked
 * (check_func_arg_reg_off()), its variable part is not: get_spi() uses
 * reg->off only, in is_dynptr_reg_valid_init() and in 0026's
 * mark_dynptr_read(). The verifier finds the real dynptr at fp-32, the
 * helper gets fp-16, where the program laid out {data = element 0,
 * size 16, offset 0} itself, and bpf_dynptr_write() writes the lock word
 * of element 0 (any address the program has a pointer to, in fact).
 */
SEC("tc") __beyond __failure __msg("dynptr has to be at a constant offset")
__errno(EINVAL)
__on("6.12", "kind=common")
int dynptr_var_off_forged(struct __sk_buff *skb)
{
	struct {
		struct bpf_dynptr d;	/* fp-32: a real dynptr */
		struct elem *data;	/* fp-16: the forged one */
		__u32 size;
		__u32 off;
	} s;
	int k0 = 0, val = 1;
	struct elem *e;
	__u64 x;
	void *dp;

	e = bpf_map_lookup_elem(&cmap, &k0);
	if (!e)
		return 0;
	bpf_dynptr_from_mem(&e->data, sizeof(e->data), 0, &s.d);
	s.data = e;
	s.size = (1U << 28) | sizeof(*e);	/* BPF_DYNPTR_TYPE_LOCAL */
	s.off = 0;
	x = (skb->len >> 2) & 16;		/* 16 at run time */
	dp = (void *)&s.d + x;
	bpf_dynptr_write(dp, 4, &val, sizeof(val), 0);
	return 0;
}

/*
 * 4. FOUND (stock 6.1 too, for any subprogram). A tail call that
 * succeeds from a subprogram returns, with the target's r0, from that
 * subprogram (the x86 JIT reuses its frame), but the verifier only walks
 * on past the call, as if it had failed. A callback that swaps its
 * caller's pointers before the tail call and swaps them back after it
 * leaves them swapped when the tail call succeeds: the caller locks
 * element 1 and unlocks element 0. 0025 lets bounded callbacks move their
 * caller's pointers, so each run's "where the pointers are" misses this
 * exit. 0029 walks the call like LD_ABS's hidden exit (rather than refuse
 * tail calls in callbacks); the message below is the refusal the swapped
 * path then gets.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, int);
} cjmp SEC(".maps");

struct swap_ctx {
	struct elem *a;
	struct elem *b;
	struct __sk_buff *skb;
};

static long swap_tail_swap(__u32 i, struct swap_ctx *c)
{
	struct elem *t = c->a;

	c->a = c->b;
	c->b = t;
	bpf_tail_call(c->skb, &cjmp, 0);
	t = c->a;
	c->a = c->b;
	c->b = t;
	return 0;
}

SEC("tc") __beyond __failure __msg("bpf_spin_unlock of different lock")
__errno(EACCES)
__on("6.12", "errno=EINVAL") __on("6.12", "msg=tail_call cannot be used in a callback")
__on("6.12", "kind=beyond")
int cb_tail_call_skips_swap_back(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *e0, *e1;
	struct swap_ctx c;

	e0 = bpf_map_lookup_elem(&cmap, &k0);
	e1 = bpf_map_lookup_elem(&cmap, &k1);
	if (!e0 || !e1)
		return 0;
	c.a = e0;
	c.b = e1;
	c.skb = skb;
	bpf_loop(1, swap_tail_swap, &c, 0);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&e0->lock);
	return 0;
}

static __attribute__((noinline)) int sub_swap_tail_swap(struct swap_ctx *c)
{
	swap_tail_swap(0, c);
	return 0;
}

/* The same through a plain static subprogram (stock too). */
SEC("tc") __beyond __failure __msg("bpf_spin_unlock of different lock")
__errno(EACCES)
__on("6.12", "errno=EINVAL") __on("6.12", "kind=beyond")
int sub_tail_call_skips_swap_back(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *e0, *e1;
	struct swap_ctx c;

	e0 = bpf_map_lookup_elem(&cmap, &k0);
	e1 = bpf_map_lookup_elem(&cmap, &k1);
	if (!e0 || !e1)
		return 0;
	c.a = e0;
	c.b = e1;
	c.skb = skb;
	sub_swap_tail_swap(&c);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&e0->lock);
	return 0;
}

/*
 * 5. FOUND (stock 6.1 too; upstream 6.5 "verify scalar ids mapping in
 * regsafe() using check_ids()"). Two registers that share an id in the
 * explored state (one range check bounds both) and do not in the current
 * one are compared without their ids. The path where the check bounds
 * only the copy is pruned, and the other register, unbounded there,
 * offsets a store into the lock word (4 at run time).
 */
SEC("tc") __beyond __failure __msg("invalid access to map value")
__errno(EACCES)
__on("6.12", "kind=common")
int prune_scalar_ids(struct __sk_buff *skb)
{
	int k0 = 0;
	struct elem *e;
	__u64 len = skb->len;

	e = bpf_map_lookup_elem(&cmap, &k0);
	if (!e)
		return 0;
	asm volatile(
		"r7 = %[len];"
		"r7 >>= 4;"		/* a: 4 at run time */
		"r8 = %[len];"
		"r8 >>= 3;"		/* b: 8 at run time */
		"if %[len] > 32 goto l0_%=;"	/* taken at run time, explored second */
		"r8 = r7;"		/* explored first: b is a copy of a */
	"l0_%=:"
		"call 7; call 7; call 7; call 7; call 7; call 7;"
		"if r8 != 8 goto l1_%=;"
		"r1 = %[e];"
		"r1 += r7;"		/* a == 8 where b is a copy of a */
		"r2 = 0;"
		"*(u32 *)(r1 + 0) = r2;"
	"l1_%=:"
		:: [e]"r"(e), [len]"r"(len)
		: "r0", "r1", "r2", "r3", "r4", "r5", "r7", "r8", "memory");
	return 0;
}

/* The twin: b is never a copy of a, and the store is refused. */
SEC("tc") __common __failure __msg("invalid access to map value")
__errno(EACCES)
int scalar_ids_twin(struct __sk_buff *skb)
{
	int k0 = 0;
	struct elem *e;
	__u64 len = skb->len;

	e = bpf_map_lookup_elem(&cmap, &k0);
	if (!e)
		return 0;
	asm volatile(
		"r7 = %[len];"
		"r7 >>= 4;"
		"r8 = %[len];"
		"r8 >>= 3;"
		"if r8 != 8 goto l1_%=;"
		"r1 = %[e];"
		"r1 += r7;"
		"r2 = 0;"
		"*(u32 *)(r1 + 0) = r2;"
	"l1_%=:"
		:: [e]"r"(e), [len]"r"(len)
		: "r0", "r1", "r2", "r3", "r4", "r5", "r7", "r8", "memory");
	return 0;
}

/*
 * 6. A lock taken in one run and released in the next: the callback
 * returns holding it. Refused (stock too).
 */
struct lock_ctx {
	struct elem *e;
};

static long lock_on_even_run(__u32 i, struct lock_ctx *c)
{
	if (!(i & 1))
		bpf_spin_lock(&c->e->lock);
	else
		bpf_spin_unlock(&c->e->lock);
	return 0;
}

/* 6.12 refuses the second run's call of bpf_loop() under the lock */
SEC("tc") __failure __msg("bpf_spin_unlock is missing")
__errno(EINVAL)
__on("6.12", "msg=function calls are not allowed while holding a lock")
int cb_lock_across_runs(struct __sk_buff *skb)
{
	int k0 = 0;
	struct lock_ctx c = {};

	c.e = bpf_map_lookup_elem(&cmap, &k0);
	if (!c.e)
		return 0;
	bpf_loop(2, lock_on_even_run, &c, 0);
	return 0;
}

/*
 * 7. Non-zero flags: bpf_loop() runs nothing and returns -EINVAL. The
 * callback copies a into b; after no run b is still NULL. Refused: flags
 * not known zero mean zero runs are walked too. Stock accepts.
 */
struct two_elems {
	struct elem *a;
	struct elem *b;
};

static long copy_a_to_b(__u32 i, struct two_elems *c)
{
	c->b = c->a;
	return 0;
}

SEC("tc") __beyond __failure __msg("R1 type=scalar expected=map_value")
__errno(EACCES)
__on("6.12", "kind=feature")
int loop_flags_nonzero(struct __sk_buff *skb)
{
	int k0 = 0;
	struct two_elems c;

	c.a = bpf_map_lookup_elem(&cmap, &k0);
	if (!c.a)
		return 0;
	c.b = NULL;
	bpf_loop(1, copy_a_to_b, &c, 1);
	bpf_spin_lock(&c.b->lock);
	bpf_spin_unlock(&c.b->lock);
	return 0;
}

/* bpf_for_each_map_elem() with flags the verifier does not know */
static long copy_a_to_b_elem(struct bpf_map *map, int *key, struct elem *val,
			     struct two_elems *c)
{
	c->b = c->a;
	return 0;
}

SEC("tc") __beyond __failure __msg("R1 type=scalar expected=map_value")
__errno(EACCES)
__on("6.12", "kind=feature")
int for_each_flags_unknown(struct __sk_buff *skb)
{
	int k0 = 0;
	struct two_elems c;
	__u64 flags = skb->len & 1;

	c.a = bpf_map_lookup_elem(&cmap, &k0);
	if (!c.a)
		return 0;
	c.b = NULL;
	bpf_for_each_map_elem(&cmap, copy_a_to_b_elem, &c, flags);
	bpf_spin_lock(&c.b->lock);
	bpf_spin_unlock(&c.b->lock);
	return 0;
}

/*
 * 8. An inner map whose template allows other sizes (BPF_F_INNER_MAP):
 * its element count is not known at the call, so no run-by-run walk and
 * the swap is refused. Stock accepts (and an inner map of two elements
 * swaps a back: element 0 locked, element 1 unlocked).
 */
struct inner_arr {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_INNER_MAP);
	__type(key, int);
	__type(value, long);	/* no lock: stock refuses locks in inner maps */
} inner_one SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner_arr);
} couter SEC(".maps") = {
	.values = { [0] = &inner_one },
};

static long swap_elems_elem(struct bpf_map *map, int *key, long *val,
			    struct two_elems *c)
{
	struct elem *t = c->a;

	c->a = c->b;
	c->b = t;
	return 0;
}

SEC("tc") __beyond __failure __msg("a callback cannot store a pointer into its caller's stack")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
__on("6.12", "kind=feature")
int for_each_inner_map_any_size(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *e1;
	struct two_elems c;
	void *inner;

	c.a = bpf_map_lookup_elem(&cmap, &k0);
	e1 = bpf_map_lookup_elem(&cmap, &k1);
	inner = bpf_map_lookup_elem(&couter, &k0);
	if (!c.a || !e1 || !inner)
		return 0;
	c.b = e1;
	/* one run per element of the template: a is element 1 after it */
	bpf_for_each_map_elem(inner, swap_elems_elem, &c, 0);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&e1->lock);
	return 0;
}

/*
 * 8b. FOUND (0025). A per-CPU array as inner map: its template says one
 * element, but bpf_map_meta_equal() (percpu_array_map_ops' check) does not
 * compare max_entries, so any per-CPU array of the same value size goes
 * into the outer map, flags or not. cb_run_bounds() takes the template's
 * max_entries as the bound and walks one run: a is element 1 after it.
 * With a two-element inner map inserted from user space, the callback
 * runs twice, a is element 0 again, and the program locks element 0 and
 * unlocks element 1. Only ARRAY's array_map_meta_equal() pins the size
 * (without BPF_F_INNER_MAP); a fix walks inner per-CPU arrays in one pass.
 */
struct inner_pcpu {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, long);
} inner_pcpu_one SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner_pcpu);
} couter_pcpu SEC(".maps") = {
	.values = { [0] = &inner_pcpu_one },
};

SEC("tc") __beyond __failure __msg("a callback cannot store a pointer into its caller's stack")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
__on("6.12", "kind=feature")
int for_each_inner_percpu_any_size(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *e1;
	struct two_elems c;
	void *inner;

	c.a = bpf_map_lookup_elem(&cmap, &k0);
	e1 = bpf_map_lookup_elem(&cmap, &k1);
	inner = bpf_map_lookup_elem(&couter_pcpu, &k0);
	if (!c.a || !e1 || !inner)
		return 0;
	c.b = e1;
	/* one run per element of the template: a is element 1 after it */
	bpf_for_each_map_elem(inner, swap_elems_elem, &c, 0);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&e1->lock);
	return 0;
}

/*
 * Its mirror (same finding), for the run-time demonstration in holes.c:
 * locks element 2 and, after two runs, releases element 0.
 */
SEC("tc") __beyond __failure __msg("a callback cannot store a pointer into its caller's stack")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
__on("6.12", "kind=feature")
int for_each_inner_percpu_unlocks_other(struct __sk_buff *skb)
{
	int k0 = 0, k2 = 2;
	struct elem *e2;
	struct two_elems c;
	void *inner;

	c.a = bpf_map_lookup_elem(&cmap, &k0);
	e2 = bpf_map_lookup_elem(&cmap, &k2);
	inner = bpf_map_lookup_elem(&couter_pcpu, &k0);
	if (!c.a || !e2 || !inner)
		return 0;
	c.b = e2;
	bpf_for_each_map_elem(inner, swap_elems_elem, &c, 0);
	bpf_spin_lock(&e2->lock);
	bpf_spin_unlock(&c.a->lock);	/* element 2 after one run, 0 after two */
	return 0;
}

/*
 * 9. Single-pass callbacks: writes that are not plain stores (atomics,
 * variable-offset stores, a global function's argument, a static
 * subprogram two calls down, a bounded callback nested inside). Each one
 * would hide, as a constant in the caller's view, the branch that
 * returns holding the lock. All recorded and refused (stock refuses too).
 */
struct scalars {
	long keep;
	long out;
};

#define HIDES_EXIT_BODY(cb)						\
	struct scalars c = { .keep = 0, .out = 0 };			\
	int k0 = 0;							\
	struct elem *e;							\
									\
	bpf_for_each_map_elem(&chash, cb, &c, 0);			\
	e = bpf_map_lookup_elem(&cmap, &k0);				\
	if (!e)								\
		return 0;						\
	bpf_spin_lock(&e->lock);					\
	if (*(volatile long *)&c.out)					\
		return 1;						\
	bpf_spin_unlock(&e->lock);					\
	return 0;

static long atomic_out(struct bpf_map *map, int *key, struct elem *val, struct scalars *c)
{
	__sync_fetch_and_add(&c->out, 1);
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int hash_cb_atomic_write(struct __sk_buff *skb)
{
	HIDES_EXIT_BODY(atomic_out)
}

static long var_off_out(struct bpf_map *map, int *key, struct elem *val, struct scalars *c)
{
	long off = val->cnt & 8;

	*(long *)((void *)c + off) = 1;
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int hash_cb_var_off_write(struct __sk_buff *skb)
{
	HIDES_EXIT_BODY(var_off_out)
}

__attribute__((noinline)) int global_set(long *p)
{
	if (p)
		*p = 1;
	return 0;
}

static long global_out(struct bpf_map *map, int *key, struct elem *val, struct scalars *c)
{
	global_set(&c->out);
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int hash_cb_global_fn_write(struct __sk_buff *skb)
{
	HIDES_EXIT_BODY(global_out)
}

static __attribute__((noinline)) int deep_set(long *p, int depth)
{
	*(volatile long *)p = depth;
	return 0;
}

static __attribute__((noinline)) int mid_set(long *p)
{
	return deep_set(p, 1);
}

static long deep_out(struct bpf_map *map, int *key, struct elem *val, struct scalars *c)
{
	mid_set(&c->out);
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int hash_cb_deep_subprog_write(struct __sk_buff *skb)
{
	HIDES_EXIT_BODY(deep_out)
}

static long loop_inner_out(__u32 i, struct scalars *c)
{
	c->out = 1;
	return 0;
}

static long nested_bounded_out(struct bpf_map *map, int *key, struct elem *val,
			       struct scalars *c)
{
	bpf_loop(1, loop_inner_out, c, 0);
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int hash_cb_nested_bounded_write(struct __sk_buff *skb)
{
	HIDES_EXIT_BODY(nested_bounded_out)
}

/*
 * 10. A chain of writes each reachable only once the previous slot is
 * forgotten: more passes than BPF_CB_WRITE_PASSES (eight), then every
 * slot forgotten. Refused. Stock accepts (with eleven elements in the
 * hash map, the eleventh run returns holding the lock).
 */
struct chain {
	long s[11];
};

#define LINK(n) if (((volatile long *)c->s)[n]) ((volatile long *)c->s)[(n) + 1] = 1;

static long chain_cb(struct bpf_map *map, int *key, struct elem *val, struct chain *c)
{
	/* from the last link back: no run writes a slot it then reads */
	LINK(9) LINK(8) LINK(7) LINK(6) LINK(5) LINK(4) LINK(3) LINK(2) LINK(1) LINK(0)
	((volatile long *)c->s)[0] = 1;
	return 0;
}

SEC("tc") __beyond __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
__on("6.12", "kind=feature")
int hash_cb_write_chain(struct __sk_buff *skb)
{
	struct chain c = {};
	int k0 = 0;
	struct elem *e;

	bpf_for_each_map_elem(&chash, chain_cb, &c, 0);
	e = bpf_map_lookup_elem(&cmap, &k0);
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	if (((volatile long *)c.s)[10])
		return 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/*
 * 11. FOUND (0025, the root of 1). A bounded loop's count read by a
 * callback from its caller's stack: cb_unroll_start() marks R1 precise,
 * but the backtracking stops at the load through the context pointer, and
 * the path with count 2 is pruned against the one with count 1. Its
 * second, unverified run locks element 1 and unlocks element 0.
 */
struct count_ctx {
	struct elem *e;
	long n;		/* 1 on the explored path, 2 on the pruned one */
	long g;
};

static long count_outer(__u32 i, struct count_ctx *c)
{
	bpf_loop(c->n, step_by_g, c, 0);
	return 1;
}

SEC("tc") __beyond __failure __msg("doesn't point to 'struct bpf_spin_lock'")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=off 20 doesn't point to 'struct bpf_spin_lock' that is at 4")
__on("6.12", "kind=feature")
int cb_count_from_ctx_pruned(struct __sk_buff *skb)
{
	struct count_ctx c = {};
	int k0 = 0;
	long n;

	c.e = bpf_map_lookup_elem(&cmap, &k0);
	if (!c.e)
		return 0;
	if (skb->len > 32)	/* taken at run time, explored second */
		n = 2;
	else
		n = 1;
	opaque(n);
	c.n = n;
	CHECKPOINT();
	bpf_loop(1, count_outer, &c, 0);
	return 0;
}

/*
 * 12. FOUND (0025, a verifier bug). The pending-state stack full when a
 * bounded callback starts: 8192 branches each leave a state to explore,
 * and the zero-run state that cb_unroll_start() pushes for bpf_loop(0 or
 * 1, ...) is the 8193rd. push_stack() fails, and on failure it frees
 * env->cur_state; cb_unroll_start() returns -ENOMEM and
 * __check_func_call()'s err_out then reads state->curframe and writes
 * state->frame[curframe + 1] = NULL in the freed state: a use after free
 * (silent on plain kernels, a KASAN report on the debug flavour), and
 * ENOMEM where stock gives EFAULT. The refusal itself is right (stock
 * refuses at the branch after the call with the same message), hence no
 * errno here; the case is for the debug flavour's splat check.
 */
static long nop_cb(__u32 i, void *c)
{
	return 0;
}

/*
 * 6.12 does not unroll bpf_loop() and pushes no zero-run state: the 8192
 * branches fit, and the program (safe) is loaded.
 */
SEC("tc") __common __failure __msg("The sequence of 8193 jumps is too complex")
__on("6.12", "success")
int cb_pending_states_full(struct __sk_buff *skb)
{
	__u64 x = skb->len;

	asm volatile(".rept 8192\n if %[x] == 0 goto +0\n .endr" :: [x]"r"(x));
	bpf_loop(x & 1, nop_cb, NULL, 0);
	asm volatile("if %[x] == 1 goto +0" :: [x]"r"(x));
	return 0;
}

/*
 * 13. LD_ABS in a subprogram may end it (a hidden exit with r0 = 0) and
 * the verifier walks that exit, but precision backtracking does not stop
 * there as it does at a BPF_EXIT: walking back from the caller, it goes
 * on through the callee's instructions as if they were the caller's, and
 * the callee's "r7 = 0" ends the search for the caller's r7. Refused all
 * the same (stock too): the callee's normal return is walked as well,
 * its BPF_EXIT makes backtracking mark every scalar precise, and the
 * path with r7 = 1 is then not pruned. Kept as a regression case.
 */
struct ld_ctx {
	struct __sk_buff *skb;
};

static __attribute__((noinline, used)) int ld_abs_sub(struct ld_ctx *c)
{
	asm volatile(
		"r6 = *(u64 *)(r1 + 0);"	/* the packet, through the pointer */
		"r7 = 0;"
		"call 7;"
		"call 7;"
		"r8 = 0; r8 = 0; r8 = 0; r8 = 0; r8 = 0; r8 = 0;"
		"r0 = *(u8 *)skb[100];"		/* past the packet: the hidden exit */
		::: "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8");
	return 0;
}

#define LD_ABS_CALLER(call_insn)						\
	struct ld_ctx c = { .skb = skb };					\
	int k0 = 0;								\
	struct elem *e = bpf_map_lookup_elem(&cmap, &k0);			\
	__u64 len = skb->len;							\
									\
	if (!e)									\
		return 0;							\
	asm volatile(								\
		"r7 = 1;"							\
		"if %[len] > 32 goto l0_%=;"	/* taken at run time */	\
		"r7 = 0;"							\
	"l0_%=:"								\
		"call 7; call 7; call 7; call 7; call 7; call 7;"		\
		call_insn							\
		"r1 = r7;"							\
		"r1 <<= 4;"							\
		"r1 += %[e];"			/* element r7 */		\
		"r1 += 4;"							\
		"call 93;"			/* bpf_spin_lock */		\
		"r1 = %[e];"							\
		"r1 += 4;"							\
		"call 94;"			/* bpf_spin_unlock */		\
		:: [e]"r"(e), [len]"r"(len), [c]"r"(&c)				\
		: "r0", "r1", "r2", "r3", "r4", "r5", "r7", "memory");		\
	return 0;

SEC("tc") __failure __msg("doesn't point to 'struct bpf_spin_lock'")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
int sub_ld_abs_exit_precision(struct __sk_buff *skb)
{
	LD_ABS_CALLER("r1 = %[c]; call ld_abs_sub;")
}

/* The same through a bounded callback's last run. */
static __attribute__((used)) long ld_abs_cb(__u32 i, struct ld_ctx *c)
{
	asm volatile(
		"r6 = *(u64 *)(r2 + 0);"
		"r7 = 0;"
		"call 7;"
		"call 7;"
		"r8 = 0; r8 = 0; r8 = 0; r8 = 0; r8 = 0; r8 = 0;"
		"r0 = *(u8 *)skb[100];"
		::: "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8");
	return 0;
}

/* 6.12 refuses LD_ABS in any callback */
SEC("tc") __failure __msg("doesn't point to 'struct bpf_spin_lock'")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=cannot use BPF_LD_[ABS|IND] within callback")
int cb_ld_abs_exit_precision(struct __sk_buff *skb)
{
	LD_ABS_CALLER("r1 = 1; r2 = ld_abs_cb ll; r3 = %[c]; r4 = 0; call 181;")
}

/*
 * 14. bpf_find_vma() runs its callback at most once, maybe not at all:
 * after no run the pointers the callback would swap are still in place.
 * Refused (stock refuses locks in kprobes).
 */
struct task_struct;
struct vm_area_struct;

static long find_vma_swap(struct task_struct *task, struct vm_area_struct *vma,
			  struct two_elems *c)
{
	struct elem *t = c->a;

	c->a = c->b;
	c->b = t;
	return 0;
}

SEC("kprobe") __beyond __load_only __failure __msg("bpf_spin_unlock of different lock")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
__on("6.12", "kind=beyond")
int find_vma_zero_runs(void *ctx)
{
	int k0 = 0, k1 = 1;
	struct elem *e1;
	struct two_elems c;

	c.a = bpf_map_lookup_elem(&cmap, &k0);
	e1 = bpf_map_lookup_elem(&cmap, &k1);
	if (!c.a || !e1)
		return 0;
	c.b = e1;
	bpf_find_vma(bpf_get_current_task_btf(), 0, find_vma_swap, &c, 0);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&e1->lock);
	return 0;
}

/*
 * 15. FOUND (stock 6.1 too; upstream 6.2 "Fix partial dynptr stack slot
 * reads/writes"). A store into the second slot of a dynptr leaves its
 * first slot marked, and a dynptr made over the scrubbed slot completes
 * it again: the first dynptr passes as initialized, with the size and
 * offset of the second one's data pointer (an address), and its write
 * lands about 4 GiB past element 0. The fix destroys a dynptr whose slot
 * is written.
 */
SEC("tc") __beyond __failure __msg("Expected an initialized dynptr")
__errno(EINVAL)
__on("6.12", "kind=common")
int dynptr_second_slot_reused(struct __sk_buff *skb)
{
	struct {
		struct bpf_dynptr d1;	/* fp-32..-17; then d2 at fp-24..-9 */
		__u64 pad;
	} s;
	int k0 = 0, val = 1;
	struct elem *e;

	e = bpf_map_lookup_elem(&cmap, &k0);
	if (!e)
		return 0;
	bpf_dynptr_from_mem(&e->data, sizeof(e->data), 0, &s.d1);
	((volatile __u64 *)&s.d1)[1] = 0;	/* scrub d1's second slot */
	bpf_dynptr_from_mem(&e->data, sizeof(e->data), 0,
			    (struct bpf_dynptr *)((__u64 *)&s.d1 + 1));
	bpf_dynptr_write(&s.d1, 0, &val, sizeof(val), 0);
	return 0;
}
