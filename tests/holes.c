// SPDX-License-Identifier: GPL-2.0
/*
 * Soundness holes: programs that stock 6.1 accepts and that leave a lock
 * held or write a lock word, and the capability the fixes give ours.
 *
 * - prune_*: state pruning must keep "which element is locked". Each
 *   program locks element 0 and, on the branch the verifier explores
 *   second (a jump's target is pushed and walked after its fall-through),
 *   points the unlock at element 1: through a register, a spilled stack
 *   slot, a callee frame or a loop. Each is loaded with default flags and
 *   with BPF_F_TEST_STATE_FREQ; the twin without the move is accepted.
 * - leak_demo: what stock does with such a program at run time, without
 *   hanging the guest.
 * - inner_map_*, iter_*: a lock word reached through an inner map swap or
 *   a map iterator.
 * - cb_*: callbacks handed a map value (progs/holes.bpf.c, annotated).
 * - progs/holes_cb.bpf.c (annotated): the attacker review of 0025/0026
 *   (callbacks run by run or in one pass, dynptrs, pruning), and its two
 *   run-time demonstrations here, cb_runs_leak_demo and
 *   inner_percpu_leak_demo.
 * - progs/holes_review.bpf.c (annotated) and review_*: an outside review
 *   of 0025-0029 (linked scalars, dynptrs under callbacks, tail calls in
 *   subprograms, zero runs, the verifier's passes).
 * - review50_*, review51_*: an attacker review of 0050 (a spilled scalar
 *   compared with eight MISC or ZERO bytes) and 0051 (a store into a
 *   caller's slot through a pointer left imprecise): two findings, red
 *   until fixed, and guards.
 * - review52_*: an attacker review of 0052 (an aligned zero spilled as an
 *   imprecise scalar) and 0053 (a checkpoint where a callback returns):
 *   no unsound program found accepted; guards, and three compatibility
 *   cases red on 0052 until fixed.
 * - review54_*: a second attacker review of 0052-0054 (widening of precise
 *   scalars, a zero stored beside a narrower spilled zero): one finding,
 *   red until fixed, and its twin.
 * - review56_*: an attacker review of 0056-0058 (a later run converging
 *   anywhere, a state at every prune point of a callback): no unsound
 *   program found accepted; a guard, its twin and a sound nested loop
 *   (the states 0057 may keep: cb_cost/long_callback_states).
 * - review59_*: an attacker review of a change to cb_converged() (the
 *   callers' frames left to their own marks), not kept: it accepted
 *   reads past a value and a write of the lock word; guards and a twin.
 * - progs/holes612.bpf.c (annotated, 6.12 only): an attacker review of the
 *   6.12 series' 0010-0012 (for_each values as one lock, inner maps'
 *   locks in tracing programs, callbacks that only tail-call).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <linux/capability.h>

#include "insn.h"
#include "progs.h"

#define LOCK_OFF 4
#define NR_ELEMS 4

struct elem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

/* A 16-byte value type: {cnt, lock, d0, d1} or four plain ints. */
static int value_btf(bool with_lock, __u32 *value_id)
{
	struct btf *b = btf__new_empty();
	const void *raw;
	__u32 size;
	int i32, lock, v, fd;

	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	lock = btf__add_struct(b, "bpf_spin_lock", 4);
	btf__add_field(b, "val", i32, 0, 0);
	v = btf__add_struct(b, "elem", sizeof(struct elem));
	btf__add_field(b, "cnt", i32, 0, 0);
	btf__add_field(b, "lock", with_lock ? lock : i32, 32, 0);
	btf__add_field(b, "d0", i32, 64, 0);
	btf__add_field(b, "d1", i32, 96, 0);
	raw = btf__raw_data(b, &size);
	fd = bpf_btf_load(raw, size, NULL);
	btf__free(b);
	*value_id = v;
	return fd;
}

/*
 * An array of NR_ELEMS struct elem, with or without a lock in its BTF,
 * with these map flags.
 */
static int elem_array_flags(struct kt *t, bool with_lock, __u32 flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = flags);
	__u32 vid;
	int btf, fd;

	btf = value_btf(with_lock, &vid);
	if (!KT_OK(t, btf, "load value BTF"))
		return -1;
	opts.btf_fd = btf;
	opts.btf_key_type_id = 1;	/* int */
	opts.btf_value_type_id = vid;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, with_lock ? "locked" : "plain",
			    sizeof(int), sizeof(struct elem), NR_ELEMS, &opts);
	close(btf);
	KT_OK(t, fd, "create array");
	return fd;
}

/* An array of NR_ELEMS struct elem, with or without a lock in its BTF. */
static int elem_array(struct kt *t, bool with_lock)
{
	return elem_array_flags(t, with_lock, 0);
}

/* A growing program with forward jumps patched by label. */
struct prog {
	struct bpf_insn insn[96];
	int n;
	int exit_jumps[8];
	int nexit;
};

static int emit(struct prog *p, struct bpf_insn i)
{
	p->insn[p->n] = i;
	return p->n++;
}

static void land(struct prog *p, int jump)
{
	p->insn[jump].off = p->n - jump - 1;
}

/* dst = lookup(map, key); NULL goes to the common exit. */
static void emit_lookup(struct prog *p, int map, int key, int dst)
{
	struct bpf_insn ld[] = { I_LD_MAP_FD(BPF_REG_1, map) };

	emit(p, I_ST_W(BPF_REG_10, -4 - 4 * key, key));
	emit(p, ld[0]);
	emit(p, ld[1]);
	emit(p, I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	emit(p, I_ADD64_IMM(BPF_REG_2, -4 - 4 * key));
	emit(p, I_CALL(BPF_FUNC_map_lookup_elem));
	p->exit_jumps[p->nexit++] = emit(p, I_JEQ_IMM(BPF_REG_0, 0, 0));
	emit(p, I_MOV64_REG(dst, BPF_REG_0));
}

static void emit_lock_call(struct prog *p, int reg, int fn)
{
	emit(p, I_MOV64_REG(BPF_REG_1, reg));
	emit(p, I_ADD64_IMM(BPF_REG_1, LOCK_OFF));
	emit(p, I_CALL(fn));
}

/* r0 = skb->len; the jump is taken at run time (64-byte test packets). */
static int emit_branch(struct prog *p, int len_reg)
{
	emit(p, I_LDX_W(len_reg, BPF_REG_6, offsetof(struct __sk_buff, len)));
	return emit(p, I_JGT_IMM(len_reg, 32, 0));
}

static void emit_exit(struct prog *p)
{
	int i;

	for (i = 0; i < p->nexit; i++)
		land(p, p->exit_jumps[i]);
	emit(p, I_MOV64_IMM(BPF_REG_0, 0));
	emit(p, I_EXIT());
}

enum shape { VIA_REG, VIA_SPILL, VIA_CALLEE, VIA_LOOP, VIA_MAYBE_NULL };

/* dst = lookup(map, key), left unchecked for NULL */
static void emit_lookup_unchecked(struct prog *p, int map, int key, int dst)
{
	struct bpf_insn ld[] = { I_LD_MAP_FD(BPF_REG_1, map) };

	emit(p, I_ST_W(BPF_REG_10, -4 - 4 * key, key));
	emit(p, ld[0]);
	emit(p, ld[1]);
	emit(p, I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	emit(p, I_ADD64_IMM(BPF_REG_2, -4 - 4 * key));
	emit(p, I_CALL(BPF_FUNC_map_lookup_elem));
	emit(p, I_MOV64_REG(dst, BPF_REG_0));
}

/*
 * Found by review: the pointers are moved before their NULL checks, and
 * only the checks make them the same element in one state.
 */
static void build_maybe_null(struct prog *p, bool move, int map, int k0, int k1)
{
	int jgt, ja, i;

	memset(p, 0, sizeof(*p));
	emit(p, I_LDX_W(BPF_REG_9, BPF_REG_1, offsetof(struct __sk_buff, len)));
	emit_lookup_unchecked(p, map, k0, BPF_REG_6);
	emit_lookup_unchecked(p, map, k1, BPF_REG_7);
	jgt = emit(p, I_JGT_IMM(BPF_REG_9, 32, 0));
	emit(p, I_MOV64_REG(BPF_REG_8, BPF_REG_6));
	for (i = 0; i < 8; i++)	/* room for a checkpoint before the join */
		emit(p, I_MOV64_IMM(BPF_REG_0, 0));
	ja = emit(p, I_JA(0));
	land(p, jgt);
	emit(p, I_MOV64_REG(BPF_REG_8, move ? BPF_REG_7 : BPF_REG_6));
	land(p, ja);
	p->exit_jumps[p->nexit++] = emit(p, I_JEQ_IMM(BPF_REG_8, 0, 0));
	p->exit_jumps[p->nexit++] = emit(p, I_JEQ_IMM(BPF_REG_6, 0, 0));
	p->exit_jumps[p->nexit++] = emit(p, I_JEQ_IMM(BPF_REG_7, 0, 0));
	emit_lock_call(p, BPF_REG_8, BPF_FUNC_spin_lock);
	emit_lock_call(p, BPF_REG_6, BPF_FUNC_spin_unlock);
	emit_exit(p);
}

/*
 * Lock element k0 (r7) and unlock through what, on the jump's target,
 * becomes element k1 (r8) when 'move' is set; the twin keeps k0.
 */
static void build(struct prog *p, enum shape shape, bool move, int map, int k0, int k1)
{
	int jgt, ja, jne, head, call;

	if (shape == VIA_MAYBE_NULL)
		return build_maybe_null(p, move, map, k0, k1);
	memset(p, 0, sizeof(*p));
	emit(p, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
	emit_lookup(p, map, k0, BPF_REG_7);
	emit_lookup(p, map, k1, BPF_REG_8);
	switch (shape) {
	case VIA_REG:
		emit_lock_call(p, BPF_REG_7, BPF_FUNC_spin_lock);
		jgt = emit_branch(p, BPF_REG_0);
		ja = emit(p, I_JA(0));
		land(p, jgt);
		emit(p, move ? I_MOV64_REG(BPF_REG_7, BPF_REG_8) : I_MOV64_IMM(BPF_REG_0, 0));
		land(p, ja);
		emit_lock_call(p, BPF_REG_7, BPF_FUNC_spin_unlock);
		break;
	case VIA_SPILL:
		emit(p, I_STX_DW(BPF_REG_10, BPF_REG_7, -24));
		emit_lock_call(p, BPF_REG_7, BPF_FUNC_spin_lock);
		jgt = emit_branch(p, BPF_REG_0);
		ja = emit(p, I_JA(0));
		land(p, jgt);
		emit(p, I_STX_DW(BPF_REG_10, move ? BPF_REG_8 : BPF_REG_7, -24));
		land(p, ja);
		emit(p, I_LDX_DW(BPF_REG_1, BPF_REG_10, -24));
		emit(p, I_ADD64_IMM(BPF_REG_1, LOCK_OFF));
		emit(p, I_CALL(BPF_FUNC_spin_unlock));
		break;
	case VIA_LOOP:
		emit_lock_call(p, BPF_REG_7, BPF_FUNC_spin_lock);
		emit(p, I_LDX_W(BPF_REG_9, BPF_REG_6, offsetof(struct __sk_buff, len)));
		emit(p, I_MOV64_IMM(BPF_REG_2, 2));
		head = p->n;
		jgt = emit(p, I_JGT_IMM(BPF_REG_9, 32, 0));
		ja = emit(p, I_JA(0));
		land(p, jgt);
		emit(p, move ? I_MOV64_REG(BPF_REG_7, BPF_REG_8) : I_MOV64_IMM(BPF_REG_0, 0));
		land(p, ja);
		emit(p, I_ADD64_IMM(BPF_REG_2, -1));
		jne = emit(p, I_JNE_IMM(BPF_REG_2, 0, 0));
		p->insn[jne].off = head - jne - 1;
		emit_lock_call(p, BPF_REG_7, BPF_FUNC_spin_unlock);
		break;
	case VIA_MAYBE_NULL:
		break;
	case VIA_CALLEE:
		/* main: sub(e0, e1, skb->len); the callee locks and unlocks */
		emit(p, I_MOV64_REG(BPF_REG_1, BPF_REG_7));
		emit(p, I_MOV64_REG(BPF_REG_2, BPF_REG_8));
		emit(p, I_LDX_W(BPF_REG_3, BPF_REG_6, offsetof(struct __sk_buff, len)));
		call = emit(p, I_CALL_SUB(0));
		emit_exit(p);
		p->insn[call].imm = p->n - call - 1;
		p->nexit = 0;
		emit(p, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
		emit(p, I_MOV64_REG(BPF_REG_7, BPF_REG_2));
		emit(p, I_MOV64_REG(BPF_REG_8, BPF_REG_3));
		emit_lock_call(p, BPF_REG_6, BPF_FUNC_spin_lock);
		jgt = emit(p, I_JGT_IMM(BPF_REG_8, 32, 0));
		ja = emit(p, I_JA(0));
		land(p, jgt);
		emit(p, move ? I_MOV64_REG(BPF_REG_6, BPF_REG_7) : I_MOV64_IMM(BPF_REG_0, 0));
		land(p, ja);
		emit_lock_call(p, BPF_REG_6, BPF_FUNC_spin_unlock);
		break;
	}
	emit_exit(p);
}

static char vlog[1 << 18];

static int load(const struct prog *p, __u32 flags)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = vlog, .log_size = sizeof(vlog),
		    .log_level = 1, .prog_flags = flags);
	int fd;

	vlog[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "hole", "GPL", p->insn, p->n, &opts);
	return fd < 0 ? -errno : fd;
}

static const char *const flag_names[] = { "default flags", "BPF_F_TEST_STATE_FREQ" };
static const __u32 flag_values[] = { 0, BPF_F_TEST_STATE_FREQ };

/* One load of a program that must be refused: with @err and @msg in the log. */
static void check_refused(struct kt *t, unsigned int f, int fd, const char *what, int err,
			  const char *msg)
{
	if (fd >= 0) {
		kt_fail(t, "%s: the verifier accepted %s", flag_names[f], what);
		close(fd);
		return;
	}
	if (fd != -err)
		kt_fail(t, "%s: errno %d, want %d", flag_names[f], -fd, err);
	if (!log_has(vlog, msg))
		kt_fail(t, "%s: log lacks \"%s\"; tail:\n%s", flag_names[f], msg,
			vlog + (strlen(vlog) > 400 ? strlen(vlog) - 400 : 0));
}

/* The unsound shape: refused with both flag sets, with @err and @msg in the log. */
static void refused_both_ways(struct kt *t, const struct prog *p, const char *what,
			      int err, const char *msg)
{
	unsigned int f;

	for (f = 0; f < KT_ARRAY_SIZE(flag_values); f++)
		check_refused(t, f, load(p, flag_values[f]), what, err, msg);
}

/* The errno of a misused lock: EACCES on 6.1, EINVAL on 6.12 (upstream's rule). */
static int lock_misuse_errno(void)
{
	return strcmp(kt_base(), "6.1") ? EINVAL : EACCES;
}

static bool on_612(void)
{
	return !strcmp(kt_base(), "6.12");
}

/*
 * A case about the 6.1 series' own verifier work, which 6.12's tree
 * (stock's verifier there, left alone by the 6.12 series) refuses on all
 * three kernels for the reason in @why: skipped there, not judged.
 */
static bool only_on_61(struct kt *t, const char *why)
{
	if (!on_612())
		return true;
	kt_skip(t, "a 6.1 case; 6.12's verifier %s on every kernel", why);
	return false;
}

/* A 6.1 case run through only_on_61(), with why 6.12 refuses it everywhere. */
struct case_61 {
	void (*fn)(struct kt *t, const void *arg);
	const void *arg;
	const char *why_612;
};

static void run_on_61(struct kt *t, const void *arg)
{
	const struct case_61 *c = arg;

	if (only_on_61(t, c->why_612))
		c->fn(t, c->arg);
}

/* 6.12's words for review50_guard_zero and review50_zero_covers_narrowed_spill */
#define UNBOUNDED_612 \
	"math between map_value pointer and register with unbounded min value is not allowed"

/* Accepted with both flag sets, and it runs. */
static void accepted_both_ways(struct kt *t, const struct prog *p)
{
	unsigned int f;
	__u32 retval;

	for (f = 0; f < KT_ARRAY_SIZE(flag_values); f++) {
		int fd = load(p, flag_values[f]);

		if (fd < 0) {
			kt_fail(t, "%s: the correct twin was refused (errno %d); tail:\n%s",
				flag_names[f], -fd,
				vlog + (strlen(vlog) > 400 ? strlen(vlog) - 400 : 0));
			continue;
		}
		KT_OK(t, prog_run(fd, 10, &retval), "test_run");
		close(fd);
	}
}

static void prune_refused(struct kt *t, const void *arg)
{
	enum shape shape = (enum shape)(long)arg;
	int map = elem_array(t, true);
	struct prog p;

	if (map < 0)
		return;
	build(&p, shape, true, map, 0, 1);
	refused_both_ways(t, &p, "a program that locks element 0 and unlocks element 1",
			  lock_misuse_errno(),
			  "bpf_spin_unlock of different lock");
	close(map);
}

/* The twin that unlocks what it locked: accepted both ways, and it runs. */
static void prune_twin_accepted(struct kt *t, const void *arg)
{
	enum shape shape = (enum shape)(long)arg;
	int map = elem_array(t, true);
	struct prog p;

	if (map < 0)
		return;
	build(&p, shape, false, map, 0, 1);
	accepted_both_ways(t, &p);
	close(map);
}

/*
 * Review hole 1 (0035): r1 and r2 share an id on the path the verifier
 * walks first; on the jump's target r2 is r1 & 4, unlinked, and r1 is the
 * same bit for bit (id included). Pruned at the join, "if r1 != 0" bounds
 * r2 to 0 only on the first path, and the store through value + r2 hits
 * the lock word at offset 4 on the second. The twin links r2 on both.
 */
static void build_linked_scalars(struct prog *p, bool unlink, int map)
{
	int jgt, ja;

	memset(p, 0, sizeof(*p));
	emit(p, I_CALL(BPF_FUNC_get_prandom_u32));
	emit(p, I_MOV64_REG(BPF_REG_8, BPF_REG_0));
	emit_lookup(p, map, 0, BPF_REG_6);
	emit(p, I_CALL(BPF_FUNC_get_prandom_u32));
	emit(p, I_MOV64_REG(BPF_REG_1, BPF_REG_0));	/* r0, r1: one id */
	jgt = emit(p, I_JGT_IMM(BPF_REG_8, 100, 0));
	emit(p, I_MOV64_REG(BPF_REG_2, BPF_REG_1));	/* r2 linked to r1 */
	ja = emit(p, I_JA(0));
	land(p, jgt);
	emit(p, I_MOV64_REG(BPF_REG_2, BPF_REG_1));
	if (unlink)
		emit(p, I_AND64_IMM(BPF_REG_2, 4));	/* r2 in {0, 4}, no id */
	land(p, ja);
	p->exit_jumps[p->nexit++] = emit(p, I_JNE_IMM(BPF_REG_1, 0, 0));
	emit(p, I_MOV64_REG(BPF_REG_3, BPF_REG_6));
	emit(p, I_ADD64_REG(BPF_REG_3, BPF_REG_2));
	emit(p, I_ST_W(BPF_REG_3, 0, 1));
	emit_exit(p);
}

static void review_linked_scalars(struct kt *t, const void *arg)
{
	bool unlink = arg != NULL;
	int map = elem_array(t, true);
	struct prog p;

	if (map < 0)
		return;
	build_linked_scalars(&p, unlink, map);
	if (unlink)
		refused_both_ways(t, &p, "a store through value + r2 with r2 in {0, 4} (the lock word at 4)",
				  EACCES, "bpf_spin_lock cannot be accessed directly by load/store");
	else
		accepted_both_ways(t, &p);
	close(map);
}

/*
 * Load @n instructions whose callback starts at @cb_start (BTF func_info),
 * with the verifier log at @log_level in vlog.
 */
static int load_with_cb(const struct bpf_insn *insn, int n, int cb_start, __u32 flags,
			__u32 log_level)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = vlog, .log_size = sizeof(vlog),
		    .log_level = log_level, .prog_flags = flags);
	static const int nargs[] = { 1, 2 };
	struct bpf_func_info func[2];
	__u32 ids[2];
	int fd, btf = funcs_btf_load(2, nargs, ids);

	if (btf < 0)
		return btf;
	func[0] = (struct bpf_func_info){ 0, ids[0] };
	func[1] = (struct bpf_func_info){ cb_start, ids[1] };
	opts.prog_btf_fd = btf;
	opts.func_info = func;
	opts.func_info_cnt = 2;
	opts.func_info_rec_size = sizeof(func[0]);
	vlog[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "cbreview", "GPL", insn, n, &opts);
	fd = fd < 0 ? -errno : fd;
	close(btf);
	return fd;
}

/* Refused with both flag sets, with @err and @msg in the log. */
static void cb_refused_both_ways(struct kt *t, const struct bpf_insn *insn, int n, int cb_start,
				 int err, const char *msg)
{
	unsigned int f;

	for (f = 0; f < KT_ARRAY_SIZE(flag_values); f++)
		check_refused(t, f, load_with_cb(insn, n, cb_start, flag_values[f], 1), "it",
			      err, msg);
}

/*
 * Third review (0049), finding 1: two paths call bpf_loop(2) with
 * different context pointers (fp-16 and fp-8) and slots that make run 1
 * take the same branch on both. Within run 1, the second path was pruned
 * against the first once the context pointer was dead in the run, though
 * run 2 starts from it again: run 2 of the second path, never walked,
 * read 8 bytes above its caller's frame (a kernel address). Runs of a
 * callback now prune only against runs with the same arguments.
 */
static void review_cb_args_pruned(struct kt *t, const void *arg)
{
	struct bpf_insn p[64], ld[] = { I_LD_FUNC(BPF_REG_2, 0) };
	int i = 0, jb, ja, ldf, jl, cb;

	p[i++] = I_LDX_W(BPF_REG_7, BPF_REG_1, 0);	/* skb->len */
	jb = i;
	p[i++] = I_JGT_IMM(BPF_REG_7, 100, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 1);		/* A: fp-8 = 1, fp-16 = 0 */
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_0, -8);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_0, -16);
	p[i++] = I_MOV64_REG(BPF_REG_3, BPF_REG_10);
	p[i++] = I_ADD64_IMM(BPF_REG_3, -16);
	ja = i;
	p[i++] = I_JA(0);
	p[jb].off = i - jb - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);		/* B: fp-8 = 0, fp-16 = 1 */
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_0, -8);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 1);
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_0, -16);
	p[i++] = I_MOV64_REG(BPF_REG_3, BPF_REG_10);
	p[i++] = I_ADD64_IMM(BPF_REG_3, -8);
	p[ja].off = i - ja - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_1, 2);
	ldf = i;
	p[i++] = ld[0];
	p[i++] = ld[1];
	p[i++] = I_MOV64_IMM(BPF_REG_4, 0);
	p[i++] = I_CALL(BPF_FUNC_loop);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	p[i++] = I_LDX_DW(BPF_REG_3, BPF_REG_2, 0);	/* run 1: the counter is 0 */
	jl = i;
	p[i++] = I_JNE_IMM(BPF_REG_3, 0, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_3, 1);
	p[i++] = I_STX_DW(BPF_REG_2, BPF_REG_3, 0);
	for (int k = 0; k < 5; k++)			/* room for a checkpoint */
		p[i++] = I_MOV64_IMM(BPF_REG_5, 0);
	p[i++] = I_JA(0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	p[jl].off = i - jl - 1;
	p[i++] = I_LDX_DW(BPF_REG_4, BPF_REG_2, 8);	/* run 2: B reads fp+0 */
	p[i++] = I_STX_DW(BPF_REG_2, BPF_REG_4, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb_refused_both_ways(t, p, i, cb, EACCES, "invalid read from stack R2");
}

/*
 * Emit bpf_loop(@count, callback, NULL, 0) at p[*i]; returns the index of
 * the callback's ld_imm64, to aim once the callback's start is known.
 */
static int put_loop_call(struct bpf_insn *p, int *i, int count, int ctx_off)
{
	struct bpf_insn ld[] = { I_LD_FUNC(BPF_REG_2, 0) };
	int ldi;

	p[(*i)++] = I_MOV64_IMM(BPF_REG_1, count);
	ldi = *i;
	p[(*i)++] = ld[0];
	p[(*i)++] = ld[1];
	if (ctx_off) {
		p[(*i)++] = I_MOV64_REG(BPF_REG_3, BPF_REG_10);
		p[(*i)++] = I_ADD64_IMM(BPF_REG_3, ctx_off);
	} else {
		p[(*i)++] = I_MOV64_IMM(BPF_REG_3, 0);
	}
	p[(*i)++] = I_MOV64_IMM(BPF_REG_4, 0);
	p[(*i)++] = I_CALL(BPF_FUNC_loop);
	return ldi;
}

/*
 * Third review (0049), finding 2: a caller whose own loop never ends
 * calls bpf_loop(1) in it. Its second call's first run was taken for a
 * later run of the first call and pruned as converged: the loop was
 * accepted. Only runs of one call converge; the caller's loop is caught
 * as stock catches it.
 *
 * Stock-6.12 accepts the loop with default flags: is_state_visited()
 * prunes a state at the bpf_loop() call that is within range of one still
 * being explored (calls_callback(): states_equal(RANGE_WITHIN), goto hit)
 * before its infinite-loop check, so the caller's endless loop is taken
 * for converged. Ours-6.12 converges only runs of one call (patches/6.12
 * 0009): beyond stock there.
 */
static void review_caller_loop_converges(struct kt *t, const void *arg)
{
	struct bpf_insn p[32];
	int i = 0, head, ldf, cb;

	p[i++] = I_MOV64_IMM(BPF_REG_6, 0);
	head = i;
	ldf = put_loop_call(p, &i, 1, 0);
	p[i] = I_JEQ_IMM(BPF_REG_6, 0, head - i - 1);	/* always */
	i++;
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb_refused_both_ways(t, p, i, cb, EINVAL, "infinite loop detected");
}

/*
 * The same endless caller loop with a callback that matters: each turn
 * resets fp-8 to 0 and calls bpf_loop(1), whose callback stores 1 there,
 * so the caller loops for ever (`while (fp-8) { fp-8 = 0; bpf_loop(1) }`).
 * No two turns are the same state (0 before the call, 1 after the run),
 * so the infinite-loop check cannot see it; on 6.12 the state after the
 * second turn's run (fp-8 = 1) fell within the first turn's call state
 * (fp-8 unknown) and was pruned as a converged run of that call, though
 * the caller's back edge lies between them: only runs of one call may
 * converge on each other.
 */
static void review_caller_loop_reset(struct kt *t, const void *arg)
{
	struct bpf_insn p[32];
	int i = 0, head, ldf, jz, cb;

	p[i++] = I_CALL(BPF_FUNC_get_prandom_u32);
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_0, -8);	/* fp-8: unknown */
	head = i;
	ldf = put_loop_call(p, &i, 1, -8);
	p[i++] = I_LDX_DW(BPF_REG_1, BPF_REG_10, -8);
	jz = i;
	p[i++] = I_JEQ_IMM(BPF_REG_1, 0, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_1, 0);
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_1, -8);
	p[i] = I_JA(head - i - 1);
	i++;
	p[jz].off = i - jz - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_1, 1);		/* callback: *ctx = 1 */
	p[i++] = I_STX_DW(BPF_REG_2, BPF_REG_1, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb_refused_both_ways(t, p, i, cb, EINVAL, "infinite loop detected");
}

/*
 * Attacker review of patches/6.12 0009 (review09_*): runs of a callback
 * converge only on runs of the same call, and a state that reached the
 * call by the caller's own flow is checked for an infinite loop whatever
 * its callback_unroll_depth (same_callback_runs()). Each probe is built by
 * hand below: the main program is function 0, callbacks and subprograms
 * follow, ld_imm64 of a callback and bpf-to-bpf calls are aimed by function
 * number. No probe is ever run: some of them never end. Each logs its
 * verdict and the instructions processed ("processed N insns", default
 * flags), then checks the verdict wanted on the kernel under test.
 *
 * Found (processed insns, default flags: stock-6.12 / ours-6.12 / stock-6.1
 * / ours-6.1; "loop" = "infinite loop detected", EINVAL):
 * - no program ours-6.12 accepts that stock-6.12 refuses: 0009 only takes
 *   pruning away. The endless reset loop with for_each, inside a bpf_loop
 *   callback and in a static subprogram: stock-6.12 accepts all three
 *   (67, 65, 60), ours-6.12 refuses them (loop; 39, 48, 42), as both 6.1
 *   kernels do.
 * - refused by ours-6.12 only, though they end at run time: a caller loop
 *   whose exit waits for the callback's store (cb_ends_loop_*: 35 and 109
 *   / loop / 17 and 59 / 17 and 59; stock-6.12 itself says loop with
 *   BPF_F_TEST_STATE_FREQ) and toggle (86 / loop / 45 / 86). The model
 *   lets bpf_loop(1) and bpf_loop(2) run fewer times than they do; ours-6.1
 *   follows the runs and accepts them.
 * - costs: nested bpf_loop whose callbacks store a precise 5 in main's
 *   slot: a later run of the outer callback reaches the inner call within
 *   its first run's state; stock prunes it, ours walks the inner call
 *   again: depth 3 99 / 164, depth 5 127 / 220, depth 7 with a 2,000-insn
 *   body 2,115 / 4,196 (ours-6.1 4,195), depth 2 with a 600,000-insn body
 *   600,045 / E2BIG (600,030 / E2BIG on 6.1). The other shapes cost the
 *   same on both 6.12 kernels. Since 6.1's 0056 (a later run converges
 *   wherever it meets an earlier run's state), ours-6.1: depth 3 90,
 *   depth 5 118, depth 7 2,106, the 600,000-insn body 600,036 (loads).
 */
#define R09_INSNS 4096

struct r09 {
	int i;
	int nf;
	int start[8];
	int nargs[8];
	int fix[16];		/* instruction aimed at function fix_fn[] */
	int fix_fn[16];
	int nfix;
	int cap;		/* instructions room: R09_INSNS unless set */
	struct bpf_insn *p;
};

static void r09_func(struct r09 *r, int nargs)
{
	r->start[r->nf] = r->i;
	r->nargs[r->nf++] = nargs;
}

static void r09_aim(struct r09 *r, int fn)
{
	r->fix[r->nfix] = r->i;
	r->fix_fn[r->nfix++] = fn;
}

static void r09_put(struct r09 *r, struct bpf_insn in)
{
	if (!r->p)
		r->p = calloc(r->cap ?: R09_INSNS, sizeof(*r->p));
	r->p[r->i++] = in;
}

/* r2 = callback @fn */
static void r09_ld_func(struct r09 *r, int fn)
{
	struct bpf_insn ld[] = { I_LD_FUNC(BPF_REG_2, 0) };

	r09_aim(r, fn);
	r09_put(r, ld[0]);
	r09_put(r, ld[1]);
}

/* bpf_loop(@count, @fn, @ctx_reg + @ctx_off, 0) */
static void r09_loop(struct r09 *r, int count, int fn, int ctx_reg, int ctx_off)
{
	r09_put(r, I_MOV64_IMM(BPF_REG_1, count));
	r09_ld_func(r, fn);
	r09_put(r, I_MOV64_REG(BPF_REG_3, ctx_reg));
	r09_put(r, I_ADD64_IMM(BPF_REG_3, ctx_off));
	r09_put(r, I_MOV64_IMM(BPF_REG_4, 0));
	r09_put(r, I_CALL(BPF_FUNC_loop));
}

/* bpf_loop(@count_reg, @fn, @ctx_reg + @ctx_off, 0): a count not known */
static void r09_loop_reg(struct r09 *r, int count_reg, int fn, int ctx_reg, int ctx_off)
{
	int at = r->i;

	r09_loop(r, 0, fn, ctx_reg, ctx_off);
	r->p[at] = I_MOV64_REG(BPF_REG_1, count_reg);
}

/* bpf_for_each_map_elem(@map, @fn, @ctx_reg + @ctx_off, 0) */
static void r09_for_each(struct r09 *r, int map, int fn, int ctx_reg, int ctx_off)
{
	struct bpf_insn lm[] = { I_LD_MAP_FD(BPF_REG_1, map) };

	r09_put(r, I_MOV64_REG(BPF_REG_3, ctx_reg));
	r09_put(r, I_ADD64_IMM(BPF_REG_3, ctx_off));
	r09_put(r, lm[0]);
	r09_put(r, lm[1]);
	r09_ld_func(r, fn);
	r09_put(r, I_MOV64_IMM(BPF_REG_4, 0));
	r09_put(r, I_CALL(BPF_FUNC_for_each_map_elem));
}

/* *(u64 *)(@reg + 0) += 1 */
static void r09_inc(struct r09 *r, int reg)
{
	r09_put(r, I_LDX_DW(BPF_REG_5, reg, 0));
	r09_put(r, I_ADD64_IMM(BPF_REG_5, 1));
	r09_put(r, I_STX_DW(reg, BPF_REG_5, 0));
}

static void r09_ret0(struct r09 *r)
{
	r09_put(r, I_MOV64_IMM(BPF_REG_0, 0));
	r09_put(r, I_EXIT());
}

/* a backward jump to @to (JA when @cond is I_JA) */
static void r09_back(struct r09 *r, struct bpf_insn cond, int to)
{
	cond.off = to - r->i - 1;
	r09_put(r, cond);
}

/* the forward jump at @jump lands here */
static void r09_land(struct r09 *r, int jump)
{
	r->p[jump].off = r->i - jump - 1;
}

/* A callback: *ctx += 1, return 0 (bpf_loop's ctx in r2). */
static void r09_inc_cb(struct r09 *r)
{
	r09_func(r, 2);
	r09_inc(r, BPF_REG_2);
	r09_ret0(r);
}

static int r09_load(struct r09 *r, __u32 flags, long *processed)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = vlog, .log_size = sizeof(vlog),
		    .log_level = 4, .prog_flags = flags);
	struct bpf_func_info func[8];
	const char *stats;
	__u32 ids[8];
	int fd, k, btf;

	*processed = -1;
	for (k = 0; k < r->nfix; k++)
		r->p[r->fix[k]].imm = r->start[r->fix_fn[k]] - r->fix[k] - 1;
	r->nfix = 0;
	btf = funcs_btf_load(r->nf, r->nargs, ids);
	if (btf < 0)
		return btf;
	for (k = 0; k < r->nf; k++)
		func[k] = (struct bpf_func_info){ r->start[k], ids[k] };
	opts.prog_btf_fd = btf;
	opts.func_info = func;
	opts.func_info_cnt = r->nf;
	opts.func_info_rec_size = sizeof(func[0]);
	vlog[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "review09", "GPL", r->p, r->i, &opts);
	fd = fd < 0 ? -errno : fd;
	close(btf);
	stats = strstr(vlog, "processed ");
	*processed = stats ? atol(stats + strlen("processed ")) : -1;
	return fd;
}

/*
 * What a probe wants of the kernel under test: 0 (accepted) or the errno
 * and message of the refusal.
 */
struct r09_want {
	int err;
	const char *msg;
};

/*
 * Load with both flag sets, log the verdicts, check them against @w
 * (default flags) and @wf (BPF_F_TEST_STATE_FREQ); frees the program.
 */
static void r09_check2(struct kt *t, struct r09 *r, struct r09_want w0, struct r09_want wf)
{
	unsigned int f;
	long processed;

	for (f = 0; f < KT_ARRAY_SIZE(flag_values); f++) {
		struct r09_want w = f ? wf : w0;
		int fd = r09_load(r, flag_values[f], &processed);
		const char *tail = vlog + (strlen(vlog) > 300 ? strlen(vlog) - 300 : 0);

		kt_log(t, "%s-%s, %s: %s, processed %ld insns", kt_variant(), kt_base(),
		       flag_names[f], fd >= 0 ? "accepted" : strerror(-fd), processed);
		if (fd >= 0)
			close(fd);
		if (!w.err && fd < 0)
			kt_fail(t, "%s: refused (errno %d); tail:\n%s", flag_names[f], -fd, tail);
		else if (w.err && fd >= 0)
			kt_fail(t, "%s: accepted, want errno %d \"%s\"", flag_names[f], w.err, w.msg);
		else if (w.err && (fd != -w.err || !log_has(vlog, w.msg)))
			kt_fail(t, "%s: errno %d, want %d \"%s\"; tail:\n%s", flag_names[f], -fd,
				w.err, w.msg, tail);
	}
	free(r->p);
	r->p = NULL;
}

static void r09_check(struct kt *t, struct r09 *r, struct r09_want w)
{
	r09_check2(t, r, w, w);
}

static bool r09_ours_612(void)
{
	return on_612() && !strcmp(kt_variant(), "ours");
}

static const struct r09_want R09_OK = { 0, NULL };
static const struct r09_want R09_LOOP = { EINVAL, "infinite loop detected" };

/*
 * fp-8 = 0; do bpf_loop(1, cb, &fp-8) while (fp-8 == 0 [@done] or
 * fp-8 < 4 [counter]); cb: fp-8 += 1. It ends at run time: bpf_loop(1)
 * calls its callback once. The verifier's model lets a call run its
 * callback 0 times, and then the caller's turn repeats exactly.
 */
static void review09_cb_ends_loop(struct kt *t, const void *arg)
{
	bool done = arg != NULL;
	struct r09 r = { 0 };
	int head, jx;

	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	head = r.i;
	r09_loop(&r, 1, 1, BPF_REG_10, -8);
	r09_put(&r, I_LDX_DW(BPF_REG_1, BPF_REG_10, -8));
	if (done) {
		r09_back(&r, I_JEQ_IMM(BPF_REG_1, 0, 0), head);
	} else {
		jx = r.i;
		r09_put(&r, I_JGE_IMM(BPF_REG_1, 4, 0));
		r09_back(&r, I_JA(0), head);
		r09_land(&r, jx);
	}
	r09_ret0(&r);
	r09_inc_cb(&r);
	/* stock-6.12 checks for a loop at the back edge's target only with STATE_FREQ */
	r09_check2(t, &r, r09_ours_612() ? R09_LOOP : R09_OK, on_612() ? R09_LOOP : R09_OK);
}

/* for (r6 = 0; r6 < 4; r6++) bpf_loop(8, cb, &fp-8); cb: fp-8 += 1 */
static void review09_bounded_caller_loop(struct kt *t, const void *arg)
{
	struct r09 r = { 0 };
	int head, jx;

	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_6, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_6, -8));
	head = r.i;
	r09_loop(&r, 8, 1, BPF_REG_10, -8);
	r09_put(&r, I_ADD64_IMM(BPF_REG_6, 1));
	jx = r.i;
	r09_put(&r, I_JGE_IMM(BPF_REG_6, 4, 0));
	r09_back(&r, I_JA(0), head);
	r09_land(&r, jx);
	r09_ret0(&r);
	r09_inc_cb(&r);
	r09_check(t, &r, R09_OK);
}

/* *(u64 *)@reg = 5, and a branch on it that makes the slot precise */
static void r09_set5(struct r09 *r, int reg)
{
	r09_put(r, I_MOV64_IMM(BPF_REG_3, 5));
	r09_put(r, I_STX_DW(reg, BPF_REG_3, 0));
	r09_put(r, I_LDX_DW(BPF_REG_3, reg, 0));
	r09_put(r, I_JNE_IMM(BPF_REG_3, 5, 0));
}

/*
 * ours-6.12 walks it twice: over the 1M-instruction limit. ours-6.1 did
 * too until 0056, which converges the outer callback's later run inside
 * the inner call (600,036 processed; stock-6.12 600,045).
 */
#define R09_BIG_BODY 600000
#define R09_NEST(depth, body, set5) ((void *)(long)((depth) | (body) << 4 | (set5) << 24))

/*
 * Nested bpf_loop(8): @depth levels, each callback calling the next with
 * its caller's context (main's fp-8); the innermost adds one to it after
 * @body straight instructions. With @set5 every callback first stores 5
 * there, precise: then a later run of an outer callback reaches the inner
 * call in a state within its first run's, which stock prunes (a run of
 * another call) and ours walks again.
 */
static void review09_nested(struct kt *t, const void *arg)
{
	int depth = (long)arg & 0xf, body = ((long)arg >> 4) & 0xfffff, set5 = (long)arg >> 24;
	struct r09 *r = calloc(1, sizeof(*r));
	struct r09_want w = R09_OK;
	int d, k;

	r->cap = body + R09_INSNS;
	if (body > R09_BIG_BODY / 2 && r09_ours_612())
		w = (struct r09_want){ E2BIG, "BPF program is too large" };

	r09_func(r, 1);
	r09_put(r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	r09_loop(r, 8, 1, BPF_REG_10, -8);
	r09_ret0(r);
	for (d = 1; d < depth; d++) {
		r09_func(r, 2);
		r09_put(r, I_MOV64_REG(BPF_REG_6, BPF_REG_2));
		if (set5)
			r09_set5(r, BPF_REG_6);
		r09_loop(r, 8, d + 1, BPF_REG_6, 0);
		r09_ret0(r);
	}
	r09_func(r, 2);
	r09_put(r, I_MOV64_IMM(BPF_REG_4, 0));
	for (k = 0; k < body; k++)
		r09_put(r, I_ADD64_IMM(BPF_REG_4, 1));
	if (set5)
		r09_set5(r, BPF_REG_2);
	else
		r09_inc(r, BPF_REG_2);
	r09_ret0(r);
	r09_check(t, r, w);
	free(r);
}

/* bpf_loop(4, cb1, &fp-8); cb1: for (r7 = 0; r7 < 3; r7++) bpf_loop(4, cb2, ctx) */
static void review09_caller_loop_in_cb(struct kt *t, const void *arg)
{
	struct r09 r = { 0 };
	int head, jx;

	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	r09_loop(&r, 4, 1, BPF_REG_10, -8);
	r09_ret0(&r);
	r09_func(&r, 2);
	r09_put(&r, I_MOV64_REG(BPF_REG_6, BPF_REG_2));
	r09_put(&r, I_MOV64_IMM(BPF_REG_7, 0));
	head = r.i;
	r09_loop(&r, 4, 2, BPF_REG_6, 0);
	r09_put(&r, I_ADD64_IMM(BPF_REG_7, 1));
	jx = r.i;
	r09_put(&r, I_JGE_IMM(BPF_REG_7, 3, 0));
	r09_back(&r, I_JA(0), head);
	r09_land(&r, jx);
	r09_ret0(&r);
	r09_inc_cb(&r);
	r09_check(t, &r, R09_OK);
}

/* for (r6 = 0; r6 < 4; r6++) f(); f: bpf_loop(4, cb, &f's fp-8) */
static void review09_subprog_in_caller_loop(struct kt *t, const void *arg)
{
	struct r09 r = { 0 };
	int head, jx;

	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_6, 0));
	head = r.i;
	r09_aim(&r, 1);
	r09_put(&r, I_CALL_SUB(0));
	r09_put(&r, I_ADD64_IMM(BPF_REG_6, 1));
	jx = r.i;
	r09_put(&r, I_JGE_IMM(BPF_REG_6, 4, 0));
	r09_back(&r, I_JA(0), head);
	r09_land(&r, jx);
	r09_ret0(&r);
	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	r09_loop(&r, 4, 2, BPF_REG_10, -8);
	r09_ret0(&r);
	r09_inc_cb(&r);
	r09_check(t, &r, R09_OK);
}

/* for (r6 = 0; r6 < 4; r6++) for_each(map, cb, &fp-8); cb: fp-8 += 1 */
static void review09_for_each_in_caller_loop(struct kt *t, const void *arg)
{
	int map = elem_array(t, false), head, jx;
	struct r09 r = { 0 };

	if (map < 0)
		return;
	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_6, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_6, -8));
	head = r.i;
	r09_for_each(&r, map, 1, BPF_REG_10, -8);
	r09_put(&r, I_ADD64_IMM(BPF_REG_6, 1));
	jx = r.i;
	r09_put(&r, I_JGE_IMM(BPF_REG_6, 4, 0));
	r09_back(&r, I_JA(0), head);
	r09_land(&r, jx);
	r09_ret0(&r);
	r09_func(&r, 4);
	r09_inc(&r, BPF_REG_4);
	r09_ret0(&r);
	r09_check(t, &r, R09_OK);
	close(map);
}

/* for_each(map, cb1, &fp-8); cb1: bpf_loop(4, cb2, ctx); cb2: *ctx += 1 */
static void review09_loop_in_for_each(struct kt *t, const void *arg)
{
	int map = elem_array(t, false);
	struct r09 r = { 0 };

	if (map < 0)
		return;
	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	r09_for_each(&r, map, 1, BPF_REG_10, -8);
	r09_ret0(&r);
	r09_func(&r, 4);
	r09_put(&r, I_MOV64_REG(BPF_REG_6, BPF_REG_4));
	r09_loop(&r, 4, 2, BPF_REG_6, 0);
	r09_ret0(&r);
	r09_inc_cb(&r);
	r09_check(t, &r, R09_OK);
	close(map);
}

/*
 * review_caller_loop_reset's endless loop (fp-8 = 0; call; the callback
 * stores 1; again while fp-8 != 0) in other places: @where 0 calls
 * for_each over a 4-element array (its callback always runs), 1 runs it
 * inside a bpf_loop(1) callback (the loop's frame is the callback's), 2 in
 * a static subprogram. Stock-6.12 accepts these endless loops only if it
 * prunes across the caller's back edge.
 */
static void review09_reset_elsewhere(struct kt *t, const void *arg)
{
	int where = (int)(long)arg, map = -1, head, jz, fn;
	struct r09 r = { 0 };

	if (where == 0) {
		map = elem_array(t, false);
		if (map < 0)
			return;
	}
	r09_func(&r, 1);
	if (where) {
		if (where == 1) {
			r09_loop(&r, 1, 1, BPF_REG_10, -8);
		} else {
			r09_aim(&r, 1);
			r09_put(&r, I_CALL_SUB(0));
		}
		r09_ret0(&r);
		r09_func(&r, where == 1 ? 2 : 1);
	}
	fn = r.nf;
	r09_put(&r, I_CALL(BPF_FUNC_get_prandom_u32));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_0, -8));
	head = r.i;
	if (where == 0)
		r09_for_each(&r, map, fn, BPF_REG_10, -8);
	else
		r09_loop(&r, 1, fn, BPF_REG_10, -8);
	r09_put(&r, I_LDX_DW(BPF_REG_1, BPF_REG_10, -8));
	jz = r.i;
	r09_put(&r, I_JEQ_IMM(BPF_REG_1, 0, 0));
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	r09_back(&r, I_JA(0), head);
	r09_land(&r, jz);
	r09_ret0(&r);
	r09_func(&r, where == 0 ? 4 : 2);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 1));
	r09_put(&r, I_STX_DW(where == 0 ? BPF_REG_4 : BPF_REG_2, BPF_REG_1, 0));
	r09_ret0(&r);
	r09_check(t, &r, on_612() && strcmp(kt_variant(), "ours") ? R09_OK : R09_LOOP);
	if (map >= 0)
		close(map);
}

/*
 * same_callback_runs(): x = fp-8, ran = fp-16; do { ran = 0; bpf_loop(2,
 * cb, &fp-16) } while (ran && x == 1); cb: ran = 1, x ^= 1. At run time
 * the two runs put x back to 0 and it ends. In the model a call that runs
 * its callback once (x: 0 -> 1) and then calls again with two runs
 * (1 -> 0 -> 1) repeats the caller's turn exactly, at another unroll depth.
 */
static void review09_toggle(struct kt *t, const void *arg)
{
	struct r09 r = { 0 };
	int head, jout, jout2, jz;

	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	head = r.i;
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -16));
	r09_loop(&r, 2, 1, BPF_REG_10, -16);
	r09_put(&r, I_LDX_DW(BPF_REG_1, BPF_REG_10, -16));
	jout = r.i;
	r09_put(&r, I_JEQ_IMM(BPF_REG_1, 0, 0));
	r09_put(&r, I_LDX_DW(BPF_REG_1, BPF_REG_10, -8));
	jout2 = r.i;
	r09_put(&r, I_JNE_IMM(BPF_REG_1, 1, 0));
	r09_back(&r, I_JA(0), head);
	r09_land(&r, jout);
	r09_land(&r, jout2);
	r09_ret0(&r);
	r09_func(&r, 2);
	r09_put(&r, I_MOV64_IMM(BPF_REG_3, 1));
	r09_put(&r, I_STX_DW(BPF_REG_2, BPF_REG_3, 0));
	r09_put(&r, I_LDX_DW(BPF_REG_3, BPF_REG_2, 8));
	jz = r.i;
	r09_put(&r, I_JEQ_IMM(BPF_REG_3, 0, 0));
	r09_put(&r, I_MOV64_IMM(BPF_REG_3, 0));
	r09_put(&r, I_STX_DW(BPF_REG_2, BPF_REG_3, 8));
	r09_ret0(&r);
	r09_land(&r, jz);
	r09_put(&r, I_MOV64_IMM(BPF_REG_3, 1));
	r09_put(&r, I_STX_DW(BPF_REG_2, BPF_REG_3, 8));
	r09_ret0(&r);
	r09_check(t, &r, r09_ours_612() ? R09_LOOP : R09_OK);
}

#define I_KFUNC(id) ((struct bpf_insn){ BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, id })

/*
 * An open-coded iterator loop around bpf_loop (bpf_for(i, 0, 100)
 * bpf_loop(4, cb, &fp-8)): the caller's loop is bounded by the iterator
 * and converges at bpf_iter_num_next(). 6.1 has no bpf_iter_num.
 */
static void review09_iter_around_loop(struct kt *t, const void *arg)
{
	struct btf *vm = btf__load_vmlinux_btf();
	int id_new, id_next, id_destroy, head, jd;
	struct r09 r = { 0 };

	id_new = vm ? btf__find_by_name_kind(vm, "bpf_iter_num_new", BTF_KIND_FUNC) : -1;
	id_next = vm ? btf__find_by_name_kind(vm, "bpf_iter_num_next", BTF_KIND_FUNC) : -1;
	id_destroy = vm ? btf__find_by_name_kind(vm, "bpf_iter_num_destroy", BTF_KIND_FUNC) : -1;
	btf__free(vm);
	if (id_new < 0 || id_next < 0 || id_destroy < 0) {
		kt_skip(t, "no bpf_iter_num kfuncs in this kernel's BTF");
		return;
	}
	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	r09_put(&r, I_MOV64_REG(BPF_REG_1, BPF_REG_10));
	r09_put(&r, I_ADD64_IMM(BPF_REG_1, -16));
	r09_put(&r, I_MOV64_IMM(BPF_REG_2, 0));
	r09_put(&r, I_MOV64_IMM(BPF_REG_3, 100));
	r09_put(&r, I_KFUNC(id_new));
	head = r.i;
	r09_put(&r, I_MOV64_REG(BPF_REG_1, BPF_REG_10));
	r09_put(&r, I_ADD64_IMM(BPF_REG_1, -16));
	r09_put(&r, I_KFUNC(id_next));
	jd = r.i;
	r09_put(&r, I_JEQ_IMM(BPF_REG_0, 0, 0));
	r09_loop(&r, 4, 1, BPF_REG_10, -8);
	r09_back(&r, I_JA(0), head);
	r09_land(&r, jd);
	r09_put(&r, I_MOV64_REG(BPF_REG_1, BPF_REG_10));
	r09_put(&r, I_ADD64_IMM(BPF_REG_1, -16));
	r09_put(&r, I_KFUNC(id_destroy));
	r09_ret0(&r);
	r09_inc_cb(&r);
	r09_check(t, &r, R09_OK);
}

/*
 * Fourth review (0048), finding 1: a callback's BPF_CMPXCHG loads its
 * caller's slot into r0, which is neither the instruction's dst nor src
 * register: backtracking let the value go where 0048 must mark every
 * scalar precise, and a path that keeps 16 in the slot was pruned against
 * one that keeps 8: the store lands 16 bytes into a 16-byte value.
 */
static void review_cmpxchg_reads_caller(struct kt *t, const void *arg)
{
	struct bpf_insn p[64];
	struct bpf_insn lm[] = { I_LD_MAP_FD(BPF_REG_1, 0) };
	int map = elem_array(t, false), i = 0, jb, ja, ldf, jn, cb;

	if (map < 0)
		return;
	lm[0].imm = map;
	p[i++] = I_LDX_W(BPF_REG_6, BPF_REG_1, 0);	/* skb->len */
	jb = i;
	p[i++] = I_JGT_IMM(BPF_REG_6, 100, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_7, 8);
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_7, -8);
	ja = i;
	p[i++] = I_JA(0);
	p[jb].off = i - jb - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_7, 16);
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_7, -8);
	p[ja].off = i - ja - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_7, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_7, 0);
	ldf = put_loop_call(p, &i, 1, -8);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_2);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 12345);
	p[i++] = I_MOV64_IMM(BPF_REG_2, 77);
	p[i++] = (struct bpf_insn){ BPF_STX | BPF_DW | BPF_ATOMIC, BPF_REG_6, BPF_REG_2, 0,
				    BPF_CMPXCHG };
	p[i++] = I_MOV64_REG(BPF_REG_7, BPF_REG_0);	/* the caller's 8 or 16 */
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	p[i++] = I_MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[i++] = I_ADD64_IMM(BPF_REG_2, -4);
	p[i++] = lm[0];
	p[i++] = lm[1];
	p[i++] = I_CALL(BPF_FUNC_map_lookup_elem);
	jn = i;
	p[i++] = I_JEQ_IMM(BPF_REG_0, 0, 0);
	p[i++] = I_ADD64_REG(BPF_REG_0, BPF_REG_7);
	p[i++] = I_STX_DW(BPF_REG_0, BPF_REG_7, 0);
	p[jn].off = i - jn - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	cb_refused_both_ways(t, p, i, cb, EACCES, "invalid access to map value");
	close(map);
}

/*
 * Review hole 5 (0038): each pass of the verifier had a complexity limit
 * of its own. Callbacks now converge in one pass, and a second pass walks
 * bounded callbacks run by run only where the first refused the program:
 * here the caller of bpf_loop(2) dereferences R0 unless it is 2, which
 * only the run-by-run pass proves (R0 = runs), after @body straight-line
 * instructions that both passes walk. A body of 600,000 is 1.2M in
 * total: refused (E2BIG). Its twin of 300,000 loads, and the log's
 * statistics line counts both passes.
 */
static struct bpf_insn *build_budget(int body, int *n, int *cb_start)
{
	struct bpf_insn *insn = calloc(body + 64, sizeof(*insn));
	int i = 0, j, ldi;

	insn[i++] = I_MOV64_IMM(BPF_REG_9, 0);
	for (j = 0; j < body; j++)
		insn[i++] = I_ADD64_IMM(BPF_REG_9, 1);
	ldi = put_loop_call(insn, &i, 2, 0);
	insn[i++] = I_JEQ_IMM(BPF_REG_0, 2, 1);
	insn[i++] = I_LDX_DW(BPF_REG_0, BPF_REG_0, 0);
	insn[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	insn[i++] = I_EXIT();
	/* the callback: every run goes on */
	insn[ldi].imm = i - ldi - 1;
	*cb_start = i;
	insn[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	insn[i++] = I_EXIT();
	*n = i;
	return insn;
}

#define BUDGET_BODY 300000

static void review_one_budget(struct kt *t, const void *arg)
{
	int body = (int)(long)arg, n, fd, cb_start;
	struct bpf_insn *insn = build_budget(body, &n, &cb_start);
	const char *stats;
	long processed = -1;

	/* BPF_LOG_STATS: messages and statistics only */
	fd = load_with_cb(insn, n, cb_start, 0, 4);
	free(insn);
	stats = strstr(vlog, "processed ");
	if (stats)
		processed = atol(stats + strlen("processed "));
	kt_log(t, "body of %d: %s, %ld instructions processed", body,
	       fd >= 0 ? "loaded" : strerror(-fd), processed);
	if (body > BUDGET_BODY) {
		if (fd >= 0) {
			kt_fail(t, "loaded: two passes of %d instructions each fit no 1M budget",
				body);
			close(fd);
			return;
		}
		KT_EQ(t, -fd, E2BIG, "errno");
		if (!log_has(vlog, "BPF program is too large. Processed 100000"))
			kt_fail(t, "log lacks the complexity limit's message; tail:\n%s",
				vlog + (strlen(vlog) > 400 ? strlen(vlog) - 400 : 0));
		return;
	}
	if (fd < 0)
		kt_log(t, "verifier log (tail):\n%s", vlog + (strlen(vlog) > 600 ? strlen(vlog) - 600 : 0));
	if (!KT_OK(t, fd, "load the two-pass twin"))
		return;
	close(fd);
	KT_TRUE(t, processed >= 2L * body,
		"the statistics line counts both passes (at least 2 x the body)");
}

/* Child: one BPF_F_LOCK lookup of element 0; exits when it got the lock. */
static pid_t locked_lookup_child(int map)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct elem v;
		int key = 0;

		_exit(bpf_map_lookup_elem_flags(map, &key, &v, BPF_F_LOCK) ? 1 : 0);
	}
	return pid;
}

static bool child_done_within(pid_t pid, int ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int status, i;

	for (i = 0; i < ms / 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * What an accepted unsound program does. P1 locks element 0 and, on the
 * path taken at run time, unlocks element 1: element 0 stays locked and a
 * BPF_F_LOCK lookup of it spins with interrupts off. Detect that from a
 * second process, then free the lock with P2 (lock element 2, which
 * nothing else uses, and unlock element 0 the same way) well before any
 * stall detector fires. On a kernel that refuses P1 there is nothing to
 * show: pass.
 */
static void leak_demo(struct kt *t, const void *arg)
{
	int map = elem_array(t, true);
	struct prog p1, p2;
	int fd1, fd2;
	__u32 retval;
	pid_t pid;

	if (map < 0)
		return;
	build(&p1, VIA_REG, true, map, 0, 1);
	build(&p2, VIA_REG, true, map, 2, 0);
	fd1 = load(&p1, 0);
	if (fd1 < 0) {
		if (fd1 != -EACCES || !log_has(vlog, "bpf_spin_unlock of different lock"))
			kt_fail(t, "P1 refused with errno %d, without the different-lock message",
				-fd1);
		close(map);
		return;
	}
	fd2 = load(&p2, 0);
	if (!KT_OK(t, fd2, "P2 accepted along with P1")) {
		close(fd1);
		close(map);
		return;
	}
	KT_OK(t, prog_run(fd1, 1, &retval), "run P1 once");
	pid = locked_lookup_child(map);
	if (!KT_OK(t, pid, "fork"))
		return;
	if (child_done_within(pid, 1000)) {
		kt_fail(t, "the verifier accepted P1 (lock element 0, unlock element 1); this time the lock was free afterwards");
	} else {
		KT_OK(t, prog_run(fd2, 1, &retval), "run P2 to free element 0");
		kt_fail(t, "the verifier accepted P1 and it left element 0 locked: a BPF_F_LOCK lookup was stuck for 1 s%s",
			child_done_within(pid, 2000) ? " (freed by P2)" : " and P2 did not free it");
	}
	close(fd1);
	close(fd2);
	close(map);
}

/* Child: one BPF_F_LOCK lookup of element key; exits when it got the lock. */
static pid_t locked_lookup_key_child(int map, int key)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct elem v;

		_exit(bpf_map_lookup_elem_flags(map, &key, &v, BPF_F_LOCK) ? 1 : 0);
	}
	return pid;
}

/*
 * Run an accepted program once, then see whether element @key stays
 * locked: a BPF_F_LOCK lookup from a child that does not come back within
 * 1 s. If so, run the mirror program, which releases it, and fail saying
 * what @prog's run did (@what) to leave it so.
 */
static void run_and_check_left_locked(struct kt *t, int fd, int mirror_fd, int map,
				      int key, const char *prog, const char *what)
{
	__u32 retval;
	pid_t pid;

	KT_OK(t, prog_run(fd, 1, &retval), "run the accepted program once");
	pid = locked_lookup_key_child(map, key);
	if (!KT_OK(t, pid, "fork"))
		return;
	if (child_done_within(pid, 1000)) {
		kt_fail(t, "the verifier accepted %s; this time element %d was free afterwards",
			prog, key);
		return;
	}
	KT_OK(t, prog_run(mirror_fd, 1, &retval), "run the mirror to free the element");
	kt_fail(t, "the verifier accepted %s: %s left element %d locked, a BPF_F_LOCK lookup stuck for 1 s%s",
		prog, what, key, child_done_within(pid, 2000) ? " (freed by the mirror)" :
		" and the mirror did not free it");
}

/*
 * Attacker review of 0025: what cb_runs_pruned_by_ctx_read does when a
 * kernel accepts it. The bpf_loop() callback decides from its caller's
 * stack, read through its context pointer, whether another run follows;
 * that slot is not precise, the path where it says "go on" is pruned
 * against the one where it says "stop", and the unverified second run
 * locks element 1 and unlocks element 0. Shown like leak_demo: a
 * BPF_F_LOCK lookup of element 1 is stuck; cb_runs_pruned_unlocks_other
 * (same hole, mirrored: locks element 2, unlocks element 1) frees it.
 */
static void cb_runs_leak_demo(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(holes_cb);
	static const char *const progs[] = { "cb_runs_pruned_by_ctx_read",
					     "cb_runs_pruned_unlocks_other", NULL };
	struct bpf_object *obj;
	int err, fd1, fd2, map;

	err = load_one_logged(&o, progs[0], NULL, NULL, vlog, sizeof(vlog));
	if (err) {
		if (err != -EACCES ||
		    !log_has(vlog, "doesn't point to 'struct bpf_spin_lock'"))
			kt_fail(t, "refused with errno %d, without the message of its second run",
				-err);
		return;
	}
	obj = obj_load(t, &o, progs);
	if (!obj)
		return;
	fd1 = obj_prog_fd(t, obj, progs[0]);
	fd2 = obj_prog_fd(t, obj, progs[1]);
	map = obj_map_fd(t, obj, "cmap");
	if (fd1 < 0 || fd2 < 0 || map < 0)
		goto out;
	run_and_check_left_locked(t, fd1, fd2, map, 1, progs[0],
				  "its unverified second run");
out:
	bpf_object__close(obj);
}

/*
 * Attacker review of 0025: for_each_inner_percpu_any_size when a kernel
 * accepts it. Its inner map's template is a per-CPU array of one element,
 * but the outer map takes a per-CPU array of any size; with two elements
 * the callback runs twice, not once, and the program locks element 0 and
 * unlocks element 1. for_each_inner_percpu_unlocks_other (the mirror:
 * locks element 2, unlocks element 0) frees it.
 */
static void inner_percpu_leak_demo(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(holes_cb);
	static const char *const progs[] = { "for_each_inner_percpu_any_size",
					     "for_each_inner_percpu_unlocks_other", NULL };
	struct bpf_object *obj;
	int err, fd1, fd2, map, outer, inner = -1, key = 0;

	err = load_one_logged(&o, progs[0], NULL, NULL, vlog, sizeof(vlog));
	if (err) {
		if (err != -EACCES ||
		    !log_has(vlog, "a callback cannot store a pointer into its caller's stack"))
			kt_fail(t, "refused with errno %d, without the one-pass message", -err);
		return;
	}
	obj = obj_load(t, &o, progs);
	if (!obj)
		return;
	fd1 = obj_prog_fd(t, obj, progs[0]);
	fd2 = obj_prog_fd(t, obj, progs[1]);
	map = obj_map_fd(t, obj, "cmap");
	outer = obj_map_fd(t, obj, "couter_pcpu");
	if (fd1 < 0 || fd2 < 0 || map < 0 || outer < 0)
		goto out;
	inner = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "pcpu2", sizeof(int),
			       sizeof(long), 2, NULL);
	if (!KT_OK(t, inner, "create a two-element per-CPU array"))
		goto out;
	if (bpf_map_update_elem(outer, &key, &inner, 0)) {
		KT_OK(t, -errno, "insert it where the template has one element");
		goto out;
	}
	run_and_check_left_locked(t, fd1, fd2, map, 0, progs[0],
				  "verified for one run of its callback, two ran and");
out:
	if (inner >= 0)
		close(inner);
	bpf_object__close(obj);
}

static int outer_map(struct kt *t, enum bpf_map_type type, int template)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = template);
	int fd = bpf_map_create(type, "outer", sizeof(int), sizeof(int), 2, &opts);

	KT_OK(t, fd, "create outer map");
	return fd;
}

/*
 * An inner map whose values hold a lock cannot replace one whose template
 * has none: programs verified against the template may store there.
 */
static void inner_map_lock_refused(struct kt *t, const void *arg)
{
	enum bpf_map_type type = (enum bpf_map_type)(long)arg;
	int plain = elem_array(t, false), locked = elem_array(t, true);
	int outer = plain >= 0 ? outer_map(t, type, plain) : -1;
	int key = 0;

	if (outer >= 0 && locked >= 0)
		KT_ERR(t, bpf_map_update_elem(outer, &key, &locked, 0), EINVAL,
		       "insert a lock map where the template has none");
	close(outer);
	close(plain);
	close(locked);
}

/* A map of the template's layout still goes in. */
static void inner_map_same_layout(struct kt *t, const void *arg)
{
	enum bpf_map_type type = (enum bpf_map_type)(long)arg;
	int plain = elem_array(t, false), other = elem_array(t, false);
	int outer = plain >= 0 ? outer_map(t, type, plain) : -1;
	int key = 1;

	if (outer >= 0 && other >= 0)
		KT_OK(t, bpf_map_update_elem(outer, &key, &other, 0), "insert a lockless map");
	close(outer);
	close(plain);
	close(other);
}

struct iter_case {
	const char *prog;
	bool attaches;
	int cnt_add, d0_add, d1_add;
	/* a map without a lock that programs may only read (.rodata) */
	bool rdonly;
};

/*
 * A map element iterator writes the values it is handed in place; one
 * that writes the lock word must not attach (EACCES), one that writes
 * other fields attaches and its writes land.
 */
static void iter_write(struct kt *t, const void *arg)
{
	const struct iter_case *c = arg;
	struct embedded_obj o = EMBEDDED_OBJ(holes_iter);
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_link *link;
	struct elem v;
	int map, iter, key;
	char buf[64];

	map = c->rdonly ? elem_array_flags(t, false, BPF_F_RDONLY_PROG) : elem_array(t, true);
	obj = obj_load(t, &o, (const char *const[]){ c->prog, NULL });
	if (map < 0 || !obj)
		goto out;
	prog = bpf_object__find_program_by_name(obj, c->prog);
	info.map.map_fd = map;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	link = bpf_program__attach_iter(prog, &opts);
	if (!c->attaches) {
		if (link) {
			kt_fail(t, "%s attached to a map whose %s it writes", c->prog,
				c->rdonly ? "read-only bytes" : "lock word");
			bpf_link__destroy(link);
		} else {
			KT_ERR(t, -errno, EACCES, "attach");
		}
		goto out;
	}
	if (!KT_TRUE(t, link != NULL, "attach a program that writes clear of the lock"))
		goto out;
	iter = bpf_iter_create(bpf_link__fd(link));
	if (KT_OK(t, iter, "iter create")) {
		while (read(iter, buf, sizeof(buf)) > 0)
			;
		close(iter);
	}
	for (key = 0; key < NR_ELEMS; key++) {
		/* no flag: the baseline has no BPF_F_LOCK, and nothing runs now */
		if (!KT_OK(t, bpf_map_lookup_elem(map, &key, &v), "lookup"))
			break;
		KT_EQ(t, v.cnt, c->cnt_add, "cnt after one pass");
		KT_EQ(t, v.data[0], c->d0_add, "data[0] after one pass");
		KT_EQ(t, v.data[1], c->d1_add, "data[1] after one pass");
	}
	bpf_link__destroy(link);
out:
	bpf_object__close(obj);
	close(map);
}

static const struct iter_case iter_store_lock = { "store_lock_word", false };
static const struct iter_case iter_add_lock = { "add_lock_word", false };
static const struct iter_case iter_store_cnt = { "store_cnt", true, 1, 0, 0 };
static const struct iter_case iter_store_data = { "store_data", true, 0, 2, 3 };
static const struct iter_case iter_snprintf_lock = { "snprintf_lock_word", false };
static const struct iter_case iter_rodata = { "store_data", false, .rdonly = true };

static int attach_to_target(struct bpf_object *obj, void *ctx)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, "ext_lock");

	return bpf_program__set_attach_target(p, *(int *)ctx, "global_fn");
}

/*
 * An extension of a tracing program runs inside it, in NMI if the target
 * does, with no entry of its own for the lock-region guard: no locks.
 */
static void ext_of_tracing_refused(struct kt *t, const void *arg)
{
	struct embedded_obj target = EMBEDDED_OBJ(ext_target);
	struct embedded_obj ext = EMBEDDED_OBJ(ext_lock);
	struct bpf_object *obj;
	int fd, err;

	obj = obj_load(t, &target, (const char *const[]){ "ext_target", NULL });
	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, "ext_target");
	err = load_one_logged(&ext, "ext_lock", attach_to_target, &fd, vlog, sizeof(vlog));
	KT_ERR(t, err, EINVAL, "load a locking extension of a tracing program");
	if (err && !log_has(vlog, "programs that replace a tracing program cannot use bpf_spin_lock"))
		kt_fail(t, "log lacks the extension message; tail:\n%s",
			vlog + (strlen(vlog) > 400 ? strlen(vlog) - 400 : 0));
	bpf_object__close(obj);
}

/* The extension (its program is named after the function) and its target. */
struct ext_attach {
	int fd;
	const char *fn;
};

static int attach_ext(struct bpf_object *obj, void *ctx)
{
	const struct ext_attach *a = ctx;
	struct bpf_program *p = bpf_object__find_program_by_name(obj, a->fn);

	return p ? bpf_program__set_attach_target(p, a->fd, a->fn) : -ENOENT;
}

struct ext_arg_case {
	struct embedded_obj (*target)(void);
	const char *target_prog;
	struct embedded_obj (*ext)(void);
	const char *fn;		/* the function replaced */
	const char *msg;	/* NULL: the extension loads */
	const char *msg_612;	/* 6.12's words, if not msg's */
	const char *only;	/* the one base whose tree has the case, or NULL */
};

static struct embedded_obj ext_arg_target(void) { return EMBEDDED_OBJ(ext_arg_target); }
static struct embedded_obj ext_arg_wide(void) { return EMBEDDED_OBJ(ext_arg_wide); }
static struct embedded_obj ext_arg_same(void) { return EMBEDDED_OBJ(ext_arg_same); }
static struct embedded_obj ext_arg_nonnull(void) { return EMBEDDED_OBJ(ext_arg_nonnull); }
static struct embedded_obj ext_ctx_target(void) { return EMBEDDED_OBJ(ext_ctx_target); }
static struct embedded_obj ext_ctx_short(void) { return EMBEDDED_OBJ(ext_ctx_short); }
static struct embedded_obj ext_tag_loose(void) { return EMBEDDED_OBJ(ext_tag_loose); }
static struct embedded_obj ext_kp_target(void) { return EMBEDDED_OBJ(ext_kp_target); }
static struct embedded_obj ext_kp_swap(void) { return EMBEDDED_OBJ(ext_kp_swap); }
static struct embedded_obj ext_tp_target(void) { return EMBEDDED_OBJ(ext_tp_target); }
static struct embedded_obj ext_tp_read(void) { return EMBEDDED_OBJ(ext_tp_read); }

/*
 * A kernel that loaded ext_arg_wide: attach it, run the target once and
 * say what element 0's data[0] holds then (0x7777: the extension stored
 * past the 4 bytes its caller checked; a lookup does not copy the lock
 * word out, which it stored to as well).
 */
static void ext_arg_show_store(struct kt *t, struct bpf_object *target, int fd)
{
	struct embedded_obj o = EMBEDDED_OBJ(ext_arg_wide);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o.name);
	struct ext_attach at = { fd, "ext_fill" };
	struct bpf_link *link = NULL;
	struct bpf_object *ext;
	int key = 0, v[4] = { 0 };

	ext = bpf_object__open_mem(o.data, o.size, &opts);
	if (!ext)
		return;
	if (!attach_ext(ext, &at) && !bpf_object__load(ext))
		link = bpf_program__attach_freplace(bpf_object__find_program_by_name(ext, "ext_fill"),
						    fd, "ext_fill");
	if (link && !prog_run(fd, 1, NULL) &&
	    !bpf_map_lookup_elem(bpf_map__fd(bpf_object__find_map_by_name(target, "ext_arg_map")),
				 &key, v))
		kt_log(t, "attached and run: element 0's data[0] is 0x%x", v[2]);
	bpf_link__destroy(link);
	bpf_object__close(ext);
}

/*
 * An extension is verified with its own BTF of the function it replaces;
 * the target's callers were checked with the target's. What an argument is
 * to the verifier (a context, memory of a struct's size, never NULL, a
 * trusted kernel pointer) must be the same on both sides, and an
 * extension of a tracing or tracepoint program cannot read the context,
 * whose layout and bounds are its target's attachment's.
 */
static void ext_arg_match(struct kt *t, const void *arg)
{
	const struct ext_arg_case *c = arg;
	struct embedded_obj target = c->target();
	struct embedded_obj ext = c->ext();
	const char *msg = c->msg_612 && !strcmp(kt_base(), "6.12") ? c->msg_612 : c->msg;
	struct ext_attach at = { .fn = c->fn };
	struct bpf_object *obj;
	int err;

	if (c->only && strcmp(c->only, kt_base())) {
		kt_skip(t, "a case of base %s's tree", c->only);
		return;
	}
	obj = obj_load(t, &target, (const char *const[]){ c->target_prog, NULL });
	if (!obj)
		return;
	at.fd = obj_prog_fd(t, obj, c->target_prog);
	err = load_one_logged(&ext, c->fn, attach_ext, &at, vlog, sizeof(vlog));
	if (!msg)
		KT_OK(t, err, "load an extension that matches its target");
	else if (!err && c->ext == ext_arg_wide)
		ext_arg_show_store(t, obj, at.fd);
	if (msg && KT_ERR(t, err, EINVAL, "load an extension whose argument differs") &&
	    !log_has(vlog, msg))
		kt_fail(t, "log lacks \"%s\"; tail:\n%s", msg,
			vlog + (strlen(vlog) > 400 ? strlen(vlog) - 400 : 0));
	bpf_object__close(obj);
}

static const struct ext_arg_case ext_arg_wide_case = {
	ext_arg_target, "ext_arg_target", ext_arg_wide, "ext_fill",
	"arg0 in ext_fill() is a struct ext_arg of 16 bytes, ext_fill() of the target has 4",
	"arg0 in ext_fill() is 16 bytes of memory or NULL, in ext_fill() of the target 4 bytes of memory or NULL",
};
static const struct ext_arg_case ext_arg_same_case = {
	ext_arg_target, "ext_arg_target", ext_arg_same, "ext_fill",
};
static const struct ext_arg_case ext_arg_nonnull_case = {
	ext_arg_target, "ext_arg_target", ext_arg_nonnull, "ext_fill",
	"arg0 in ext_fill() is 4 bytes of memory, in ext_fill() of the target 4 bytes of memory or NULL",
	.only = "6.12",
};
static const struct ext_arg_case ext_ctx_short_case = {
	ext_ctx_target, "ext_ctx_target", ext_ctx_short, "ext_ctx_len",
};
/*
 * A static function its target calls under a lock runs inside the lock
 * region, where 6.12 lets ours call helpers (0028): an extension,
 * verified without the lock, must not replace it. 6.12 replaces global
 * functions only, stock and ours alike; this keeps it so.
 */
static const struct ext_arg_case ext_lk_case = {
	ext_ctx_target, "ext_lk_target", ext_ctx_short, "ext_lk_fn",
	"ext_lk_fn() is not a global function", .only = "6.12",
};
static const struct ext_arg_case ext_tag_ctx_case = {
	ext_ctx_target, "ext_tag_target", ext_tag_loose, "ext_ctx_tagged", .only = "6.12",
};
static const struct ext_arg_case ext_tag_nonnull_case = {
	ext_ctx_target, "ext_tag_target", ext_tag_loose, "ext_nonnull", .only = "6.12",
};
static const struct ext_arg_case ext_tag_trusted_case = {
	ext_ctx_target, "ext_tag_target", ext_tag_loose, "ext_trusted", .only = "6.12",
};
static const struct ext_arg_case ext_kp_ctx_case = {
	ext_kp_target, "ext_kp_target", ext_kp_swap, "ext_kp_ctx",
	"arg0 in ext_kp_ctx() is 168 bytes of memory or NULL, in ext_kp_ctx() of the target the context",
	.only = "6.12",
};
static const struct ext_arg_case ext_kp_mem_case = {
	ext_kp_target, "ext_kp_target", ext_kp_swap, "ext_kp_mem",
	"arg0 in ext_kp_mem() is the context, in ext_kp_mem() of the target 8 bytes of memory or NULL",
	.only = "6.12",
};
static const struct ext_arg_case ext_tp_ctx_case = {
	ext_tp_target, "ext_tp_target", ext_tp_read, "ext_tp_fn",
	"arg0 in ext_tp_fn() is the context, which an extension of a tracing, LSM or struct_ops program cannot read",
};

struct ext_run_case {
	const char *target_prog;
	const char *fn;		/* the function replaced */
	const char *ext_prog;
	bool refused;		/* the attach must fail with EINVAL */
	const char *only;	/* the one base whose tree has the case, or NULL */
};

/*
 * Load ext_run.bpf.c's @c->ext_prog as an extension of @c->fn in
 * ext_run_target.bpf.c's @c->target_prog, and attach it. Nothing runs:
 * where the attach succeeds and must not, the runs would read kernel
 * memory, dereference NULL or forge AF_UNIX credentials.
 */
static void ext_run_attach(struct kt *t, const void *arg)
{
	const struct ext_run_case *c = arg;
	struct embedded_obj target = EMBEDDED_OBJ(ext_run_target);
	struct embedded_obj o = EMBEDDED_OBJ(ext_run);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o.name);
	struct bpf_object *obj, *ext = NULL;
	struct bpf_link *link = NULL;
	struct bpf_program *p;
	int fd, err;

	if (c->only && strcmp(c->only, kt_base())) {
		kt_skip(t, "a case of base %s's tree", c->only);
		return;
	}
	obj = obj_load(t, &target, (const char *const[]){ c->target_prog, NULL });
	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, c->target_prog);
	ext = bpf_object__open_mem(o.data, o.size, &opts);
	if (fd < 0 || !KT_TRUE(t, ext, "open ext_run"))
		goto out;
	bpf_object__for_each_program(p, ext)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), c->ext_prog));
	p = bpf_object__find_program_by_name(ext, c->ext_prog);
	if (!KT_OK(t, bpf_program__set_attach_target(p, fd, c->fn), "set the target") ||
	    !KT_OK(t, bpf_object__load(ext), "load the extension"))
		goto out;
	link = bpf_program__attach_freplace(p, fd, c->fn);
	err = link ? 0 : -errno;
	if (c->refused)
		KT_ERR(t, err, EINVAL, "attach an extension that uses what its target's runner did not check");
	else
		KT_OK(t, err, "attach an extension within its target");
out:
	bpf_link__destroy(link);
	bpf_object__close(ext);
	bpf_object__close(obj);
}

static const struct ext_run_case ext_run_sys = { "ext_sys_target", "ext_sys_fn", "ext_sys_fn", true };
static const struct ext_run_case ext_run_cg = { "ext_cg_target", "ext_cg_fn", "ext_cg_fn", true };
static const struct ext_run_case ext_run_sf = { "ext_sf_target", "ext_sf_fn", "ext_sf_fn", true };
static const struct ext_run_case ext_run_sf_twin = { "ext_sf_target", "ext_sf_fn", "ext_sf_len" };
static const struct ext_run_case ext_run_tpw = { "ext_tpw_target", "ext_tpw_fn", "ext_tpw_fn", true };
/* 6.12 refuses it at load: "Extension program changes packet data, while original does not" */
static const struct ext_run_case ext_run_pk = { "ext_pk_target", "ext_pk_fn", "ext_pk_fn", true,
						"6.1" };

/*
 * Fifth review (0050, 0051). Each program writes 0x5a5a at element 0 +
 * a value it keeps in the stack: 0 or 8 on the paths the verifier walks,
 * 16 (element 1's cnt, past the 16-byte value) on the path it should
 * walk last, and which a test run (a 64-byte packet, mark 0) takes.
 */
#define REVIEW_MAGIC 0x5a5a

/* Emit: key 0 at fp-16, r0 = lookup(map), r0 += @idx_reg, *(u32 *)r0 = MAGIC */
static void put_indexed_store(struct bpf_insn *p, int *i, int map, int idx_reg)
{
	struct bpf_insn lm[] = { I_LD_MAP_FD(BPF_REG_1, map) };

	p[(*i)++] = I_ST_W(BPF_REG_10, -16, 0);
	p[(*i)++] = I_MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[(*i)++] = I_ADD64_IMM(BPF_REG_2, -16);
	p[(*i)++] = lm[0];
	p[(*i)++] = lm[1];
	p[(*i)++] = I_CALL(BPF_FUNC_map_lookup_elem);
	p[(*i)++] = I_JEQ_IMM(BPF_REG_0, 0, 2);
	p[(*i)++] = I_ADD64_REG(BPF_REG_0, idx_reg);
	p[(*i)++] = I_ST_W(BPF_REG_0, 0, REVIEW_MAGIC);
	p[(*i)++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[(*i)++] = I_EXIT();
}

/* Room for a checkpoint with default flags: eight instructions. */
static void put_pad(struct bpf_insn *p, int *i)
{
	for (int k = 0; k < 8; k++)
		p[(*i)++] = I_MOV64_IMM(BPF_REG_0, 0);
}

/* What an accepted program did: element 1's cnt after one test run. */
static void report_effect(struct kt *t, unsigned int f, int fd, int map)
{
	struct elem e = {};
	__u32 retval, key = 1;

	if (prog_run(fd, 1, &retval)) {
		kt_log(t, "%s: test_run failed: %d", flag_names[f], errno);
		return;
	}
	if (bpf_map_lookup_elem(map, &key, &e)) {
		kt_log(t, "%s: lookup of element 1 failed", flag_names[f]);
		return;
	}
	kt_log(t, "%s: after one run element 1's cnt is %#x%s", flag_names[f], e.cnt,
	       e.cnt == REVIEW_MAGIC ? ": written 16 bytes into element 0's 16-byte value" : "");
	e.cnt = 0;
	bpf_map_update_elem(map, &key, &e, BPF_ANY);
}

/*
 * Load @n instructions (a callback or subprogram at @cb_start if > 0) with
 * both flag sets; each must be refused with @err and @msg. An accepted
 * program is run once, and what it wrote is logged.
 */
static void review_refused(struct kt *t, const struct bpf_insn *insn, int n, int cb_start,
			   int map, int err, const char *msg)
{
	unsigned int f;

	for (f = 0; f < KT_ARRAY_SIZE(flag_values); f++) {
		int fd;

		if (cb_start > 0) {
			fd = load_with_cb(insn, n, cb_start, flag_values[f], 1);
		} else {
			LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = vlog,
				    .log_size = sizeof(vlog), .log_level = 1,
				    .prog_flags = flag_values[f]);

			vlog[0] = 0;
			fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "review", "GPL", insn, n,
					   &opts);
			fd = fd < 0 ? -errno : fd;
		}
		if (fd >= 0)
			report_effect(t, f, fd, map);
		check_refused(t, f, fd, "it", err, msg);
	}
}

/*
 * Finding (0051): a static subprogram stores r7 into its caller's fp-8
 * through a pointer. Three paths join before the store at A: P1 (r7 = 8,
 * r8 a scalar), D (r7 = 8, r8 a stack pointer) and E (r7 = 16, r8 a stack
 * pointer; the one a run takes). P1 is walked to the caller's use of the
 * slot, and every scalar of its path is marked precise. D differs from P1
 * at A by r8, stores, and is pruned after the store against P1 (the slot
 * precise and 8 in both). Propagating the slot's precision from there,
 * backtracking passes the store (not through r10, so not recognised) and
 * stops at A, where the caller's slot is not a spill yet: D's r7 at A stays
 * imprecise, and E, the same as D at A but for r7, is pruned there. Before
 * 0051 the store itself marked r7 precise.
 */
static void review51_pruned_before_store(struct kt *t, const void *arg)
{
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, call, sub, je, jd, ja1, ja2;

	if (map < 0)
		return;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[i++] = I_ST_W(BPF_REG_10, -8, 0);			/* fp-8: eight ZERO bytes */
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	p[i++] = I_LDX_W(BPF_REG_2, BPF_REG_6, offsetof(struct __sk_buff, len));
	p[i++] = I_MOV64_REG(BPF_REG_1, BPF_REG_10);
	p[i++] = I_ADD64_IMM(BPF_REG_1, -8);
	call = i;
	p[i++] = I_CALL_SUB(0);
	p[i++] = I_LDX_DW(BPF_REG_7, BPF_REG_10, -8);		/* what sub stored */
	put_indexed_store(p, &i, map, BPF_REG_7);
	sub = i;
	p[call].imm = sub - call - 1;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);		/* the caller's fp-8 */
	p[i++] = I_MOV64_REG(BPF_REG_9, BPF_REG_2);		/* skb->len: 64 */
	je = i;
	p[i++] = I_JGT_IMM(BPF_REG_9, 1, 0);
	jd = i;
	p[i++] = I_JEQ_IMM(BPF_REG_9, 1, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_7, 8);			/* P1 */
	p[i++] = I_MOV64_IMM(BPF_REG_8, 0);
	put_pad(p, &i);
	ja1 = i;
	p[i++] = I_JA(0);
	p[jd].off = i - jd - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_7, 8);			/* D */
	p[i++] = I_MOV64_REG(BPF_REG_8, BPF_REG_10);
	put_pad(p, &i);
	ja2 = i;
	p[i++] = I_JA(0);
	p[je].off = i - je - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_7, 16);			/* E */
	p[i++] = I_MOV64_REG(BPF_REG_8, BPF_REG_10);
	put_pad(p, &i);
	p[ja1].off = i - ja1 - 1;
	p[ja2].off = i - ja2 - 1;
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_8, -16);		/* A: r8 read */
	p[i++] = I_STX_DW(BPF_REG_6, BPF_REG_7, 0);		/* caller's fp-8 = r7 */
	p[i++] = I_JA(0);
	put_pad(p, &i);
	p[i++] = I_JA(0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);			/* Q */
	p[i++] = I_EXIT();
	review_refused(t, p, i, sub, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * Finding (0050): on path CUR, fp-8 is a spill of r3 = r1 in {0, 8},
 * linked to r1 by their id, and "if r1 != 0" bounds it to 0 on the way to
 * J. At J it is pruned against path O, whose fp-8 is eight ZERO bytes: the
 * spilled 0 now compares with them, and a ZERO slot has no precision to
 * propagate, so nothing marks fp-8 (or r1) precise in CUR's state at X.
 * Path F (the one a run takes) reaches X with fp-8 a spilled 16 and is
 * pruned there: at J it adds 16 to the value pointer. Before 0050 CUR
 * went on from J, its load marked fp-8 precise back to X ({0, 8}), and F
 * was walked.
 */
static void review50_zero_covers_narrowed_spill(struct kt *t, const void *arg)
{
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, jf, jc, joj, jox, jout;

	if (map < 0)
		return;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[i++] = I_LDX_W(BPF_REG_7, BPF_REG_6, offsetof(struct __sk_buff, len));
	p[i++] = I_LDX_W(BPF_REG_1, BPF_REG_6, offsetof(struct __sk_buff, mark));
	p[i++] = I_AND64_IMM(BPF_REG_1, 8);			/* {0, 8}, no id */
	jf = i;
	p[i++] = I_JGT_IMM(BPF_REG_7, 1, 0);
	jc = i;
	p[i++] = I_JEQ_IMM(BPF_REG_7, 1, 0);
	p[i++] = I_ST_W(BPF_REG_10, -8, 0);			/* O: fp-8 ZERO */
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	joj = i;
	p[i++] = I_JA(0);
	p[jc].off = i - jc - 1;
	p[i++] = I_MOV64_REG(BPF_REG_3, BPF_REG_1);		/* CUR: r1, r3 one id */
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_3, -8);
	put_pad(p, &i);
	jox = i;
	p[i++] = I_JA(0);
	p[jf].off = i - jf - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_3, 16);			/* F */
	p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_3, -8);
	put_pad(p, &i);
	p[jox].off = i - jox - 1;
	jout = i;
	p[i++] = I_JNE_IMM(BPF_REG_1, 0, 0);			/* X */
	p[joj].off = i - joj - 1;
	p[i++] = I_LDX_DW(BPF_REG_8, BPF_REG_10, -8);		/* J */
	put_indexed_store(p, &i, map, BPF_REG_8);
	p[jout].off = i - 2 - jout - 1;				/* to r0 = 0; exit */
	if (on_612())	/* see review50_guard(): O's fp-8 reads as unbounded */
		review_refused(t, p, i, 0, map, EINVAL, UNBOUNDED_612);
	else
		review_refused(t, p, i, 0, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * Guards (0050): a slot compared as a scalar still keeps what the explored
 * path needed. With @arg, path O keeps fp-8 a spill of mark & 8 (precise
 * once J adds it to the value pointer) and the path walked second eight
 * MISC bytes (two 4-byte stores of skb->mark); without, O keeps eight ZERO
 * bytes and the second path a spilled 16. Neither second path is covered
 * at J, and both are refused.
 *
 * On 6.12 two 4-byte stores of 0 do not make eight ZERO bytes: the store
 * at fp-8 is a 4-byte spill of a known 0 (6.12 spills BPF_ST immediates)
 * and the one at fp-4 four ZERO bytes, and an 8-byte read of the mixed
 * slot is an unknown scalar. Path O itself is then refused at J, with
 * EINVAL (stock-6.12, baseline-6.12 and ours-6.12 alike): on 6.12 this
 * case and review50_zero_covers_narrowed_spill do not reach the pruning
 * they were written for; they need a 6.12 form of O's slot.
 */
static void review50_guard(struct kt *t, const void *arg)
{
	bool misc = arg != NULL;
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, jc, joj;

	if (map < 0)
		return;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[i++] = I_LDX_W(BPF_REG_7, BPF_REG_6, offsetof(struct __sk_buff, len));
	p[i++] = I_LDX_W(BPF_REG_1, BPF_REG_6, offsetof(struct __sk_buff, mark));
	jc = i;
	p[i++] = I_JGT_IMM(BPF_REG_7, 1, 0);
	if (misc) {
		p[i++] = I_MOV64_REG(BPF_REG_3, BPF_REG_1);	/* O: a spill in {0, 8} */
		p[i++] = I_AND64_IMM(BPF_REG_3, 8);
		p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_3, -8);
	} else {
		p[i++] = I_ST_W(BPF_REG_10, -8, 0);		/* O: eight ZERO bytes */
		p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	}
	joj = i;
	p[i++] = I_JA(0);
	p[jc].off = i - jc - 1;
	if (misc) {
		p[i++] = I_STX_W(BPF_REG_10, BPF_REG_1, -8);	/* eight MISC bytes */
		p[i++] = I_STX_W(BPF_REG_10, BPF_REG_1, -4);
	} else {
		p[i++] = I_MOV64_IMM(BPF_REG_3, 16);		/* a spilled 16 */
		p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_3, -8);
	}
	p[joj].off = i - joj - 1;
	p[i++] = I_LDX_DW(BPF_REG_8, BPF_REG_10, -8);		/* J */
	put_indexed_store(p, &i, map, BPF_REG_8);
	if (!misc && on_612())
		review_refused(t, p, i, 0, map, EINVAL, UNBOUNDED_612);
	else
		review_refused(t, p, i, 0, map, misc ? EINVAL : EACCES,
			       misc ? "unbounded min value" : "invalid access to map value");
	close(map);
}

/*
 * Guard (0051): the subprogram stores 8 or 16 into its caller's fp-8
 * through a pointer; nothing else tells the paths apart. The caller's use
 * after the return marks everything precise, and the second path is not
 * pruned before or after the store.
 */
static void review51_guard_subprog(struct kt *t, const void *arg)
{
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, call, sub, je, ja;

	if (map < 0)
		return;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[i++] = I_ST_W(BPF_REG_10, -8, 0);
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	p[i++] = I_LDX_W(BPF_REG_2, BPF_REG_6, offsetof(struct __sk_buff, len));
	p[i++] = I_MOV64_REG(BPF_REG_1, BPF_REG_10);
	p[i++] = I_ADD64_IMM(BPF_REG_1, -8);
	call = i;
	p[i++] = I_CALL_SUB(0);
	p[i++] = I_LDX_DW(BPF_REG_7, BPF_REG_10, -8);
	put_indexed_store(p, &i, map, BPF_REG_7);
	sub = i;
	p[call].imm = sub - call - 1;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	je = i;
	p[i++] = I_JGT_IMM(BPF_REG_2, 1, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_7, 8);
	ja = i;
	p[i++] = I_JA(0);
	p[je].off = i - je - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_7, 16);
	p[ja].off = i - ja - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_8, 0);
	p[i++] = I_STX_DW(BPF_REG_6, BPF_REG_7, 0);
	p[i++] = I_JA(0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	review_refused(t, p, i, sub, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * Guard (0051): a bpf_loop(2) callback keeps a counter in its caller's
 * fp-8 through its context pointer: 0 -> 8 on run 1, 8 -> 16 on run 2.
 * The caller indexes the value with it after the loop: 16 is past the
 * value, and ours, following the runs, refuses it. Stock walks the
 * callback once, from fp-8 = 0, accepts, and hard-wires its branch (a run
 * then stores 8 twice).
 */
static void review51_guard_loop(struct kt *t, const void *arg)
{
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, ldf, cb, jn;

	if (map < 0)
		return;
	p[i++] = I_ST_W(BPF_REG_10, -8, 0);
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	ldf = put_loop_call(p, &i, 2, -8);
	p[i++] = I_LDX_DW(BPF_REG_7, BPF_REG_10, -8);
	put_indexed_store(p, &i, map, BPF_REG_7);
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	p[i++] = I_LDX_DW(BPF_REG_3, BPF_REG_2, 0);
	jn = i;
	p[i++] = I_JNE_IMM(BPF_REG_3, 0, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_3, 8);
	p[i++] = I_STX_DW(BPF_REG_2, BPF_REG_3, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	p[jn].off = i - jn - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_3, 16);
	p[i++] = I_STX_DW(BPF_REG_2, BPF_REG_3, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	review_refused(t, p, i, cb, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * Sixth review (0052, 0053): review52_*. 0052 spills an aligned zero as an
 * imprecise scalar (BPF_ST imm 0 too) instead of eight STACK_ZERO bytes,
 * gives a constant zero for a narrower load of a spilled zero or of
 * STACK_ZERO bytes beside a narrower spill, and keeps STACK_ZERO bytes
 * beside a narrower spill; 0053 keeps a checkpoint at the instruction
 * after a callback's call whenever the callback returns there. Each case
 * is a program whose path O (walked first) keeps a zero where path F (the
 * one a test run takes, a 64-byte packet) keeps 16, joined before a load
 * that indexes element 0 with what it reads: F must be walked, and is
 * refused. None was found accepted: these are guards. Stock refuses them
 * as well but for the callback cases it walks only once (beyond).
 * review52_two_st_w_zero and review52_bpf_only_* are programs stock
 * accepts and 0052 refuses (compatibility, red until fixed).
 */
#define R52_ST(sz, d, off, i)	((struct bpf_insn){ BPF_ST | BPF_MEM | (sz), d, 0, off, i })
#define R52_LDX(sz, d, s, off)	((struct bpf_insn){ BPF_LDX | BPF_MEM | (sz), d, s, off, 0 })
#define R52_STX(sz, d, s, off)	((struct bpf_insn){ BPF_STX | BPF_MEM | (sz), d, s, off, 0 })
#define R52_LSH64_IMM(d, i)	((struct bpf_insn){ BPF_ALU64 | BPF_LSH | BPF_K, d, 0, 0, i })

enum r52_shape {
	R52_NARROW_LO,		/* O: ST_DW 0; F: spill 16; J: 4-byte load at fp-8 */
	R52_NARROW_HI,		/* O: spill r = 0; F: spill 16 << 32; J: 4-byte load at fp-4 */
	R52_PARTIAL,		/* 4-byte spill at fp-8 beside four ZERO bytes; 8-byte load */
	R52_BYTE,		/* 1-byte ST at fp-8 beside seven ZERO bytes; 8-byte load */
	R52_NARROW_H,		/* O: ST_DW 0; F: spill 16 << 16; J: 2-byte load at fp-6 */
	R52_PARTIAL_ZERO_HALF,	/* O: 4-byte spill of 0 + ZERO; F: 4-byte spill of 0 + 4 MISC */
	R52_VIA_PTR,		/* through r1 = r10 - 8: O: ST_DW 0; F: spill 16 */
};

/* Path @f of @shape: what it leaves in fp-8 (O: 0, F: 16 somewhere) */
static void r52_fill(struct bpf_insn *p, int *i, enum r52_shape shape, bool f)
{
	int v = f ? 16 : 0;

	switch (shape) {
	case R52_NARROW_LO:
	case R52_NARROW_H:
		if (!f) {
			p[(*i)++] = R52_ST(BPF_DW, BPF_REG_10, -8, 0);
		} else {
			p[(*i)++] = I_MOV64_IMM(BPF_REG_3, 16);
			if (shape == R52_NARROW_H)
				p[(*i)++] = R52_LSH64_IMM(BPF_REG_3, 16);
			p[(*i)++] = I_STX_DW(BPF_REG_10, BPF_REG_3, -8);
		}
		break;
	case R52_NARROW_HI:
		p[(*i)++] = I_MOV64_IMM(BPF_REG_3, v);
		p[(*i)++] = R52_LSH64_IMM(BPF_REG_3, 32);
		p[(*i)++] = I_STX_DW(BPF_REG_10, BPF_REG_3, -8);
		break;
	case R52_PARTIAL:
		p[(*i)++] = I_ST_W(BPF_REG_10, -4, 0);		/* four ZERO bytes */
		p[(*i)++] = I_MOV64_IMM(BPF_REG_3, v);
		p[(*i)++] = I_STX_W(BPF_REG_10, BPF_REG_3, -8);	/* 4-byte spill */
		break;
	case R52_BYTE:
		p[(*i)++] = I_ST_W(BPF_REG_10, -4, 0);
		p[(*i)++] = R52_ST(BPF_H, BPF_REG_10, -6, 0);
		p[(*i)++] = R52_ST(BPF_B, BPF_REG_10, -7, 0);
		p[(*i)++] = R52_ST(BPF_B, BPF_REG_10, -8, v);	/* 1-byte spill */
		break;
	case R52_VIA_PTR:
		p[(*i)++] = I_MOV64_REG(BPF_REG_4, BPF_REG_10);
		p[(*i)++] = I_ADD64_IMM(BPF_REG_4, -8);
		if (!f) {
			p[(*i)++] = R52_ST(BPF_DW, BPF_REG_4, 0, 0);
		} else {
			p[(*i)++] = I_MOV64_IMM(BPF_REG_3, 16);
			p[(*i)++] = I_STX_DW(BPF_REG_4, BPF_REG_3, 0);
		}
		break;
	case R52_PARTIAL_ZERO_HALF:
		/* fp-4..-1: ZERO on O, skb->mark (MISC) on F */
		if (f)
			p[(*i)++] = I_STX_W(BPF_REG_10, BPF_REG_1, -4);
		else
			p[(*i)++] = I_ST_W(BPF_REG_10, -4, 0);
		p[(*i)++] = I_MOV64_IMM(BPF_REG_3, 0);
		p[(*i)++] = I_STX_W(BPF_REG_10, BPF_REG_3, -8);
		break;
	}
}

static void review52_pruned(struct kt *t, const void *arg)
{
	enum r52_shape shape = (enum r52_shape)(long)arg;
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, jc, joj;

	if (map < 0)
		return;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[i++] = I_LDX_W(BPF_REG_7, BPF_REG_6, offsetof(struct __sk_buff, len));
	p[i++] = I_LDX_W(BPF_REG_1, BPF_REG_6, offsetof(struct __sk_buff, mark));
	jc = i;
	p[i++] = I_JGT_IMM(BPF_REG_7, 1, 0);
	r52_fill(p, &i, shape, false);				/* O */
	put_pad(p, &i);
	joj = i;
	p[i++] = I_JA(0);
	p[jc].off = i - jc - 1;
	r52_fill(p, &i, shape, true);				/* F */
	put_pad(p, &i);
	p[joj].off = i - joj - 1;
	put_pad(p, &i);						/* J */
	switch (shape) {
	case R52_NARROW_LO:
	case R52_VIA_PTR:
		p[i++] = R52_LDX(BPF_W, BPF_REG_8, BPF_REG_10, -8);
		break;
	case R52_NARROW_HI:
		p[i++] = R52_LDX(BPF_W, BPF_REG_8, BPF_REG_10, -4);
		break;
	case R52_NARROW_H:
		p[i++] = R52_LDX(BPF_H, BPF_REG_8, BPF_REG_10, -6);
		break;
	default:
		p[i++] = I_LDX_DW(BPF_REG_8, BPF_REG_10, -8);
		break;
	}
	p[i++] = I_AND64_IMM(BPF_REG_8, 31);			/* F: [0, 31] or 16 */
	put_indexed_store(p, &i, map, BPF_REG_8);
	review_refused(t, p, i, 0, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * A bpf_loop(2) callback adds 8 to a counter in its caller's fp-8 that
 * starts as BPF_ST imm 0 (0052: an imprecise spilled zero, widened at
 * run 2); the caller indexes element 0 with a 4-byte load of it after the
 * loop. Run 2 leaves 16. @arg: the callback adds with a 4-byte load and
 * store instead (a narrower spill beside the zero's other half).
 * Stock walks the callback once and accepts.
 */
static void review52_cb_counter(struct kt *t, const void *arg)
{
	bool narrow = arg != NULL;
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, ldf, cb;

	if (map < 0)
		return;
	p[i++] = R52_ST(BPF_DW, BPF_REG_10, -8, 0);
	ldf = put_loop_call(p, &i, 2, -8);
	p[i++] = R52_LDX(BPF_W, BPF_REG_7, BPF_REG_10, -8);
	p[i++] = I_AND64_IMM(BPF_REG_7, 31);
	put_indexed_store(p, &i, map, BPF_REG_7);
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	if (narrow) {
		p[i++] = R52_LDX(BPF_W, BPF_REG_3, BPF_REG_2, 0);
		p[i++] = I_ADD64_IMM(BPF_REG_3, 8);
		p[i++] = R52_STX(BPF_W, BPF_REG_2, BPF_REG_3, 0);
	} else {
		p[i++] = I_LDX_DW(BPF_REG_3, BPF_REG_2, 0);
		p[i++] = I_ADD64_IMM(BPF_REG_3, 8);
		p[i++] = I_STX_DW(BPF_REG_2, BPF_REG_3, 0);
	}
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	review_refused(t, p, i, cb, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * A bpf_loop(2) callback stores immediates into its caller's fp-8 (BPF_ST
 * through its context pointer: no writes_frame_below): 0 when it reads 16,
 * 16 when it reads 0 (@arg: 8 bytes; else 4 bytes at fp-8, beside four
 * ZERO bytes). fp-8 starts at 16: run 1 leaves 0, run 2 leaves 16. The
 * checkpoint 0053 keeps after run 1 (fp-8 a spilled 0) must not cover the
 * caller after run 2.
 */
static void review52_cb_st_toggle(struct kt *t, const void *arg)
{
	int sz = arg ? BPF_DW : BPF_W;
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, ldf, cb, jn;

	if (map < 0)
		return;
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	p[i++] = R52_ST(sz, BPF_REG_10, -8, 16);
	ldf = put_loop_call(p, &i, 2, -8);
	p[i++] = I_LDX_DW(BPF_REG_7, BPF_REG_10, -8);
	p[i++] = I_AND64_IMM(BPF_REG_7, 31);
	put_indexed_store(p, &i, map, BPF_REG_7);
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	p[i++] = R52_LDX(sz, BPF_REG_3, BPF_REG_2, 0);
	jn = i;
	p[i++] = I_JNE_IMM(BPF_REG_3, 0, 0);
	p[i++] = R52_ST(sz, BPF_REG_2, 0, 16);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	p[jn].off = i - jn - 1;
	p[i++] = R52_ST(sz, BPF_REG_2, 0, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	review_refused(t, p, i, cb, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * A static subprogram stores into its caller's fp-8 through a pointer:
 * BPF_ST imm 0 on the path walked first (O), r7 = 16 on the one a run
 * takes (F), joined before eight instructions of padding; the caller
 * indexes element 0 with a 4-byte load of fp-8 after the return.
 */
static void review52_subprog_st_zero(struct kt *t, const void *arg)
{
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, call, sub, je, ja;

	if (map < 0)
		return;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[i++] = I_ST_W(BPF_REG_10, -8, 0);
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	p[i++] = I_LDX_W(BPF_REG_2, BPF_REG_6, offsetof(struct __sk_buff, len));
	p[i++] = I_MOV64_REG(BPF_REG_1, BPF_REG_10);
	p[i++] = I_ADD64_IMM(BPF_REG_1, -8);
	call = i;
	p[i++] = I_CALL_SUB(0);
	p[i++] = R52_LDX(BPF_W, BPF_REG_7, BPF_REG_10, -8);
	p[i++] = I_AND64_IMM(BPF_REG_7, 31);
	put_indexed_store(p, &i, map, BPF_REG_7);
	sub = i;
	p[call].imm = sub - call - 1;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	je = i;
	p[i++] = I_JGT_IMM(BPF_REG_2, 1, 0);
	p[i++] = R52_ST(BPF_DW, BPF_REG_6, 0, 0);		/* O */
	ja = i;
	p[i++] = I_JA(0);
	p[je].off = i - je - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_7, 16);			/* F */
	p[i++] = I_STX_DW(BPF_REG_6, BPF_REG_7, 0);
	p[ja].off = i - ja - 1;
	put_pad(p, &i);
	p[i++] = I_JA(0);
	put_pad(p, &i);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	review_refused(t, p, i, sub, map, EACCES, "invalid access to map value");
	close(map);
}

/*
 * The caller's fp-8 is a 4-byte spill of 0 beside four ZERO bytes (fp-4
 * first, then fp-8: 0052 keeps the ZERO bytes). A bpf_loop(2) callback
 * loads it whole (a zero from a narrower spill and ZERO bytes, 0052),
 * adds 8 and stores 4 bytes back through its context pointer: the ZERO
 * half stays. The caller indexes element 0 with it after the loop: 16
 * after run 2.
 */
static void review52_cb_partial_counter(struct kt *t, const void *arg)
{
	struct bpf_insn p[64];
	int map = elem_array(t, false), i = 0, ldf, cb;

	if (map < 0)
		return;
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	p[i++] = I_ST_W(BPF_REG_10, -8, 0);
	ldf = put_loop_call(p, &i, 2, -8);
	p[i++] = I_LDX_DW(BPF_REG_7, BPF_REG_10, -8);
	p[i++] = I_AND64_IMM(BPF_REG_7, 31);
	put_indexed_store(p, &i, map, BPF_REG_7);
	cb = i;
	p[ldf].imm = cb - ldf - 1;
	p[i++] = I_LDX_DW(BPF_REG_3, BPF_REG_2, 0);
	p[i++] = I_ADD64_IMM(BPF_REG_3, 8);
	p[i++] = R52_STX(BPF_W, BPF_REG_2, BPF_REG_3, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	review_refused(t, p, i, cb, map, EACCES, "invalid access to map value");
	close(map);
}

/* Loaded with both flag sets (as CAP_BPF + CAP_NET_ADMIN if @bpf_only), and runs */
static void r52_accepted(struct kt *t, const struct bpf_insn *insn, int n, bool bpf_only)
{
	unsigned int f;
	__u32 retval;

	for (f = 0; f < KT_ARRAY_SIZE(flag_values); f++) {
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = vlog, .log_size = sizeof(vlog),
			    .log_level = 1, .prog_flags = flag_values[f]);
		int fd;

		if (bpf_only && !KT_OK(t, progs_set_caps(true), "drop to CAP_BPF + CAP_NET_ADMIN"))
			return;
		vlog[0] = 0;
		fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "review", "GPL", insn, n, &opts);
		fd = fd < 0 ? -errno : fd;
		if (bpf_only && !KT_OK(t, progs_set_caps(false), "restore the capabilities"))
			return;
		if (fd < 0) {
			kt_fail(t, "%s: refused (errno %d); tail:\n%s", flag_names[f], -fd,
				vlog + (strlen(vlog) > 400 ? strlen(vlog) - 400 : 0));
			continue;
		}
		KT_OK(t, prog_run(fd, 1, &retval), "test_run");
		close(fd);
	}
}

/*
 * Compatibility (0052), found by review: 4-byte zeros at fp-8 then fp-4
 * (in that order) used to be eight ZERO bytes, a precise 0 for an 8-byte
 * load. The store at fp-8 is now a 4-byte spill of 0, and the unaligned
 * store at fp-4, a "regular write" into a spilled slot, scrubs it to
 * MISC: the load is unknown and the indexed store is refused. Stock and
 * the series before 0052 accept.
 */
static void review52_two_st_w_zero(struct kt *t, const void *arg)
{
	struct bpf_insn p[32];
	int map, i = 0;

	if (!only_on_61(t, "scrubs the spill at fp-8 to MISC on the store at fp-4 and refuses it"))
		return;
	map = elem_array(t, false);
	if (map < 0)
		return;
	p[i++] = I_ST_W(BPF_REG_10, -8, 0);
	p[i++] = I_ST_W(BPF_REG_10, -4, 0);
	p[i++] = I_LDX_DW(BPF_REG_8, BPF_REG_10, -8);
	put_indexed_store(p, &i, map, BPF_REG_8);
	r52_accepted(t, p, i, false);
	close(map);
}

/*
 * Compatibility (0052), found by review: a loader with CAP_BPF but not
 * CAP_PERFMON (allow_ptr_leaks off) zeroes a key with one 8-byte store
 * (@arg: BPF_ST imm 0; else STX of r1 = 0, what clang emits for
 * "struct key k = {}") and then fills a 4-byte field of it. The zero is
 * now a spilled register, and a narrower store into a spilled slot is
 * "attempt to corrupt spilled pointer on stack" without allow_ptr_leaks,
 * whatever the spilled type. Stock and the series before 0052 accept.
 */
static void review52_bpf_only_zero_then_field(struct kt *t, const void *arg)
{
	struct bpf_insn lm[] = { I_LD_MAP_FD(BPF_REG_1, 0) };
	struct bpf_insn p[32];
	int map = elem_array(t, false), i = 0;

	if (map < 0)
		return;
	lm[0].imm = map;
	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	if (arg) {
		p[i++] = R52_ST(BPF_DW, BPF_REG_10, -8, 0);
	} else {
		p[i++] = I_MOV64_IMM(BPF_REG_1, 0);
		p[i++] = I_STX_DW(BPF_REG_10, BPF_REG_1, -8);
	}
	p[i++] = I_LDX_W(BPF_REG_2, BPF_REG_6, offsetof(struct __sk_buff, mark));
	p[i++] = I_STX_W(BPF_REG_10, BPF_REG_2, -8);		/* key = skb->mark */
	p[i++] = I_MOV64_REG(BPF_REG_2, BPF_REG_10);
	p[i++] = I_ADD64_IMM(BPF_REG_2, -8);
	p[i++] = lm[0];
	p[i++] = lm[1];
	p[i++] = I_CALL(BPF_FUNC_map_lookup_elem);
	p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
	p[i++] = I_EXIT();
	r52_accepted(t, p, i, true);
	close(map);
}

/*
 * Seventh review (0052-0054): review54_*. 0053 keeps a narrower spilled
 * zero when a zero is written beside it (spill_beside_zero()): the slot
 * holds SPILL bytes and STACK_ZERO bytes, and a load over both is a
 * constant zero. Backtracking does not know that such a store leaves the
 * spill in place: backtrack_insn() takes any BPF_ST/BPF_STX through r10
 * into a slot it searches for as the store that set the slot, clears the
 * slot from its stack mask and stops there (BPF_STX goes on with its
 * source register, a constant zero). The narrower spill of the zero
 * before it is never reached, so a state checkpointed between the spill
 * and the store beside it keeps the spilled scalar imprecise, and a path
 * that spilled another value there is pruned against it. On that path the
 * store beside the spill scrubs the slot to MISC and the load is unknown;
 * it is never walked, and at run time it loads what it spilled.
 *
 * Each case: path O (walked first) spills a 0 of @sz bytes at fp-8; path
 * F (the one a test run takes, a 64-byte packet) spills 16 there; they
 * join at a checkpoint J; then a zero is stored beside the spill, the
 * slot is loaded over the spill and the zero, and the load indexes
 * element 0. F loads 16 and writes element 1: must be refused. Stock
 * refuses each (a 4-byte spill of zero is STACK_ZERO there, and without
 * CAP_PERFMON the store beside a spill is "attempt to corrupt spilled
 * pointer on stack"); 0054 accepts all but the twin.
 */
enum r54_shape {
	R54_ST_W,		/* 4-byte spill at fp-8; ST_W fp-4 = 0; LDX_DW fp-8 */
	R54_STX_W,		/* 4-byte spill at fp-8; STX_W fp-4 = (r4 = 0); LDX_DW fp-8 */
	R54_ST_H,		/* 2-byte spill at fp-8; ST_H fp-6 = 0; LDX_W fp-8 */
	R54_ST_W_BPF_ONLY,	/* R54_ST_W by a CAP_BPF + CAP_NET_ADMIN loader (accepted;
				 * Spectre v1 masking of r0 += r8 turns 16 into 0 at run
				 * time, so element 1 is not written) */
	R54_TWIN,		/* R54_ST_W, but F spills 0 too: accepted */
	R54_HELPER_BPF_ONLY,	/* R54_ST_W by a CAP_BPF loader; the load sizes a helper */
};

static void r54_build(struct bpf_insn *p, int *n, int map, enum r54_shape shape)
{
	int sz = shape == R54_ST_H ? BPF_H : BPF_W, i = 0, jc, joj;

	p[i++] = I_MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[i++] = I_LDX_W(BPF_REG_7, BPF_REG_6, offsetof(struct __sk_buff, len));
	jc = i;
	p[i++] = I_JGT_IMM(BPF_REG_7, 1, 0);
	p[i++] = I_MOV64_IMM(BPF_REG_3, 0);			/* O */
	p[i++] = R52_STX(sz, BPF_REG_10, BPF_REG_3, -8);
	put_pad(p, &i);
	joj = i;
	p[i++] = I_JA(0);
	p[jc].off = i - jc - 1;
	p[i++] = I_MOV64_IMM(BPF_REG_3, shape == R54_TWIN ? 0 : 16);	/* F */
	p[i++] = R52_STX(sz, BPF_REG_10, BPF_REG_3, -8);
	put_pad(p, &i);
	p[joj].off = i - joj - 1;
	put_pad(p, &i);						/* J */
	switch (shape) {
	case R54_STX_W:
		p[i++] = I_MOV64_IMM(BPF_REG_4, 0);
		p[i++] = R52_STX(BPF_W, BPF_REG_10, BPF_REG_4, -4);
		p[i++] = I_LDX_DW(BPF_REG_8, BPF_REG_10, -8);
		break;
	case R54_ST_H:
		p[i++] = R52_ST(BPF_H, BPF_REG_10, -6, 0);
		p[i++] = R52_LDX(BPF_W, BPF_REG_8, BPF_REG_10, -8);
		break;
	default:
		p[i++] = I_ST_W(BPF_REG_10, -4, 0);
		p[i++] = I_LDX_DW(BPF_REG_8, BPF_REG_10, -8);
		break;
	}
	p[i++] = I_AND64_IMM(BPF_REG_8, 31);			/* F: [0, 31] or 16 */
	if (shape == R54_HELPER_BPF_ONLY) {
		struct bpf_insn lm[] = { I_LD_MAP_FD(BPF_REG_1, map) };

		/*
		 * bpf_skb_load_bytes(skb, 0, &element 0 + 4, 8 + r8): 8 bytes
		 * to the verifier, 24 on F, whose last 8 land in element 1
		 * (its cnt becomes the packet's ethertype byte, 8). The size
		 * of a helper's access is not masked as a Spectre v1 pointer
		 * offset is for a loader without CAP_PERFMON.
		 */
		p[i++] = I_ST_W(BPF_REG_10, -16, 0);
		p[i++] = I_MOV64_REG(BPF_REG_2, BPF_REG_10);
		p[i++] = I_ADD64_IMM(BPF_REG_2, -16);
		p[i++] = lm[0];
		p[i++] = lm[1];
		p[i++] = I_CALL(BPF_FUNC_map_lookup_elem);
		p[i++] = I_JEQ_IMM(BPF_REG_0, 0, 7);
		p[i++] = I_MOV64_REG(BPF_REG_1, BPF_REG_6);
		p[i++] = I_MOV64_IMM(BPF_REG_2, 0);
		p[i++] = I_MOV64_REG(BPF_REG_3, BPF_REG_0);
		p[i++] = I_ADD64_IMM(BPF_REG_3, 4);
		p[i++] = I_MOV64_REG(BPF_REG_4, BPF_REG_8);
		p[i++] = I_ADD64_IMM(BPF_REG_4, 8);
		p[i++] = I_CALL(BPF_FUNC_skb_load_bytes);
		p[i++] = I_MOV64_IMM(BPF_REG_0, 0);
		p[i++] = I_EXIT();
	} else {
		put_indexed_store(p, &i, map, BPF_REG_8);
	}
	*n = i;
}

static void review54_beside_zero(struct kt *t, const void *arg)
{
	enum r54_shape shape = (enum r54_shape)(long)arg;
	struct bpf_insn p[80];
	int map = elem_array(t, false), n;
	unsigned int f;

	if (map < 0)
		return;
	r54_build(p, &n, map, shape);
	if (shape == R54_TWIN) {
		if (only_on_61(t, "scrubs F's spill at fp-8 to MISC on the store at fp-4 and refuses it"))
			r52_accepted(t, p, n, false);
		close(map);
		return;
	}
	if (shape != R54_ST_W_BPF_ONLY && shape != R54_HELPER_BPF_ONLY) {
		review_refused(t, p, n, 0, map, EACCES, "invalid access to map value");
		close(map);
		return;
	}
	for (f = 0; f < KT_ARRAY_SIZE(flag_values); f++) {
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = vlog, .log_size = sizeof(vlog),
			    .log_level = 1, .prog_flags = flag_values[f]);
		int fd;

		if (!KT_OK(t, progs_set_caps(true), "drop to CAP_BPF + CAP_NET_ADMIN"))
			break;
		vlog[0] = 0;
		fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "review", "GPL", p, n, &opts);
		fd = fd < 0 ? -errno : fd;
		if (!KT_OK(t, progs_set_caps(false), "restore the capabilities"))
			break;
		if (fd >= 0)
			report_effect(t, f, fd, map);
		/* stock: "attempt to corrupt spilled pointer on stack" */
		if (fd >= 0 || (!log_has(vlog, "invalid access to map value") &&
				!log_has(vlog, "attempt to corrupt spilled pointer")))
			check_refused(t, f, fd, "it", EACCES, "invalid access to map value");
	}
	close(map);
}

/*
 * 0052 keeps a precise scalar exact until it changed in two runs in a
 * row, or for BPF_CB_EXACT_RUNS runs. Two counters that a callback adds
 * to in turn (a += 1 if a == b, else b += 1) never change in two runs in
 * a row: each call of the callback is walked exactly for 8 runs before
 * they are widened. Nested @depth deep (each level resets the next
 * level's pair before its bpf_loop(1000)), the walks multiply: about
 * 9^@depth runs where stock walks each callback once. Logs the verdict,
 * processed instructions and the time the loads took; the program is
 * sound, so it should be accepted. Found (0052, a TCG guest under load):
 * depth 3: 95275 instructions, 8.6 s for both loads; depth 4: refused
 * after 1000001 instructions and 210 s of verification (max 210 states
 * per instruction), the second load past the 300 s case timeout; depth
 * 5 and 6 left the guest stuck for 800 s. Stock walks each callback once.
 */
static void review54_alt_nested(struct kt *t, const void *arg)
{
	int depth = (long)arg, d, off, jn, ja;
	struct r09 r = { 0 };
	struct timespec t0, t1;

	/*
	 * The counters the callback compares are precise, so no run covers
	 * another: stock-6.12 refuses depth 2 at 1M instructions (80,612
	 * states) and, with BPF_F_TEST_STATE_FREQ, OOM-kills a 2 GiB guest.
	 */
	if (!only_on_61(t, "walks the callback to E2BIG (and OOM with STATE_FREQ)"))
		return;
	r09_func(&r, 1);
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	for (d = 0; d < 2 * depth; d++)
		r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -8 * (d + 1)));
	r09_loop(&r, 1000, 1, BPF_REG_10, -16 * depth);
	r09_ret0(&r);
	for (d = 1; d <= depth; d++) {
		off = 16 * (d - 1);
		r09_func(&r, 2);
		r09_put(&r, I_MOV64_REG(BPF_REG_6, BPF_REG_2));
		r09_put(&r, I_LDX_DW(BPF_REG_3, BPF_REG_6, off));
		r09_put(&r, I_LDX_DW(BPF_REG_4, BPF_REG_6, off + 8));
		jn = r.i;
		r09_put(&r, ((struct bpf_insn){ BPF_JMP | BPF_JNE | BPF_X, BPF_REG_3, BPF_REG_4, 0, 0 }));
		r09_put(&r, I_ADD64_IMM(BPF_REG_3, 1));
		r09_put(&r, I_STX_DW(BPF_REG_6, BPF_REG_3, off));
		ja = r.i;
		r09_put(&r, I_JA(0));
		r09_land(&r, jn);
		r09_put(&r, I_ADD64_IMM(BPF_REG_4, 1));
		r09_put(&r, I_STX_DW(BPF_REG_6, BPF_REG_4, off + 8));
		r09_land(&r, ja);
		if (d < depth) {
			r09_put(&r, R52_ST(BPF_DW, BPF_REG_6, off + 16, 0));
			r09_put(&r, R52_ST(BPF_DW, BPF_REG_6, off + 24, 0));
			r09_loop(&r, 1000, d + 1, BPF_REG_6, 0);
		}
		r09_ret0(&r);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r09_check(t, &r, R09_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	kt_log(t, "both loads took %.2f s", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/*
 * Eighth review (0056-0058): review56_*. 0056 prunes a later run of a
 * converging callback against an earlier run's state on its path at any
 * instruction, not only at the callback's entry; 0057 keeps a state at
 * every prune point of a callback. The attack: main keeps V in fp-16 (0
 * on the path walked first, 1000 on the other) and S = 0 in fp-24, and
 * runs bpf_loop(4, cb, &S). The callback sets S = 1, so that run 2 does
 * not start as run 1 did, then on a coin takes r6 = 0 (P) or r6 = V read
 * through its context (Q), and at the join writes element 0 at offset
 * r6. Run 2's Q path reaches the join exactly as run 1's P path did (r6
 * = 0) and converges there without backtracking its read of V: if main's
 * state before the call kept V imprecise, the path with V = 1000 would be
 * pruned against it. Not found: run 1's own Q path is pruned against P's
 * state at the join, and that backtracks through the read of V (every
 * scalar of the chain precise). The twin (V = 0 on both paths) loads.
 */
static void r56_lookup0(struct r09 *r, int map, int *null_jump)
{
	struct bpf_insn lm[] = { I_LD_MAP_FD(BPF_REG_1, map) };

	r09_put(r, I_ST_W(BPF_REG_10, -4, 0));
	r09_put(r, I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	r09_put(r, I_ADD64_IMM(BPF_REG_2, -4));
	r09_put(r, lm[0]);
	r09_put(r, lm[1]);
	r09_put(r, I_CALL(BPF_FUNC_map_lookup_elem));
	*null_jump = r->i;
	r09_put(r, I_JEQ_IMM(BPF_REG_0, 0, 0));
}

static void review56_carry(struct kt *t, const void *arg)
{
	int bad = (long)arg, map = elem_array(t, false), jv, jq, jx, jn;
	struct r09 r = { 0 };

	if (map < 0)
		return;
	r09_func(&r, 1);
	r09_put(&r, I_CALL(BPF_FUNC_get_prandom_u32));
	r09_put(&r, I_MOV64_IMM(BPF_REG_7, bad));
	jv = r.i;
	r09_put(&r, I_JGT_IMM(BPF_REG_0, 5, 0));
	r09_put(&r, I_MOV64_IMM(BPF_REG_7, 0));
	r09_land(&r, jv);
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_7, -16));
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 0));
	r09_put(&r, I_STX_DW(BPF_REG_10, BPF_REG_1, -24));
	r09_loop(&r, 4, 1, BPF_REG_10, -24);
	r09_ret0(&r);
	r09_func(&r, 2);
	r09_put(&r, I_MOV64_REG(BPF_REG_7, BPF_REG_2));
	r09_put(&r, I_MOV64_IMM(BPF_REG_1, 1));
	r09_put(&r, I_STX_DW(BPF_REG_7, BPF_REG_1, 0));
	r09_put(&r, I_CALL(BPF_FUNC_get_prandom_u32));
	jq = r.i;
	r09_put(&r, I_JGT_IMM(BPF_REG_0, 5, 0));
	r09_put(&r, I_MOV64_IMM(BPF_REG_6, 0));			/* P */
	jx = r.i;
	r09_put(&r, I_JA(0));
	r09_land(&r, jq);
	r09_put(&r, I_LDX_DW(BPF_REG_6, BPF_REG_7, 8));		/* Q: V */
	r09_land(&r, jx);
	r56_lookup0(&r, map, &jn);				/* the join */
	r09_put(&r, I_ADD64_REG(BPF_REG_0, BPF_REG_6));
	r09_put(&r, R52_ST(BPF_B, BPF_REG_0, 0, 1));
	r09_land(&r, jn);
	r09_ret0(&r);
	r09_check(t, &r, bad ? (struct r09_want){ EACCES, "invalid access to map value" } : R09_OK);
	close(map);
}

/*
 * A sound nested loop that 0056 converges in the middle of a body:
 * bpf_loop(8) whose callback runs bpf_loop(8) of a callback that counts
 * into main's fp-8, then bounds the count (& 15) and reads element 0 at
 * that offset. ours-6.1 loads it at 2,069 instructions; every 6.12
 * kernel refuses it with E2BIG at 1,000,001 (the count is precise, so
 * the inner runs never converge there), hence 6.1 only.
 */
static void review56_nested_sound(struct kt *t, const void *arg)
{
	int map, jn;
	struct r09 r = { 0 };

	if (!only_on_61(t, "walks the precise nested count to E2BIG"))
		return;
	map = elem_array(t, false);
	if (map < 0)
		return;
	r09_func(&r, 1);
	r09_put(&r, R52_ST(BPF_DW, BPF_REG_10, -8, 0));
	r09_loop(&r, 8, 1, BPF_REG_10, -8);
	r09_ret0(&r);
	r09_func(&r, 2);
	r09_put(&r, I_MOV64_REG(BPF_REG_6, BPF_REG_2));
	r09_loop(&r, 8, 2, BPF_REG_6, 0);
	r09_put(&r, I_LDX_DW(BPF_REG_7, BPF_REG_6, 0));
	r56_lookup0(&r, map, &jn);
	r09_put(&r, I_AND64_IMM(BPF_REG_7, 15));
	r09_put(&r, I_ADD64_REG(BPF_REG_0, BPF_REG_7));
	r09_put(&r, I_LDX_B(BPF_REG_1, BPF_REG_0, 0));
	r09_land(&r, jn);
	r09_ret0(&r);
	r09_inc_cb(&r);
	r09_check(t, &r, R09_OK);
	close(map);
}

/*
 * Ninth review (a change to 0056's cb_converged(), not kept): review59_*.
 * The change left the frames of a converging callback's callers
 * unmarked in the earlier state and marked them, without carrying the
 * marks up, in the states between. mark_reg_read() stops at the first
 * parent already marked read, so a read made later on a branch that
 * forks off one of those states never reached the earlier state: main,
 * which takes one of two paths (r6 = 0 first, r6 = 16 or the lock word
 * last) and then bpf_loop(count, cb, &flag), had its second path pruned
 * at the callback's entry. cb returns 0 on one side of a coin (walked
 * first: run 2 converges with run 1) and sets flag = 1 on the other;
 * main uses r6 only when flag == 1. The change accepted all of them (a
 * read 16 bytes into a 16-byte value ran and returned the next
 * element's bytes); every kernel here must refuse them. The twin (r6 =
 * 0 on both paths) loads.
 */
enum r59_use { R59_IDX, R59_SAME, R59_LOCK };
enum r59_helper { R59_LOOP, R59_FOR_EACH, R59_NESTED };

/* The callback: on one side of a coin return 0, on the other *ctx = 1, return 1 */
static void r59_cb(struct r09 *r, int ctx_reg)
{
	int jb;

	r09_func(r, ctx_reg == BPF_REG_4 ? 4 : 2);
	r09_put(r, I_MOV64_REG(BPF_REG_6, ctx_reg));
	r09_put(r, I_CALL(BPF_FUNC_get_prandom_u32));
	jb = r->i;
	r09_put(r, I_JGT_IMM(BPF_REG_0, 100, 0));
	r09_ret0(r);
	r09_land(r, jb);
	r09_put(r, I_MOV64_IMM(BPF_REG_1, 1));
	r09_put(r, I_STX_DW(BPF_REG_6, BPF_REG_1, 0));
	r09_put(r, I_MOV64_IMM(BPF_REG_0, 1));
	r09_put(r, I_EXIT());
}

/* The two paths, the callback's helper (its function @cb), the use */
static void r59_body(struct r09 *r, int map, enum r59_use use, enum r59_helper h, int cb)
{
	int jn, jbig, jjoin, jflag, jn2;

	r56_lookup0(r, map, &jn);
	r09_put(r, I_LDX_W(BPF_REG_7, BPF_REG_0, 0));		/* the count */
	r09_put(r, I_LDX_W(BPF_REG_1, BPF_REG_0, 8));		/* which path */
	r09_put(r, I_MOV64_REG(BPF_REG_8, BPF_REG_0));
	jbig = r->i;
	r09_put(r, I_JEQ_IMM(BPF_REG_1, 1, 0));
	if (use == R59_LOCK) {					/* walked first */
		r09_put(r, I_MOV64_REG(BPF_REG_6, BPF_REG_8));
		r09_put(r, I_ADD64_IMM(BPF_REG_6, 8));
	} else {
		r09_put(r, I_MOV64_IMM(BPF_REG_6, 0));
	}
	jjoin = r->i;
	r09_put(r, I_JA(0));
	r09_land(r, jbig);
	if (use == R59_LOCK) {					/* walked last */
		r09_put(r, I_MOV64_REG(BPF_REG_6, BPF_REG_8));
		r09_put(r, I_ADD64_IMM(BPF_REG_6, 4));
	} else {
		r09_put(r, I_MOV64_IMM(BPF_REG_6, use == R59_IDX ? sizeof(struct elem) : 0));
	}
	r09_land(r, jjoin);
	r09_put(r, R52_ST(BPF_DW, BPF_REG_10, -16, 0));		/* the flag */
	if (h == R59_FOR_EACH) {
		r09_for_each(r, map, cb, BPF_REG_10, -16);
	} else {
		r09_loop_reg(r, BPF_REG_7, cb, BPF_REG_10, -16);
	}
	r09_put(r, I_LDX_DW(BPF_REG_1, BPF_REG_10, -16));
	jflag = r->i;
	r09_put(r, I_JNE_IMM(BPF_REG_1, 1, 0));
	if (use == R59_LOCK) {
		r09_put(r, I_MOV64_IMM(BPF_REG_1, 0x7777));
		r09_put(r, I_STX_W(BPF_REG_6, BPF_REG_1, 0));
	} else {
		r56_lookup0(r, map, &jn2);
		r09_put(r, I_ADD64_REG(BPF_REG_0, BPF_REG_6));
		r09_put(r, I_LDX_B(BPF_REG_0, BPF_REG_0, 0));
		r09_land(r, jn2);
	}
	r09_land(r, jflag);
	r09_land(r, jn);
	r09_ret0(r);
}

static void review59(struct kt *t, const void *arg)
{
	enum r59_use use = (long)arg & 0xf;
	enum r59_helper h = (long)arg >> 4;
	int map = elem_array(t, use == R59_LOCK);
	struct r09 r = { 0 };

	if (map < 0)
		return;
	r09_func(&r, 1);
	if (h == R59_NESTED) {
		/* main: bpf_loop(1, outer, fp-8); the two paths in outer */
		r09_put(&r, R52_ST(BPF_DW, BPF_REG_10, -8, 0));
		r09_loop(&r, 1, 1, BPF_REG_10, -8);
		r09_ret0(&r);
		r09_func(&r, 2);
		r59_body(&r, map, use, R59_LOOP, 2);
		r59_cb(&r, BPF_REG_2);
	} else {
		r59_body(&r, map, use, h, 1);
		r59_cb(&r, h == R59_FOR_EACH ? BPF_REG_4 : BPF_REG_2);
	}
	if (use == R59_SAME)
		r09_check(t, &r, R09_OK);
	else if (use == R59_LOCK)
		r09_check(t, &r, (struct r09_want){ EACCES,
			  "bpf_spin_lock cannot be accessed directly by load/store" });
	else
		r09_check(t, &r, (struct r09_want){ EACCES, "invalid access to map value" });
	close(map);
}

#define R59(use, helper) ((void *)(long)((use) | (helper) << 4))

/*
 * The same through the callback, for a loader with CAP_BPF and without
 * CAP_PERFMON: main leaves fp-24 uninitialised on its second path, and
 * the callback's side that sets the flag reads fp-24 through its context
 * pointer and hands it back. The change accepted it, and its run
 * returned bytes of kernel stack.
 */
static void review59_cb_uninit(struct kt *t, const void *arg)
{
	int map = elem_array(t, false), jn, jbig;
	struct r09 r = { 0 };

	if (map < 0)
		return;
	r09_func(&r, 1);
	r56_lookup0(&r, map, &jn);
	r09_put(&r, I_LDX_W(BPF_REG_7, BPF_REG_0, 0));		/* the count */
	r09_put(&r, I_LDX_W(BPF_REG_1, BPF_REG_0, 8));		/* which path */
	jbig = r.i;
	r09_put(&r, I_JEQ_IMM(BPF_REG_1, 1, 0));
	r09_put(&r, R52_ST(BPF_DW, BPF_REG_10, -24, 0));	/* only on the first */
	r09_land(&r, jbig);
	r09_put(&r, R52_ST(BPF_DW, BPF_REG_10, -16, 0));
	r09_loop_reg(&r, BPF_REG_7, 1, BPF_REG_10, -16);
	r09_put(&r, I_LDX_DW(BPF_REG_0, BPF_REG_10, -16));
	r09_put(&r, I_EXIT());
	r09_land(&r, jn);
	r09_ret0(&r);
	r09_func(&r, 2);
	r09_put(&r, I_MOV64_REG(BPF_REG_6, BPF_REG_2));
	r09_put(&r, I_CALL(BPF_FUNC_get_prandom_u32));
	jbig = r.i;
	r09_put(&r, I_JGT_IMM(BPF_REG_0, 100, 0));
	r09_ret0(&r);
	r09_land(&r, jbig);
	r09_put(&r, I_LDX_DW(BPF_REG_7, BPF_REG_6, -8));	/* main's fp-24 */
	r09_put(&r, I_STX_DW(BPF_REG_6, BPF_REG_7, 0));
	r09_put(&r, I_MOV64_IMM(BPF_REG_0, 1));
	r09_put(&r, I_EXIT());
	if (KT_OK(t, progs_set_caps(true), "drop to CAP_BPF + CAP_NET_ADMIN")) {
		r09_check(t, &r, (struct r09_want){ EACCES, "invalid read from stack" });
		KT_OK(t, progs_set_caps(false), "restore the capabilities");
	}
	free(r.p);
	close(map);
}

/* The 6.1 cases that 6.12 refuses on every kernel (run_on_61()). */
static const struct case_61 leak_demo_61 = {
	leak_demo, NULL,
	"refuses P1 (stock and ours: \"bpf_spin_unlock of different lock\")",
};

static const struct case_61 cb_runs_leak_demo_61 = {
	cb_runs_leak_demo, NULL,
	"refuses both programs (stock and ours: the lock's offset)",
};

static const struct case_61 review_one_budget_61 = {
	review_one_budget, (void *)(2 * BUDGET_BODY),
	"refuses it (stock and ours: EACCES)",
};

static const struct case_61 review_one_budget_twin_61 = {
	review_one_budget, (void *)BUDGET_BODY,
	"refuses it (stock and ours: EACCES)",
};

static const struct case_61 inner_percpu_leak_demo_61 = {
	inner_percpu_leak_demo, NULL,
	"refuses both programs (stock and ours: \"bpf_spin_unlock of different lock\")",
};

static const struct case_61 review51_guard_loop_61 = {
	review51_guard_loop, NULL,
	"refuses it (stock and ours: an unbounded index)",
};

int main(int argc, char **argv)
{
	struct embedded_obj o = EMBEDDED_OBJ(holes);
	/* attacker review of 0025/0026: callbacks, dynptrs, pruning */
	static struct embedded_obj o_cb;
	/* the outside review of 0025-0029 */
	static struct embedded_obj o_rv;
	static const struct kt_case extra[] = {
		{ "prune_reg", KT_BEYOND, prune_refused, (void *)VIA_REG, KT_ON_BASE("6.12", KT_FEATURE) },
		{ "prune_spill", KT_BEYOND, prune_refused, (void *)VIA_SPILL, KT_ON_BASE("6.12", KT_FEATURE) },
		{ "prune_callee", KT_BEYOND, prune_refused, (void *)VIA_CALLEE,
		  KT_ON_BASE("6.12", KT_FEATURE) },
		/* stock refuses this one as well: its loop states are not pruned */
		{ "prune_loop", KT_FEATURE, prune_refused, (void *)VIA_LOOP },
		{ "prune_maybe_null", KT_BEYOND, prune_refused, (void *)VIA_MAYBE_NULL,
		  KT_ON_BASE("6.12", KT_FEATURE) },
		{ "prune_reg_twin", KT_FEATURE, prune_twin_accepted, (void *)VIA_REG },
		{ "prune_maybe_null_twin", KT_FEATURE, prune_twin_accepted, (void *)VIA_MAYBE_NULL },
		{ "prune_spill_twin", KT_FEATURE, prune_twin_accepted, (void *)VIA_SPILL },
		{ "prune_callee_twin", KT_FEATURE, prune_twin_accepted, (void *)VIA_CALLEE },
		{ "prune_loop_twin", KT_FEATURE, prune_twin_accepted, (void *)VIA_LOOP },
		{ "leak_demo", KT_BEYOND, run_on_61, &leak_demo_61, KT_ON_BASE("6.12", KT_COMMON) },
		{ "inner_map_array_lock_refused", KT_BEYOND, inner_map_lock_refused,
		  (void *)BPF_MAP_TYPE_ARRAY_OF_MAPS,
		  KT_ON_BASE("6.12", KT_FEATURE) },
		{ "inner_map_hash_lock_refused", KT_BEYOND, inner_map_lock_refused,
		  (void *)BPF_MAP_TYPE_HASH_OF_MAPS,
		  KT_ON_BASE("6.12", KT_FEATURE) },
		{ "inner_map_same_layout", KT_COMMON, inner_map_same_layout,
		  (void *)BPF_MAP_TYPE_ARRAY_OF_MAPS },
		{ "iter_store_lock_word", KT_BEYOND, iter_write, &iter_store_lock,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "iter_add_lock_word", KT_BEYOND, iter_write, &iter_add_lock,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "iter_store_cnt", KT_COMMON, iter_write, &iter_store_cnt },
		{ "iter_store_data", KT_COMMON, iter_write, &iter_store_data },
		/* an attacker's review of the 6.12 port: bpf_snprintf() writes
		 * without MEM_WRITE; a .rodata map, whose values the verifier
		 * folds into its readers
		 */
		{ "iter_snprintf_lock_word", KT_BEYOND, iter_write, &iter_snprintf_lock,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "iter_store_rodata", KT_BEYOND, iter_write, &iter_rodata,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_of_tracing_refused", KT_BEYOND, ext_of_tracing_refused,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_struct_size_refused", KT_BEYOND, ext_arg_match, &ext_arg_wide_case,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_struct_size_twin", KT_COMMON, ext_arg_match, &ext_arg_same_case },
		{ "ext_arg_tag_refused", KT_BEYOND, ext_arg_match, &ext_arg_nonnull_case,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_kprobe_ctx_as_memory_refused", KT_BEYOND, ext_arg_match, &ext_kp_ctx_case,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_kprobe_memory_as_ctx_refused", KT_BEYOND, ext_arg_match, &ext_kp_mem_case,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_tracing_ctx_refused", KT_BEYOND, ext_arg_match, &ext_tp_ctx_case,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_ctx_declared_short_twin", KT_COMMON, ext_arg_match, &ext_ctx_short_case },
		{ "ext_of_locked_static_refused", KT_FEATURE, ext_arg_match, &ext_lk_case },
		{ "ext_syscall_ctx_past_target_refused", KT_BEYOND, ext_run_attach, &ext_run_sys,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_cgroup_storage_not_target_refused", KT_BEYOND, ext_run_attach, &ext_run_cg,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_socket_filter_cb_refused", KT_BEYOND, ext_run_attach, &ext_run_sf,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_socket_filter_twin", KT_COMMON, ext_run_attach, &ext_run_sf_twin },
		{ "ext_writable_tp_past_buffer_refused", KT_BEYOND, ext_run_attach, &ext_run_tpw,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "ext_changes_pkt_data_refused", KT_BEYOND, ext_run_attach, &ext_run_pk,
		  KT_ON_BASE("6.12", KT_COMMON) },
		{ "ext_tag_ctx_untagged_twin", KT_COMMON, ext_arg_match, &ext_tag_ctx_case },
		{ "ext_tag_nonnull_checked_twin", KT_COMMON, ext_arg_match, &ext_tag_nonnull_case },
		{ "ext_tag_trusted_wider_twin", KT_COMMON, ext_arg_match, &ext_tag_trusted_case },
		{ "cb_runs_leak_demo", KT_BEYOND, run_on_61, &cb_runs_leak_demo_61, KT_ON_BASE("6.12", KT_COMMON) },
		/* the outside review of 0025-0029; the rest in holes_review.bpf.c */
		{ "review_linked_scalars", KT_BEYOND, review_linked_scalars, (void *)1,
		  KT_ON_BASE("6.12", KT_FEATURE) },
		{ "review_linked_scalars_twin", KT_COMMON, review_linked_scalars, NULL },
		{ "review_one_budget", KT_BEYOND, run_on_61, &review_one_budget_61, KT_ON_BASE("6.12", KT_COMMON) },
		{ "review_one_budget_twin", KT_BEYOND, run_on_61, &review_one_budget_twin_61, KT_ON_BASE("6.12", KT_COMMON) },
		{ "review_cb_args_pruned", KT_BEYOND, review_cb_args_pruned,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "review_caller_loop_converges", KT_COMMON, review_caller_loop_converges,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "review_caller_loop_reset", KT_COMMON, review_caller_loop_reset,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "review_cmpxchg_reads_caller", KT_BEYOND, review_cmpxchg_reads_caller,
		  KT_ON_BASE("6.12", KT_COMMON) },
		/* attacker review of patches/6.12 0009: verdicts per kernel inside */
		{ "review09_cb_ends_loop_done", KT_COMMON, review09_cb_ends_loop, (void *)1 },
		{ "review09_cb_ends_loop_counter", KT_COMMON, review09_cb_ends_loop, NULL },
		{ "review09_bounded_caller_loop", KT_COMMON, review09_bounded_caller_loop },
		{ "review09_nested2", KT_COMMON, review09_nested, R09_NEST(2, 0, 0) },
		{ "review09_nested3_body40", KT_COMMON, review09_nested, R09_NEST(3, 40, 0) },
		{ "review09_nested3_set5", KT_COMMON, review09_nested, R09_NEST(3, 40, 1) },
		{ "review09_nested5_set5", KT_COMMON, review09_nested, R09_NEST(5, 40, 1) },
		{ "review09_nested7_set5_body2000", KT_COMMON, review09_nested,
		  R09_NEST(7, 2000, 1) },
		{ "review09_nested2_set5_big", KT_COMMON, review09_nested,
		  R09_NEST(2, R09_BIG_BODY, 1) },
		{ "review09_caller_loop_in_cb", KT_COMMON, review09_caller_loop_in_cb },
		{ "review09_subprog_in_caller_loop", KT_COMMON, review09_subprog_in_caller_loop },
		{ "review09_for_each_in_caller_loop", KT_COMMON, review09_for_each_in_caller_loop },
		{ "review09_loop_in_for_each", KT_COMMON, review09_loop_in_for_each },
		{ "review09_reset_for_each", KT_COMMON, review09_reset_elsewhere, (void *)0 },
		{ "review09_reset_in_cb", KT_COMMON, review09_reset_elsewhere, (void *)1 },
		{ "review09_reset_in_subprog", KT_COMMON, review09_reset_elsewhere, (void *)2 },
		{ "review09_toggle", KT_COMMON, review09_toggle },
		{ "review09_iter_around_loop", KT_COMMON, review09_iter_around_loop },
		{ "inner_percpu_leak_demo", KT_BEYOND, run_on_61, &inner_percpu_leak_demo_61, KT_ON_BASE("6.12", KT_COMMON) },
		/* fifth review (0050, 0051): findings, red until fixed */
		{ "review51_pruned_before_store", KT_COMMON, review51_pruned_before_store },
		{ "review50_zero_covers_narrowed_spill", KT_COMMON,
		  review50_zero_covers_narrowed_spill },
		/* and what they handle */
		{ "review50_guard_misc", KT_COMMON, review50_guard, (void *)1 },
		{ "review50_guard_zero", KT_COMMON, review50_guard, NULL },
		{ "review51_guard_subprog", KT_COMMON, review51_guard_subprog },
		/* stock walks the callback once, from fp-8 = 0: accepted */
		{ "review51_guard_loop", KT_BEYOND, run_on_61, &review51_guard_loop_61, KT_ON_BASE("6.12", KT_COMMON) },
		/* sixth review (0052, 0053): guards; stock walks a callback
		 * once and accepts the two beyond ones (a 4-byte counter, a
		 * toggle by BPF_ST through the context pointer)
		 */
		{ "review52_narrow_lo", KT_COMMON, review52_pruned, (void *)R52_NARROW_LO },
		{ "review52_narrow_hi", KT_COMMON, review52_pruned, (void *)R52_NARROW_HI },
		{ "review52_narrow_h", KT_COMMON, review52_pruned, (void *)R52_NARROW_H },
		{ "review52_partial_spill", KT_COMMON, review52_pruned, (void *)R52_PARTIAL },
		{ "review52_byte_spill", KT_COMMON, review52_pruned, (void *)R52_BYTE },
		{ "review52_partial_zero_half", KT_COMMON, review52_pruned,
		  (void *)R52_PARTIAL_ZERO_HALF },
		{ "review52_cb_counter", KT_COMMON, review52_cb_counter, NULL },
		/* stock-6.12 loads them too: 6.12 converges the callback */
		{ "review52_cb_counter_narrow", KT_BEYOND, review52_cb_counter, (void *)1,
		  KT_ON_BASE("6.12", KT_COMMON) },
		{ "review52_cb_st_toggle", KT_BEYOND, review52_cb_st_toggle, (void *)1,
		  KT_ON_BASE("6.12", KT_COMMON) },
		{ "review52_cb_st_toggle_w", KT_COMMON, review52_cb_st_toggle, NULL },
		{ "review52_subprog_st_zero", KT_COMMON, review52_subprog_st_zero },
		{ "review52_via_ptr", KT_COMMON, review52_pruned, (void *)R52_VIA_PTR },
		{ "review52_cb_partial_counter", KT_COMMON, review52_cb_partial_counter },
		/* sixth review: compatibility, red on 0052 until fixed */
		{ "review52_two_st_w_zero", KT_COMMON, review52_two_st_w_zero },
		{ "review52_bpf_only_zero_then_field", KT_COMMON,
		  review52_bpf_only_zero_then_field, NULL },
		{ "review52_bpf_only_st_zero_then_field", KT_COMMON,
		  review52_bpf_only_zero_then_field, (void *)1 },
		/* seventh review (0052-0054): a zero stored beside a narrower
		 * spilled zero hides the spill from backtracking (finding,
		 * red until fixed); the twin is accepted
		 */
		{ "review54_beside_zero_st_w", KT_COMMON, review54_beside_zero, (void *)R54_ST_W },
		{ "review54_beside_zero_stx_w", KT_COMMON, review54_beside_zero,
		  (void *)R54_STX_W },
		{ "review54_beside_zero_st_h", KT_COMMON, review54_beside_zero, (void *)R54_ST_H },
		{ "review54_beside_zero_bpf_only", KT_COMMON, review54_beside_zero,
		  (void *)R54_ST_W_BPF_ONLY },
		{ "review54_beside_zero_helper_bpf_only", KT_COMMON, review54_beside_zero,
		  (void *)R54_HELPER_BPF_ONLY },
		/* 0052: exact runs multiply through nested callbacks: depth 3
		 * takes seconds, depth 4 minutes of verification and 1M
		 * instructions (refused; red until fixed); stock-6.1 is
		 * instant. 6.1 only, as the twin (see only_on_61())
		 */
		{ "review54_alt_nested2", KT_COMMON, review54_alt_nested, (void *)2 },
		{ "review54_alt_nested3", KT_COMMON, review54_alt_nested, (void *)3 },
		{ "review54_alt_nested4", KT_COMMON, review54_alt_nested, (void *)4 },
		{ "review54_beside_zero_twin", KT_COMMON, review54_beside_zero, (void *)R54_TWIN },
		/* eighth review (0056-0058): a later run converging where an
		 * earlier run left a value imprecise (not found); the twin and a
		 * sound nested loop load
		 */
		{ "review56_carry", KT_COMMON, review56_carry, (void *)1000 },
		{ "review56_carry_twin", KT_COMMON, review56_carry, NULL },
		{ "review56_nested_sound", KT_COMMON, review56_nested_sound },
		{ "review59_idx", KT_COMMON, review59, R59(R59_IDX, R59_LOOP) },
		{ "review59_idx_twin", KT_COMMON, review59, R59(R59_SAME, R59_LOOP) },
		{ "review59_idx_for_each", KT_COMMON, review59, R59(R59_IDX, R59_FOR_EACH) },
		{ "review59_idx_nested", KT_COMMON, review59, R59(R59_IDX, R59_NESTED) },
		{ "review59_lock_word", KT_FEATURE, review59, R59(R59_LOCK, R59_LOOP) },
		{ "review59_cb_uninit", KT_COMMON, review59_cb_uninit },
	};
	struct kt_case *cases, *cb_cases, *rv_cases, *c612_cases;
	struct embedded_obj o_612 = EMBEDDED_OBJ(holes612);
	int n, n_cb, n_rv, n_612, i;

	o_cb = EMBEDDED_OBJ(holes_cb);
	o_rv = EMBEDDED_OBJ(holes_review);
	n = annotated_cases(&o, &cases);
	n_cb = annotated_cases(&o_cb, &cb_cases);
	n_rv = annotated_cases(&o_rv, &rv_cases);
	n_612 = annotated_cases(&o_612, &c612_cases);
	if (n < 0 || n_cb < 0 || n_rv < 0 || n_612 < 0) {
		fprintf(stderr, "cannot read the programs of %s\n",
			n < 0 ? o.name : n_cb < 0 ? o_cb.name : n_rv < 0 ? o_rv.name : o_612.name);
		return 1;
	}
	cases = realloc(cases, (n + n_cb + n_rv + n_612 + KT_ARRAY_SIZE(extra)) *
			       sizeof(*cases));
	for (i = 0; i < n_cb; i++)
		cases[n++] = cb_cases[i];
	for (i = 0; i < n_rv; i++)
		cases[n++] = rv_cases[i];
	for (i = 0; i < n_612; i++)
		cases[n++] = c612_cases[i];
	for (i = 0; i < (int)KT_ARRAY_SIZE(extra); i++)
		cases[n++] = extra[i];
	return kt_main(argc, argv, "holes", cases, n);
}
