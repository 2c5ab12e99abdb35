// SPDX-License-Identifier: GPL-2.0
/*
 * A verifier fuzzer for bpf_spin_lock: random tc programs built around
 * lock and unlock of the elements of a 4-element array whose value is
 * { int cnt; struct bpf_spin_lock lock; int data[2]; } (hand-made BTF).
 *
 * Ingredients: 2-4 element pointers (lookups of constant keys, or of a
 * key read from the packet, so the element is unknown to the verifier),
 * branches on run-time data (skb->len, packet bytes, a map field, the
 * iteration of a bounded loop), pointer moves between registers and
 * elements, spills and fills, static subprograms (lock and unlock inside,
 * pointers or a stack slot passed as arguments), bpf_for_each_map_elem
 * callbacks that lock their value or the caller's element, bounded loops
 * and stores into the lock word.
 *
 * Pairs (0022): where the kernel has the kfuncs bpf_spin_lock_pair() and
 * bpf_spin_unlock_pair() (their ids found in vmlinux BTF), the same places
 * also take and release two elements at once: regions and pruning shapes
 * around lock_pair(a, b), whose b may be a itself or another pointer to
 * a's element, closed by unlock_pair(a, b), unlock_pair(b, a), one with a
 * wrong pointer, or a single unlock; lone lock_pair and unlock_pair among
 * single locks; subprogram and callback bodies that pair their two
 * pointers (a callback: its value and the caller's slot 0), some mixed
 * with a single lock or unlock, some with a PRUNE move. On kernels
 * without the kfuncs (or with BPFLOCK_FUZZ_PAIRS=0) no pair op is drawn
 * and every seed gives the programs it gave before pairs existed.
 *
 * The generator knows what it generated: for every path (every value of
 * the branch variables and of the unknown keys) it replays the program on a
 * model of the locks, by element (what happens at run time), not by the
 * verifier's ids. A program is unsound if some path takes a lock or a
 * pair while holding one, releases a lock it does not hold or another
 * element's, releases one lock of a held pair, releases a pair that is
 * not the held one (as a set of elements: {e, e} is e alone) or while
 * holding one lock, leaves any frame (program, subprogram, callback)
 * holding a lock or a pair, or writes the lock word. On 6.12 a static
 * subprogram may return holding a lock it took (6.12's rule: its caller
 * unlocks it), so only the program and callbacks are frames to leave. Each program is
 * verified twice, with default flags and with BPF_F_TEST_STATE_FREQ.
 * Findings:
 *   (a) the two verdicts differ;
 *   (b) an unsound program is accepted (never run: it would hang a CPU).
 * Sound programs the verifier refuses are counted by the verifier's
 * message ("over-rejections": the verifier is conservative), not failed.
 * Accepted sound programs are run once per branch path (skb->len, packet
 * bytes and a map field carry the branch variables, packet bytes the unknown
 * keys) and every element's counter must move by exactly what the model
 * says.
 *
 * BPFLOCK_FUZZ_SEED picks the programs (default fixed), BPFLOCK_FUZZ_N
 * how many (default 1500 scaled by BPFLOCK_SCALE), BPFLOCK_FUZZ_FIRST the
 * index of the first one: program i depends only on the seed, i and
 * whether pair ops are drawn, so a finding reported as "program i" is
 * reproduced alone (on a kernel of the same kind) with
 *   BPFLOCK_FUZZ_SEED=<seed> BPFLOCK_FUZZ_FIRST=i BPFLOCK_FUZZ_N=1 fuzz verdicts
 * (BPFLOCK_FUZZ_VERBOSE=1 prints every program, its verdicts and the
 * verifier's last line.) A longer campaign on demand:
 *   make vm-run KERNEL=ours RUN='BPFLOCK_FUZZ_N=20000 BPFLOCK_FUZZ_SEED=7 /tests/bin/fuzz'
 * In the TCG guest a program takes about 3 ms in "verdicts" and 4 ms in
 * "runs" (with pairs); past 70000 programs raise BPFLOCK_TEST_TIMEOUT
 * (300 s a case).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "insn.h"
#include "progs.h"

#define NR_ELEMS 4
#define LOCK_OFF 4
#define DATA_OFF 8
#define NR_BITS 4		/* branch variables: 16 paths */
#define NR_PATHS (1u << NR_BITS)
#define MAX_PTRS 4		/* in r6..r9 */
#define MAX_UNKNOWN 2		/* pointers whose key comes from the packet */
#define NR_SLOTS 2
#define MAX_OPS 64
#define MAX_INSNS 4096

/* A call of the kfunc whose vmlinux BTF id is 'id'. */
#define I_KFUNC(id)	((struct bpf_insn){ BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, id })

/* Stack of the main program. */
#define FP_CTX (-8)
#define FP_SLOT(s) (-16 - 8 * (s))
#define FP_ITER (-32)
#define FP_PKT (-40)
#define FP_KEY (-48)
#define FP_MOVE (-56)		/* a PRUNE callback's move flag */

/* The packet: keys of unknown pointers, then one byte per branch bit. */
#define PKT_KEY 16
#define PKT_BIT 24
#define PKT_NEED 32
#define PKT_BASE 64		/* skb->len = PKT_BASE + 0..15 */

enum op_kind {
	OP_LOCK, OP_UNLOCK, OP_INC, OP_MOV, OP_SPILL, OP_FILL,
	OP_IF, OP_ELSE, OP_END,		/* IF cond { ... } [ELSE { ... }] END */
	OP_LOOP, OP_LOOP_END,		/* LOOP n { ... } LOOP_END */
	OP_CALL, OP_FOREACH, OP_WLOCK,
	OP_PLOCK, OP_PUNLOCK,		/* lock_pair(a, b), unlock_pair(a, b) */
};

/*
 * Where a branch takes its bit from: one of the program's variables, a
 * bit of skb->len, of a packet byte or of an element's d0 (distinct
 * variables never share a bit: the verifier could not know they agree),
 * or the iteration of the enclosing loop.
 */
enum cond_src { SRC_LEN, SRC_PKT, SRC_FIELD, NR_INPUTS, SRC_ITER = NR_INPUTS };

/*
 * Bodies of subprograms and callbacks on a pair of pointers p, q (in r6,
 * r7; the move flag in r8): lock_pair(p, q), inc p, then unlock_pair(p, q),
 * unlock_pair(q, p) (SWAP, inc q), or all on (p, p) (SELF); lock_pair
 * alone, unlock_pair alone; lock_pair then unlock(p) (L_U); lock(p) then
 * unlock_pair (L1_U); PRUNE: lock_pair(p, q), if the flag make q the
 * first pointer, inc and unlock_pair through it and q.
 */
enum pair_body {
	PB_LIU, PB_LIU_SWAP, PB_LIU_SELF, PB_L, PB_U, PB_L_U, PB_L1_U, PB_PRUNE_A, PB_PRUNE_B,
	NR_PBS
};

/*
 * Static subprograms; r1 and r2 are element pointers (SUB_SLOT: &slot 0),
 * r3 says whether to move. PRUNE: lock r1, if r3 make r2 the pointer,
 * unlock it; A has the move on the arm the verifier walks first (the
 * fall-through), B on the one it walks second (the jump target).
 * SUB_PAIR + b: pair body b on (r1, r2).
 */
enum sub_body {
	SUB_LIU, SUB_L, SUB_U, SUB_L_U2, SUB_SLOT_LIU, SUB_WLOCK, SUB_PRUNE_A, SUB_PRUNE_B,
	SUB_PAIR, NR_SUBS = SUB_PAIR + NR_PBS
};
/*
 * bpf_for_each_map_elem callbacks: r3 is the element, r4 the caller's
 * &slot 0 (and the caller's move flag 40 bytes below). PRUNE: lock the
 * element, on the flag make another copy of it (SELF) or the caller's
 * slot 0 (CTX) the pointer, unlock it. CB_PAIR + b: pair body b on (the
 * element, the caller's slot 0).
 */
enum cb_body {
	CB_INC, CB_LIU, CB_L, CB_U, CB_CTX_LIU, CB_WLOCK,
	CB_PRUNE_SELF_A, CB_PRUNE_SELF_B, CB_PRUNE_CTX_A, CB_PRUNE_CTX_B,
	CB_PAIR, NR_CBS = CB_PAIR + NR_PBS
};
#define NR_BODIES NR_CBS

/*
 * Operands: LOCK/UNLOCK/INC a = pointer; PLOCK/PUNLOCK a, b = pointers;
 * MOV a = b; SPILL slot a = ptr b; FILL ptr a = slot b; IF a = source,
 * b = bit (or iteration), c = the bit value that runs the THEN arm, d =
 * pointer read (SRC_FIELD); LOOP a = n; CALL a = body, b, c = arguments;
 * FOREACH a = body; WLOCK a = ptr, b = how. IF a = SRC_ITER: b =
 * iteration; a = 0: b = variable. PRUNE bodies move when variable d
 * equals e.
 */
struct op {
	unsigned char kind, a, b, c, d, e;
};

struct fprog {
	int np;			/* pointers, r6.. */
	int key[MAX_PTRS];	/* constant key, or -1: read from the packet */
	struct { int src, bit; } var[NR_BITS];	/* branch variables */
	struct op op[MAX_OPS];
	int match[MAX_OPS];	/* IF -> its ELSE or END, ELSE -> END, LOOP -> LOOP_END */
	int nop;
};

/* One path: the variables (bit i: variable i) and the unknown keys. */
struct path {
	unsigned int bits;
	int ukey[MAX_PTRS];
};

/* ---- the generator ---- */

static unsigned long long rng;
static bool pairs;		/* draw pair ops: the kernel has the kfuncs */
static bool sub_may_keep_lock;	/* 6.12: a subprogram may return holding a lock */

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng >> 11) % n;
}

static unsigned long long mix64(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int rptr(const struct fprog *p)
{
	return rnd(p->np);
}

static void push(struct fprog *p, int kind, int a, int b, int c, int d)
{
	if (p->nop < MAX_OPS)
		p->op[p->nop] = (struct op){ kind, a, b, c, d };
	p->nop++;	/* past MAX_OPS: generate() draws again */
}

/* Straight-line filler, no locks. */
static void gen_filler(struct fprog *p, int n)
{
	while (n--) {
		switch (rnd(6)) {
		case 0:
		case 1: {
			int d = rptr(p);

			push(p, OP_MOV, d, (d + 1 + rnd(p->np - 1)) % p->np, 0, 0);
			break;
		}
		case 2:
			push(p, OP_SPILL, rnd(NR_SLOTS), rptr(p), 0, 0);
			break;
		case 3:
			push(p, OP_FILL, rptr(p), rnd(NR_SLOTS), 0, 0);
			break;
		default:
			push(p, OP_INC, rptr(p), 0, 0, 0);
		}
	}
}

/*
 * IF on a variable; in a loop sometimes on the iteration number. The
 * variables tested by the enclosing IFs are avoided: a nested IF on one
 * of them would have an arm that only the model knows to be dead.
 */
static unsigned int open_vars;
static int open_stack[MAX_OPS], open_sp;

static void gen_cond(struct fprog *p, int loop_n)
{
	int v = rnd(NR_BITS), tries = 0;

	while ((open_vars & (1u << v)) && tries++ < NR_BITS)
		v = (v + 1) % NR_BITS;
	if (loop_n && (!rnd(3) || (open_vars & (1u << v)))) {
		push(p, OP_IF, SRC_ITER, rnd(loop_n), rnd(2), 0);
		open_stack[open_sp++] = 0;
	} else {
		push(p, OP_IF, 0, v, rnd(2), rptr(p));
		open_stack[open_sp++] = 1u << v;
		open_vars |= 1u << v;
	}
}

static void gen_end(struct fprog *p)
{
	push(p, OP_END, 0, 0, 0, 0);
	open_vars &= ~open_stack[--open_sp];
}

static void gen_block(struct fprog *p, int depth, int loop_n);

static bool var_taken(const struct fprog *p, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (p->var[j].src == p->var[i].src && p->var[j].bit == p->var[i].bit)
			return true;
	return false;
}

static void gen_vars(struct fprog *p)
{
	int i;

	for (i = 0; i < NR_BITS; i++) {
		do {
			p->var[i].src = rnd(NR_INPUTS);
			p->var[i].bit = rnd(NR_BITS);
		} while (var_taken(p, i));
	}
}

static void gen_if(struct fprog *p, int depth, int loop_n)
{
	gen_cond(p, loop_n);
	gen_block(p, depth + 1, loop_n);
	if (rnd(2)) {
		push(p, OP_ELSE, 0, 0, 0, 0);
		gen_block(p, depth + 1, loop_n);
	}
	gen_end(p);
}

static void gen_loop(struct fprog *p, int depth)
{
	int n = 1 + rnd(3);

	push(p, OP_LOOP, n, 0, 0, 0);
	gen_block(p, depth + 1, n);
	push(p, OP_LOOP_END, 0, 0, 0, 0);
}

/* A pair body; those unsound by themselves half as often. */
static int gen_pair_body(void)
{
	int b = rnd(NR_PBS);

	if ((b == PB_L || b == PB_U || b == PB_L_U || b == PB_L1_U) && rnd(2))
		b = rnd(NR_PBS);
	return b;
}

/*
 * Bodies that are unsound by themselves are drawn half as often. With
 * pairs, a quarter of the subprograms and callbacks have a pair body.
 */
static void gen_call(struct fprog *p)
{
	int sub = rnd(SUB_PAIR), cb = rnd(CB_PAIR);

	if ((sub == SUB_L || sub == SUB_U || sub == SUB_WLOCK) && rnd(2))
		sub = rnd(SUB_PAIR);
	if ((cb == CB_L || cb == CB_U || cb == CB_WLOCK) && rnd(2))
		cb = rnd(CB_PAIR);
	if (pairs && !rnd(4))
		sub = SUB_PAIR + gen_pair_body();
	if (pairs && !rnd(4))
		cb = CB_PAIR + gen_pair_body();
	if (rnd(2))
		push(p, OP_CALL, sub, rptr(p), rptr(p), rnd(NR_BITS));
	else
		push(p, OP_FOREACH, cb, 0, 0, rnd(NR_BITS));
	if (p->nop <= MAX_OPS)
		p->op[p->nop - 1].e = rnd(2);
}

/* The other pointer of a pair with r: sometimes r, or one with r's key. */
static int gen_partner(const struct fprog *p, int r)
{
	int i, pick = rnd(6);

	if (pick == 0)
		return r;
	if (pick == 1)
		for (i = 0; i < p->np; i++)
			if (i != r && p->key[i] >= 0 && p->key[i] == p->key[r])
				return i;
	return (r + 1 + rnd(p->np - 1)) % p->np;
}

/* lock(r), or lock_pair(r, r2) when r2 >= 0 */
static void gen_take(struct fprog *p, int r, int r2)
{
	if (r2 < 0)
		push(p, OP_LOCK, r, 0, 0, 0);
	else
		push(p, OP_PLOCK, r, r2, 0, 0);
}

/*
 * The release closing a region. One lock: unlock it, sometimes through
 * another pointer; with pairs, sometimes unlock_pair(it, it or another).
 * A pair: unlock_pair of it, of it swapped, with a wrong pointer, a
 * single unlock of one of its pointers, or unlock_pair of it in a
 * subprogram (the frame rule).
 */
static void gen_release(struct fprog *p, int r, int r2)
{
	int u = r2 < 0 && !rnd(6) ? rptr(p) : r, v;

	if (r2 < 0) {
		if (pairs && !rnd(16)) {
			v = rnd(2) ? u : rptr(p);
			push(p, OP_PUNLOCK, u, v, 0, 0);
		} else {
			push(p, OP_UNLOCK, u, 0, 0, 0);
		}
		return;
	}
	switch (rnd(9)) {
	case 0 ... 3:
		push(p, OP_PUNLOCK, r, r2, 0, 0);
		break;
	case 4 ... 5:
		push(p, OP_PUNLOCK, r2, r, 0, 0);
		break;
	case 6:
		v = rptr(p);
		if (rnd(2))
			push(p, OP_PUNLOCK, v, r2, 0, 0);
		else
			push(p, OP_PUNLOCK, r, v, 0, 0);
		break;
	case 7:
		push(p, OP_UNLOCK, rnd(2) ? r : r2, 0, 0, 0);
		break;
	default:
		push(p, OP_CALL, SUB_PAIR + PB_U, r, r2, 0);
	}
}

/*
 * lock ... unlock (with pairs, a quarter of the time lock_pair ...
 * unlock_pair, with a call among the filler) around filler and branches
 * without locks of their own
 */
static void gen_region(struct fprog *p, int depth, int loop_n)
{
	int r = rptr(p), n = rnd(3), r2 = pairs && !rnd(4) ? gen_partner(p, r) : -1;

	gen_take(p, r, r2);
	while (n--) {
		if (!rnd(3) && depth < 3) {
			gen_cond(p, loop_n);
			gen_filler(p, rnd(3));
			if (rnd(2)) {
				push(p, OP_ELSE, 0, 0, 0, 0);
				gen_filler(p, 1 + rnd(2));
			}
			gen_end(p);
		} else if (r2 >= 0 && !rnd(6)) {
			gen_call(p);
		} else {
			gen_filler(p, 1);
		}
	}
	gen_release(p, r, r2);
}

/* A lone lock or unlock; with pairs, a quarter of them of a pair. */
static void gen_lone(struct fprog *p)
{
	int r, r2, kind;

	if (pairs && !rnd(4)) {
		kind = rnd(2) ? OP_PLOCK : OP_PUNLOCK;
		r = rptr(p);
		r2 = gen_partner(p, r);
		push(p, kind, r, r2, 0, 0);
		return;
	}
	push(p, rnd(2) ? OP_LOCK : OP_UNLOCK, rptr(p), 0, 0, 0);
}

static void gen_block(struct fprog *p, int depth, int loop_n)
{
	int n = 1 + rnd(3);

	while (n-- && p->nop < MAX_OPS - 16) {
		unsigned int c = rnd(24);

		if (c < 4)
			gen_region(p, depth, loop_n);
		else if (c < 5)
			gen_lone(p);
		else if (c < 9 && depth < 3)
			gen_if(p, depth, loop_n);
		else if (c < 11 && !loop_n && depth < 2)
			gen_loop(p, depth);
		else if (c < 13)
			gen_call(p);
		else if (c < 14 && !rnd(3))
			push(p, OP_WLOCK, rptr(p), rnd(5), 0, 0);
		else
			gen_filler(p, 1);
	}
}

/*
 * The shape that hides a held lock from pruning: lock through one
 * register; on the arm explored second (ELSE: the jump target) make the
 * unlock register, or the slot it is filled from, point elsewhere; join;
 * unlock. Sometimes inside a loop, sometimes with the lock and unlock in
 * a callee or a callback around it. With pairs, a quarter of them lock a
 * pair and move either of its registers.
 */
static void gen_prune(struct fprog *p)
{
	int r = rptr(p), loop = rnd(4) ? 0 : 1 + rnd(3);
	int r2 = pairs && !rnd(4) ? gen_partner(p, r) : -1;
	int moved = r2 >= 0 && rnd(2) ? r2 : r;

	gen_filler(p, rnd(3));
	if (loop)
		push(p, OP_LOOP, loop, 0, 0, 0);
	gen_take(p, r, r2);
	gen_cond(p, loop);
	gen_filler(p, rnd(3));
	if (rnd(4)) {
		push(p, OP_ELSE, 0, 0, 0, 0);
		gen_filler(p, rnd(2));
		switch (rnd(4)) {
		case 0:
			push(p, OP_MOV, moved, rptr(p), 0, 0);
			break;
		case 1:
			push(p, OP_FILL, moved, rnd(NR_SLOTS), 0, 0);
			break;
		}
		gen_filler(p, rnd(2));
	}
	gen_end(p);
	if (!rnd(4))
		push(p, OP_FILL, rptr(p), rnd(NR_SLOTS), 0, 0);
	if (rnd(2))
		push(p, OP_INC, r, 0, 0, 0);
	gen_release(p, r, r2);
	if (loop)
		push(p, OP_LOOP_END, 0, 0, 0, 0);
	if (!rnd(4))
		gen_call(p);
	gen_filler(p, rnd(2));
}

/* Subprograms and callbacks between filler, some under a branch. */
static void gen_calls(struct fprog *p)
{
	int n = 1 + rnd(3);

	gen_filler(p, rnd(2));
	while (n--) {
		if (!rnd(3)) {
			gen_cond(p, 0);
			gen_call(p);
			gen_end(p);
		} else {
			gen_call(p);
		}
		gen_filler(p, rnd(2));
	}
	if (rnd(2))
		gen_region(p, 1, 0);
}

/* Pairs each IF, ELSE and LOOP with the op that closes it. */
static void link_blocks(struct fprog *p)
{
	int stack[MAX_OPS], sp = 0, i;

	for (i = 0; i < p->nop; i++) {
		p->match[i] = -1;
		switch (p->op[i].kind) {
		case OP_IF:
		case OP_LOOP:
			stack[sp++] = i;
			break;
		case OP_ELSE:
			p->match[stack[sp - 1]] = i;
			stack[sp - 1] = i;
			break;
		case OP_END:
		case OP_LOOP_END:
			p->match[stack[--sp]] = i;
			break;
		}
	}
}

static bool key_taken(const struct fprog *p, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (p->key[j] == p->key[i])
			return true;
	return false;
}

static void generate(struct fprog *p, unsigned long long seed)
{
	int i, tries, unknown;

	rng = seed | 1;
again:
	memset(p, 0, sizeof(*p));
	open_vars = 0;
	open_sp = 0;
	unknown = 0;
	p->np = 2 + rnd(MAX_PTRS - 1);
	gen_vars(p);
	for (i = 0; i < p->np; i++) {
		if (unknown < MAX_UNKNOWN && !rnd(4)) {
			p->key[i] = -1;
			unknown++;
			continue;
		}
		/* mostly distinct keys: two lookups of one key are two locks */
		p->key[i] = rnd(NR_ELEMS);
		for (tries = 0; tries < 3 && key_taken(p, i); tries++)
			p->key[i] = rnd(NR_ELEMS);
	}
	switch (rnd(20)) {
	case 0 ... 8:
		gen_prune(p);
		break;
	case 9 ... 12:
		gen_calls(p);
		break;
	default:
		gen_block(p, 0, 0);
		gen_block(p, 0, 0);
	}
	if (p->nop > MAX_OPS)
		goto again;
	link_blocks(p);
}

/* ---- the model: replay one path ---- */

enum why {
	SOUND, WHY_TWICE, WHY_SECOND, WHY_UNHELD, WHY_OTHER, WHY_PAIR_HALF, WHY_PAIR_OF_ONE,
	WHY_EXIT, WHY_SUB_EXIT, WHY_CB_EXIT, WHY_WORD, NR_WHYS
};

static const char *const why_names[] = {
	"sound", "locks the element it holds", "takes a second lock",
	"releases a lock it does not hold", "releases another element's lock",
	"releases one lock of the pair it holds", "releases a pair while holding one lock",
	"returns holding a lock", "a subprogram returns holding a lock it took",
	"a callback returns holding a lock", "writes the lock word",
};

struct model {
	int reg[MAX_PTRS];	/* element each pointer register points to */
	int slot[NR_SLOTS];
	int held;		/* element index, -1: none */
	int held2;		/* with a pair, the other (maybe held again), else -1 */
	int count[NR_ELEMS];
	enum why why;		/* first unsound step */
	int why_op;
};

static void unsound(struct model *m, enum why why, int op)
{
	if (m->why == SOUND) {
		m->why = why;
		m->why_op = op;
	}
}

static bool m_holds(const struct model *m, int e)
{
	return m->held == e || m->held2 == e;
}

static void m_lock(struct model *m, int e, int op)
{
	if (m->held >= 0)
		unsound(m, m_holds(m, e) ? WHY_TWICE : WHY_SECOND, op);
	m->held = e;
	m->held2 = -1;
}

static void m_unlock(struct model *m, int e, int op)
{
	if (m->held < 0)
		unsound(m, WHY_UNHELD, op);
	else if (m->held2 >= 0)
		unsound(m, WHY_PAIR_HALF, op);
	else if (m->held != e)
		unsound(m, WHY_OTHER, op);
	m->held = -1;
	m->held2 = -1;
}

/* Any lock held: a CPU waiting for itself, or holding two regions. */
static void m_plock(struct model *m, int e1, int e2, int op)
{
	if (m->held >= 0)
		unsound(m, m_holds(m, e1) || m_holds(m, e2) ? WHY_TWICE : WHY_SECOND, op);
	m->held = e1;
	m->held2 = e2;
}

/* {a, b} = {c, d}, as sets */
static bool same_elems(int a, int b, int c, int d)
{
	return (a == c || a == d) && (b == c || b == d) && (c == a || c == b) &&
	       (d == a || d == b);
}

/* Sound if it names the held pair's elements, as a set: {e, e} is e. */
static void m_punlock(struct model *m, int e1, int e2, int op)
{
	if (m->held < 0)
		unsound(m, WHY_UNHELD, op);
	else if (m->held2 < 0)
		unsound(m, WHY_PAIR_OF_ONE, op);
	else if (!same_elems(e1, e2, m->held, m->held2))
		unsound(m, WHY_OTHER, op);
	m->held = -1;
	m->held2 = -1;
}

static void m_liu(struct model *m, int e, int op)
{
	m_lock(m, e, op);
	m->count[e]++;
	m_unlock(m, e, op);
}

/* lock e, unlock e or (moved) e2, counting on the unlocked one */
static void m_prune(struct model *m, int e, int e2, bool moved, int op)
{
	m_lock(m, e, op);
	if (moved)
		e = e2;
	m->count[e]++;
	m_unlock(m, e, op);
}

/* A pair body on elements p, q (enum pair_body). */
static void m_pair(struct model *m, int body, int p, int q, bool moved, int op)
{
	switch (body) {
	case PB_LIU:
		m_plock(m, p, q, op);
		m->count[p]++;
		m_punlock(m, p, q, op);
		break;
	case PB_LIU_SWAP:
		m_plock(m, p, q, op);
		m->count[q]++;
		m_punlock(m, q, p, op);
		break;
	case PB_LIU_SELF:
		m_plock(m, p, p, op);
		m->count[p]++;
		m_punlock(m, p, p, op);
		break;
	case PB_L:
		m_plock(m, p, q, op);
		break;
	case PB_U:
		m_punlock(m, p, q, op);
		break;
	case PB_L_U:
		m_plock(m, p, q, op);
		m->count[p]++;
		m_unlock(m, p, op);
		break;
	case PB_L1_U:
		m_lock(m, p, op);
		m->count[p]++;
		m_punlock(m, p, q, op);
		break;
	default:
		m_plock(m, p, q, op);
		if (moved)
			p = q;
		m->count[p]++;
		m_punlock(m, p, q, op);
	}
}

static void m_sub(struct model *m, const struct op *o, bool moved, int op)
{
	int e1 = m->reg[o->b], e2 = m->reg[o->c];
	int held_at_call = m->held, held2_at_call = m->held2;

	switch (o->a) {
	case SUB_LIU:
		m_liu(m, e1, op);
		break;
	case SUB_L:
		m_lock(m, e1, op);
		break;
	case SUB_U:
		m_unlock(m, e1, op);
		break;
	case SUB_L_U2:
		m_lock(m, e1, op);
		m->count[e1]++;
		m_unlock(m, e2, op);
		break;
	case SUB_SLOT_LIU:
		m_liu(m, m->slot[0], op);
		break;
	case SUB_WLOCK:
		unsound(m, WHY_WORD, op);
		break;
	case SUB_PRUNE_A:
	case SUB_PRUNE_B:
		m_prune(m, e1, e2, moved, op);
		break;
	default:
		m_pair(m, o->a - SUB_PAIR, e1, e2, moved, op);
	}
	/* returning with the caller's lock (or pair) still held is what it found */
	if (!sub_may_keep_lock && m->held >= 0 &&
	    (m->held != held_at_call || m->held2 != held2_at_call))
		unsound(m, WHY_SUB_EXIT, op);
}

static void m_foreach(struct model *m, const struct op *o, bool moved, int op)
{
	int e;

	for (e = 0; e < NR_ELEMS; e++) {
		switch (o->a) {
		case CB_INC:
			m->count[e]++;
			break;
		case CB_LIU:
			m_liu(m, e, op);
			break;
		case CB_L:
			m_lock(m, e, op);
			break;
		case CB_U:
			m_unlock(m, e, op);
			break;
		case CB_CTX_LIU:
			m_liu(m, m->slot[0], op);
			break;
		case CB_WLOCK:
			unsound(m, WHY_WORD, op);
			break;
		case CB_PRUNE_SELF_A:
		case CB_PRUNE_SELF_B:
			m_prune(m, e, e, moved, op);
			break;
		case CB_PRUNE_CTX_A:
		case CB_PRUNE_CTX_B:
			m_prune(m, e, m->slot[0], moved, op);
			break;
		default:
			m_pair(m, o->a - CB_PAIR, e, m->slot[0], moved, op);
		}
		if (m->held >= 0)
			unsound(m, WHY_CB_EXIT, op);
	}
}

static bool m_cond(const struct op *o, const struct path *path, int iter)
{
	if (o->a == SRC_ITER)
		return (iter == o->b) == o->c;
	return ((path->bits >> o->b) & 1) == o->c;
}

static void exec(const struct fprog *p, int from, int to, struct model *m,
		 const struct path *path, int iter)
{
	int i, it;

	for (i = from; i < to; i++) {
		const struct op *o = &p->op[i];
		int end = p->match[i];

		switch (o->kind) {
		case OP_LOCK:
			m_lock(m, m->reg[o->a], i);
			break;
		case OP_UNLOCK:
			m_unlock(m, m->reg[o->a], i);
			break;
		case OP_PLOCK:
			m_plock(m, m->reg[o->a], m->reg[o->b], i);
			break;
		case OP_PUNLOCK:
			m_punlock(m, m->reg[o->a], m->reg[o->b], i);
			break;
		case OP_INC:
			m->count[m->reg[o->a]]++;
			break;
		case OP_MOV:
			m->reg[o->a] = m->reg[o->b];
			break;
		case OP_SPILL:
			m->slot[o->a] = m->reg[o->b];
			break;
		case OP_FILL:
			m->reg[o->a] = m->slot[o->b];
			break;
		case OP_IF:
			if (m_cond(o, path, iter))
				exec(p, i + 1, end, m, path, iter);
			else if (p->op[end].kind == OP_ELSE)
				exec(p, end + 1, p->match[end], m, path, iter);
			i = p->op[end].kind == OP_ELSE ? p->match[end] : end;
			break;
		case OP_LOOP:
			for (it = 0; it < o->a; it++)
				exec(p, i + 1, end, m, path, it);
			i = end;
			break;
		case OP_CALL:
			m_sub(m, o, ((path->bits >> o->d) & 1) == o->e, i);
			break;
		case OP_FOREACH:
			m_foreach(m, o, ((path->bits >> o->d) & 1) == o->e, i);
			break;
		case OP_WLOCK:
			unsound(m, WHY_WORD, i);
			break;
		}
	}
}

static void replay(const struct fprog *p, const struct path *path, struct model *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->held = -1;
	m->held2 = -1;
	for (i = 0; i < p->np; i++)
		m->reg[i] = p->key[i] >= 0 ? p->key[i] : path->ukey[i];
	m->slot[0] = m->reg[0];
	m->slot[1] = m->reg[1];
	exec(p, 0, p->nop, m, path, -1);
	if (m->held >= 0)
		unsound(m, WHY_EXIT, p->nop);
}

/* Every path; the first unsound one in *bad. */
static enum why check_all(const struct fprog *p, struct path *bad, struct model *m)
{
	int unknown[MAX_PTRS], nu = 0, i;
	unsigned int k;

	for (i = 0; i < p->np; i++)
		if (p->key[i] < 0)
			unknown[nu++] = i;
	for (bad->bits = 0; bad->bits < NR_PATHS; bad->bits++) {
		for (k = 0; k < 1u << (2 * nu); k++) {
			memset(bad->ukey, 0, sizeof(bad->ukey));
			for (i = 0; i < nu; i++)
				bad->ukey[unknown[i]] = (k >> (2 * i)) & 3;
			replay(p, bad, m);
			if (m->why != SOUND)
				return m->why;
		}
	}
	return SOUND;
}

/* ---- code generation ---- */

struct asmb {
	struct bpf_insn insn[MAX_INSNS];
	int n;
	int to_exit[MAX_PTRS + 1];	/* jumps to the main program's exit */
	int nexit;
	int call_site[MAX_OPS];		/* pseudo calls and funcs to patch */
	int call_body[MAX_OPS];
	bool call_is_cb[MAX_OPS];
	int ncall;
	struct bpf_func_info func[1 + 2 * NR_BODIES];	/* BTF of each function */
	int nfunc;
};

/* BTF function types (main, subprogram, callback): callbacks need them. */
struct func_btf {
	int fd;
	__u32 main, sub, cb;
};

static struct func_btf fbtf;

/* vmlinux BTF ids of bpf_spin_lock_pair() and bpf_spin_unlock_pair() */
static int pair_fn[2];

static int put(struct asmb *a, struct bpf_insn i)
{
	if (a->n < MAX_INSNS)
		a->insn[a->n] = i;
	return a->n++;
}

static void put_map(struct asmb *a, int reg, int map)
{
	struct bpf_insn ld[] = { I_LD_MAP_FD(reg, map) };

	put(a, ld[0]);
	put(a, ld[1]);
}

static void put_lock(struct asmb *a, int reg, int fn)
{
	put(a, I_MOV64_REG(BPF_REG_1, reg));
	put(a, I_ADD64_IMM(BPF_REG_1, LOCK_OFF));
	put(a, I_CALL(fn));
}

/* lock_pair or (unlock) unlock_pair of the elements ra and rb point to */
static void put_pair(struct asmb *a, int ra, int rb, bool unlock)
{
	put(a, I_MOV64_REG(BPF_REG_1, ra));
	put(a, I_ADD64_IMM(BPF_REG_1, LOCK_OFF));
	put(a, I_MOV64_REG(BPF_REG_2, rb));
	put(a, I_ADD64_IMM(BPF_REG_2, LOCK_OFF));
	put(a, I_KFUNC(pair_fn[unlock]));
}

static void put_inc(struct asmb *a, int reg)
{
	put(a, I_LDX_W(BPF_REG_0, reg, 0));
	put(a, I_ADD64_IMM(BPF_REG_0, 1));
	put(a, I_STX_W(reg, BPF_REG_0, 0));
}

static void put_liu(struct asmb *a, int reg)
{
	put_lock(a, reg, BPF_FUNC_spin_lock);
	put_inc(a, reg);
	put_lock(a, reg, BPF_FUNC_spin_unlock);
}

/* Stores that reach the lock word, each one a way to corrupt it. */
static void put_wlock(struct asmb *a, int reg, int how)
{
	put(a, I_MOV64_IMM(BPF_REG_0, 0));
	switch (how) {
	case 0:
		put(a, I_STX_W(reg, BPF_REG_0, LOCK_OFF));
		break;
	case 1:
		put(a, I_ST_W(reg, LOCK_OFF, 0));
		break;
	case 2:		/* cnt and lock in one store */
		put(a, I_STX_DW(reg, BPF_REG_0, 0));
		break;
	case 3:
		put(a, I_ATOMIC_ADD_W(reg, BPF_REG_0, LOCK_OFF));
		break;
	default:
		put(a, I_STX_H(reg, BPF_REG_0, LOCK_OFF + 2));
	}
}

/*
 * r0 = variable v (or the iteration test): zero or not. SRC_FIELD reads
 * through pointer 'ptr'.
 */
static void put_var(const struct fprog *p, struct asmb *a, const struct op *o, int v, int ptr)
{
	int bit = p->var[v].bit;

	switch (o->a == SRC_ITER && o->kind == OP_IF ? SRC_ITER : p->var[v].src) {
	case SRC_LEN:
		put(a, I_LDX_DW(BPF_REG_1, BPF_REG_10, FP_CTX));
		put(a, I_LDX_W(BPF_REG_0, BPF_REG_1, offsetof(struct __sk_buff, len)));
		put(a, I_AND64_IMM(BPF_REG_0, 1 << bit));
		break;
	case SRC_PKT:	/* the bounds were checked once, on entry */
		put(a, I_LDX_DW(BPF_REG_1, BPF_REG_10, FP_PKT));
		put(a, I_LDX_B(BPF_REG_0, BPF_REG_1, PKT_BIT + bit));
		put(a, I_AND64_IMM(BPF_REG_0, 1));
		break;
	case SRC_FIELD:
		put(a, I_LDX_W(BPF_REG_0, BPF_REG_6 + ptr, DATA_OFF));
		put(a, I_AND64_IMM(BPF_REG_0, 1 << bit));
		break;
	default:	/* the counter was bumped at the loop head */
		put(a, I_LDX_DW(BPF_REG_0, BPF_REG_10, FP_ITER));
		put(a, I_ADD64_IMM(BPF_REG_0, -1 - o->b));
	}
}

/* r0 = whether a PRUNE body moves: variable d equals e. */
static void put_move_flag(const struct fprog *p, struct asmb *a, const struct op *o)
{
	put_var(p, a, o, o->d, 0);
	if (!o->e)
		put(a, ((struct bpf_insn){ BPF_ALU64 | BPF_XOR | BPF_K, BPF_REG_0, 0, 0,
					   p->var[o->d].src == SRC_PKT ? 1 : 1 << p->var[o->d].bit }));
}

static void put_cond(const struct fprog *p, struct asmb *a, const struct op *o)
{
	put_var(p, a, o, o->a == SRC_ITER ? 0 : o->b, o->d);
	/* jump to ELSE when the THEN arm is not taken */
	if (o->a == SRC_ITER)
		put(a, o->c ? I_JNE_IMM(BPF_REG_0, 0, 0) : I_JEQ_IMM(BPF_REG_0, 0, 0));
	else
		put(a, o->c ? I_JEQ_IMM(BPF_REG_0, 0, 0) : I_JNE_IMM(BPF_REG_0, 0, 0));
}

/*
 * Entry: save ctx, check the packet once and save its pointer, look up
 * each element (a constant key, or a packet byte & 3), fill the slots.
 */
static void put_prologue(const struct fprog *p, int map, struct asmb *a)
{
	int i;

	put(a, I_STX_DW(BPF_REG_10, BPF_REG_1, FP_CTX));
	put(a, I_LDX_W(BPF_REG_2, BPF_REG_1, offsetof(struct __sk_buff, data)));
	put(a, I_LDX_W(BPF_REG_3, BPF_REG_1, offsetof(struct __sk_buff, data_end)));
	put(a, I_MOV64_REG(BPF_REG_4, BPF_REG_2));
	put(a, I_ADD64_IMM(BPF_REG_4, PKT_NEED));
	a->to_exit[a->nexit++] = put(a, I_JGT_REG(BPF_REG_4, BPF_REG_3, 0));
	put(a, I_STX_DW(BPF_REG_10, BPF_REG_2, FP_PKT));
	for (i = 0; i < p->np; i++) {
		if (p->key[i] >= 0) {
			put(a, I_ST_W(BPF_REG_10, FP_KEY, p->key[i]));
		} else {
			put(a, I_LDX_DW(BPF_REG_2, BPF_REG_10, FP_PKT));
			put(a, I_LDX_B(BPF_REG_0, BPF_REG_2, PKT_KEY + i));
			put(a, I_AND64_IMM(BPF_REG_0, NR_ELEMS - 1));
			put(a, I_STX_W(BPF_REG_10, BPF_REG_0, FP_KEY));
		}
		put_map(a, BPF_REG_1, map);
		put(a, I_MOV64_REG(BPF_REG_2, BPF_REG_10));
		put(a, I_ADD64_IMM(BPF_REG_2, FP_KEY));
		put(a, I_CALL(BPF_FUNC_map_lookup_elem));
		a->to_exit[a->nexit++] = put(a, I_JEQ_IMM(BPF_REG_0, 0, 0));
		put(a, I_MOV64_REG(BPF_REG_6 + i, BPF_REG_0));
	}
	put(a, I_STX_DW(BPF_REG_10, BPF_REG_6, FP_SLOT(0)));
	put(a, I_STX_DW(BPF_REG_10, BPF_REG_7, FP_SLOT(1)));
}

static void put_call(struct asmb *a, int body, bool cb)
{
	a->call_body[a->ncall] = body;
	a->call_is_cb[a->ncall] = cb;
	if (cb) {
		struct bpf_insn ld[] = { I_LD_FUNC(BPF_REG_2, 0) };

		a->call_site[a->ncall++] = put(a, ld[0]);
		put(a, ld[1]);
	} else {
		a->call_site[a->ncall++] = put(a, I_CALL_SUB(0));
	}
}

static void put_op(const struct fprog *p, const struct op *o, int map, struct asmb *a,
		   int *stack, int *sp)
{
	int at;

	switch (o->kind) {
	case OP_LOCK:
		put_lock(a, BPF_REG_6 + o->a, BPF_FUNC_spin_lock);
		break;
	case OP_UNLOCK:
		put_lock(a, BPF_REG_6 + o->a, BPF_FUNC_spin_unlock);
		break;
	case OP_PLOCK:
	case OP_PUNLOCK:
		put_pair(a, BPF_REG_6 + o->a, BPF_REG_6 + o->b, o->kind == OP_PUNLOCK);
		break;
	case OP_INC:
		put_inc(a, BPF_REG_6 + o->a);
		break;
	case OP_MOV:
		put(a, I_MOV64_REG(BPF_REG_6 + o->a, BPF_REG_6 + o->b));
		break;
	case OP_SPILL:
		put(a, I_STX_DW(BPF_REG_10, BPF_REG_6 + o->b, FP_SLOT(o->a)));
		break;
	case OP_FILL:
		put(a, I_LDX_DW(BPF_REG_6 + o->a, BPF_REG_10, FP_SLOT(o->b)));
		break;
	case OP_IF:
		put_cond(p, a, o);
		stack[(*sp)++] = a->n - 1;
		break;
	case OP_ELSE:
		at = put(a, I_JA(0));
		a->insn[stack[*sp - 1]].off = a->n - stack[*sp - 1] - 1;
		stack[*sp - 1] = at;
		break;
	case OP_END:
		at = stack[--(*sp)];
		a->insn[at].off = a->n - at - 1;
		break;
	case OP_LOOP:	/* the counter lives on the stack: r6..r9 are taken */
		put(a, I_MOV64_IMM(BPF_REG_0, 0));
		put(a, I_STX_DW(BPF_REG_10, BPF_REG_0, FP_ITER));
		stack[(*sp)++] = put(a, I_LDX_DW(BPF_REG_0, BPF_REG_10, FP_ITER));
		put(a, I_JGE_IMM(BPF_REG_0, o->a, 0));
		put(a, I_ADD64_IMM(BPF_REG_0, 1));
		put(a, I_STX_DW(BPF_REG_10, BPF_REG_0, FP_ITER));
		break;
	case OP_LOOP_END:
		at = stack[--(*sp)];
		put(a, I_JA(at - a->n - 1));
		a->insn[at + 1].off = a->n - (at + 1) - 1;
		break;
	case OP_CALL:
		put_move_flag(p, a, o);
		put(a, I_MOV64_REG(BPF_REG_3, BPF_REG_0));
		if (o->a == SUB_SLOT_LIU) {
			put(a, I_MOV64_REG(BPF_REG_1, BPF_REG_10));
			put(a, I_ADD64_IMM(BPF_REG_1, FP_SLOT(0)));
		} else {
			put(a, I_MOV64_REG(BPF_REG_1, BPF_REG_6 + o->b));
		}
		put(a, I_MOV64_REG(BPF_REG_2, BPF_REG_6 + o->c));
		put_call(a, o->a, false);
		break;
	case OP_FOREACH:
		put_move_flag(p, a, o);
		put(a, I_STX_DW(BPF_REG_10, BPF_REG_0, FP_MOVE));
		put_map(a, BPF_REG_1, map);
		put_call(a, o->a, true);
		put(a, I_MOV64_REG(BPF_REG_3, BPF_REG_10));
		put(a, I_ADD64_IMM(BPF_REG_3, FP_SLOT(0)));
		put(a, I_MOV64_IMM(BPF_REG_4, 0));
		put(a, I_CALL(BPF_FUNC_for_each_map_elem));
		break;
	case OP_WLOCK:
		put_wlock(a, BPF_REG_6 + o->a, o->b);
		break;
	}
}

/*
 * r6 locked (pair: r6 and r7); when r8 != 0, r7 becomes the pointer (on
 * the first walked arm, or, 'second', on the jump target); inc and unlock
 * through r6 (pair: r6 and r7).
 */
static void put_prune(struct asmb *a, bool second, bool pair)
{
	if (pair)
		put_pair(a, BPF_REG_6, BPF_REG_7, false);
	else
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_lock);
	if (second) {
		put(a, I_JNE_IMM(BPF_REG_8, 0, 1));
		put(a, I_JA(1));
	} else {
		put(a, I_JEQ_IMM(BPF_REG_8, 0, 1));
	}
	put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_7));
	put_inc(a, BPF_REG_6);
	if (pair)
		put_pair(a, BPF_REG_6, BPF_REG_7, true);
	else
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_unlock);
}

/* Pair body 'body' on r6, r7, the move flag in r8 (enum pair_body). */
static void put_pair_body(struct asmb *a, int body)
{
	switch (body) {
	case PB_LIU:
		put_pair(a, BPF_REG_6, BPF_REG_7, false);
		put_inc(a, BPF_REG_6);
		put_pair(a, BPF_REG_6, BPF_REG_7, true);
		break;
	case PB_LIU_SWAP:
		put_pair(a, BPF_REG_6, BPF_REG_7, false);
		put_inc(a, BPF_REG_7);
		put_pair(a, BPF_REG_7, BPF_REG_6, true);
		break;
	case PB_LIU_SELF:
		put_pair(a, BPF_REG_6, BPF_REG_6, false);
		put_inc(a, BPF_REG_6);
		put_pair(a, BPF_REG_6, BPF_REG_6, true);
		break;
	case PB_L:
		put_pair(a, BPF_REG_6, BPF_REG_7, false);
		break;
	case PB_U:
		put_pair(a, BPF_REG_6, BPF_REG_7, true);
		break;
	case PB_L_U:
		put_pair(a, BPF_REG_6, BPF_REG_7, false);
		put_inc(a, BPF_REG_6);
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_unlock);
		break;
	case PB_L1_U:
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_lock);
		put_inc(a, BPF_REG_6);
		put_pair(a, BPF_REG_6, BPF_REG_7, true);
		break;
	default:
		put_prune(a, body == PB_PRUNE_B, true);
	}
}

static void put_sub(struct asmb *a, int body)
{
	switch (body) {
	case SUB_LIU:
		put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
		put_liu(a, BPF_REG_6);
		break;
	case SUB_L:
		put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_lock);
		break;
	case SUB_U:
		put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_unlock);
		break;
	case SUB_L_U2:
		put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
		put(a, I_MOV64_REG(BPF_REG_7, BPF_REG_2));
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_lock);
		put_inc(a, BPF_REG_6);
		put_lock(a, BPF_REG_7, BPF_FUNC_spin_unlock);
		break;
	case SUB_SLOT_LIU:	/* r1 is the caller's &slot 0 */
		put(a, I_LDX_DW(BPF_REG_6, BPF_REG_1, 0));
		put_liu(a, BPF_REG_6);
		break;
	case SUB_WLOCK:
		put_wlock(a, BPF_REG_1, 0);
		break;
	default:
		put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
		put(a, I_MOV64_REG(BPF_REG_7, BPF_REG_2));
		put(a, I_MOV64_REG(BPF_REG_8, BPF_REG_3));
		if (body >= SUB_PAIR)
			put_pair_body(a, body - SUB_PAIR);
		else
			put_prune(a, body == SUB_PRUNE_B, false);
	}
	put(a, I_MOV64_IMM(BPF_REG_0, 0));
	put(a, I_EXIT());
}

static void put_cb(struct asmb *a, int body)
{
	if (body == CB_CTX_LIU)	/* r4 is the caller's &slot 0 */
		put(a, I_LDX_DW(BPF_REG_6, BPF_REG_4, 0));
	else
		put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_3));
	switch (body) {
	case CB_INC:
		put_inc(a, BPF_REG_6);
		break;
	case CB_WLOCK:
		put_wlock(a, BPF_REG_6, 0);
		break;
	case CB_PRUNE_SELF_A:
	case CB_PRUNE_SELF_B:
	case CB_PRUNE_CTX_A:
	case CB_PRUNE_CTX_B:
		if (body >= CB_PRUNE_CTX_A)
			put(a, I_LDX_DW(BPF_REG_7, BPF_REG_4, 0));
		else
			put(a, I_MOV64_REG(BPF_REG_7, BPF_REG_3));
		put(a, I_LDX_DW(BPF_REG_8, BPF_REG_4, FP_MOVE - FP_SLOT(0)));
		put_prune(a, body == CB_PRUNE_SELF_B || body == CB_PRUNE_CTX_B, false);
		break;
	case CB_L:
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_lock);
		break;
	case CB_U:
		put_lock(a, BPF_REG_6, BPF_FUNC_spin_unlock);
		break;
	case CB_LIU:
	case CB_CTX_LIU:
		put_liu(a, BPF_REG_6);
		break;
	default:	/* the pair: the value and the caller's slot 0 */
		put(a, I_LDX_DW(BPF_REG_7, BPF_REG_4, 0));
		put(a, I_LDX_DW(BPF_REG_8, BPF_REG_4, FP_MOVE - FP_SLOT(0)));
		put_pair_body(a, body - CB_PAIR);
	}
	put(a, I_MOV64_IMM(BPF_REG_0, 0));	/* continue */
	put(a, I_EXIT());
}

static void compile(const struct fprog *p, int map, struct asmb *a)
{
	int stack[MAX_OPS], sp = 0, i, start[2][NR_BODIES];

	memset(a, 0, sizeof(*a));
	a->func[a->nfunc++] = (struct bpf_func_info){ 0, fbtf.main };
	put_prologue(p, map, a);
	for (i = 0; i < p->nop; i++)
		put_op(p, &p->op[i], map, a, stack, &sp);
	for (i = 0; i < a->nexit; i++)
		a->insn[a->to_exit[i]].off = a->n - a->to_exit[i] - 1;
	put(a, I_MOV64_IMM(BPF_REG_0, 0));
	put(a, I_EXIT());
	/* only the bodies that are used: the verifier refuses unreachable code */
	memset(start, -1, sizeof(start));
	for (i = 0; i < a->ncall; i++) {
		int cb = a->call_is_cb[i], body = a->call_body[i];

		if (start[cb][body] >= 0)
			continue;
		start[cb][body] = a->n;
		a->func[a->nfunc++] = (struct bpf_func_info){ a->n, cb ? fbtf.cb : fbtf.sub };
		if (cb)
			put_cb(a, body);
		else
			put_sub(a, body);
	}
	for (i = 0; i < a->ncall; i++) {
		int site = a->call_site[i];

		a->insn[site].imm = start[a->call_is_cb[i]][a->call_body[i]] - site - 1;
	}
}

/* ---- the kernel side ---- */

static int lock_array(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	struct btf *b = btf__new_empty();
	int i32, lock, v, btf, fd;
	const void *raw;
	__u32 size;

	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	lock = btf__add_struct(b, "bpf_spin_lock", 4);
	btf__add_field(b, "val", i32, 0, 0);
	v = btf__add_struct(b, "elem", 16);
	btf__add_field(b, "cnt", i32, 0, 0);
	btf__add_field(b, "lock", lock, 32, 0);
	btf__add_field(b, "d0", i32, 64, 0);
	btf__add_field(b, "d1", i32, 96, 0);
	raw = btf__raw_data(b, &size);
	btf = bpf_btf_load(raw, size, NULL);
	btf__free(b);
	if (btf < 0)
		return -1;
	opts.btf_fd = btf;
	opts.btf_key_type_id = i32;
	opts.btf_value_type_id = v;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fuzz", 4, 16, NR_ELEMS, &opts);
	close(btf);
	return fd;
}

/* int main(void *), int sub(void *, void *), int cb(void *, void *, void *, void *) */
static int load_func_btf(void)
{
	static const char *const names[] = { "main", "sub", "cb" };
	static const int nargs[] = { 1, 2, 4 };
	__u32 *ids[] = { &fbtf.main, &fbtf.sub, &fbtf.cb };
	struct btf *b = btf__new_empty();
	int i32, ptr, proto, i, j;
	const void *raw;
	__u32 size;

	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	ptr = btf__add_ptr(b, 0);
	for (i = 0; i < 3; i++) {
		proto = btf__add_func_proto(b, i32);
		for (j = 0; j < nargs[i]; j++)
			btf__add_func_param(b, "p", ptr);
		*ids[i] = btf__add_func(b, names[i], BTF_FUNC_STATIC, proto);
	}
	raw = btf__raw_data(b, &size);
	fbtf.fd = bpf_btf_load(raw, size, NULL);
	btf__free(b);
	return fbtf.fd;
}

static char vlog[1 << 20];

/* Verdict only (no log: faster); returns the fd or -errno. */
static int load(const struct asmb *a, __u32 flags, bool with_log)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = flags, .prog_btf_fd = fbtf.fd,
		    .func_info = a->func, .func_info_cnt = a->nfunc,
		    .func_info_rec_size = sizeof(a->func[0]));
	int fd;

	if (with_log) {
		vlog[0] = 0;
		opts.log_buf = vlog;
		opts.log_size = sizeof(vlog);
		opts.log_level = 1;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "fuzz", "GPL", a->insn, a->n, &opts);
	return fd < 0 ? -errno : fd;
}

/* The verifier's reason: its last line but the statistics, digits as N. */
static void log_reason(char *out, size_t size)
{
	char *line = NULL, *s, *save = NULL;
	size_t n = 0;

	for (s = strtok_r(vlog, "\n", &save); s; s = strtok_r(NULL, "\n", &save))
		if (strncmp(s, "processed ", 10) && strncmp(s, "verification time", 17))
			line = s;
	if (!line)
		line = "(no log)";
	for (s = line; *s && n + 1 < size; s++)
		if (*s < '0' || *s > '9')
			out[n++] = *s;
		else if (!n || out[n - 1] != 'N')
			out[n++] = 'N';
	out[n] = 0;
}

#define MAX_REASONS 32

struct totals {
	long programs, sound, unsound, why[NR_WHYS];
	long accepted[2], accepted_lockers, diverge;
	long unsound_accepted, unsound_accepted_flag[2];
	long unsound_accepted_why[NR_WHYS][2], first_why[NR_WHYS];	/* per flag */
	long reported[2];	/* unsound programs shown, accepted by default flags or not */
	long over_rejected;
	char reason[MAX_REASONS][96];
	long reason_count[MAX_REASONS], reason_first[MAX_REASONS];
	int nreason;
	long runs, locking_runs, bad_runs;
	/* programs with pair ops: of them sound, accepted (default flags), ... */
	long pair, pair_sound, pair_accepted, pair_unsound_accepted, pair_over_rejected, pair_runs;
};

static void count_reason(struct totals *tot, const char *reason, long idx)
{
	int i;

	for (i = 0; i < tot->nreason; i++)
		if (!strcmp(tot->reason[i], reason))
			break;
	if (i == tot->nreason) {
		if (i == MAX_REASONS)
			i--;	/* the last row collects the rest */
		else
			tot->nreason++;
		snprintf(tot->reason[i], sizeof(tot->reason[i]), "%s",
			 i == MAX_REASONS - 1 ? "(other)" : reason);
		tot->reason_first[i] = idx;
	}
	tot->reason_count[i]++;
}

/* ---- reports ---- */

static const char *const sub_names[] = {
	"lock+inc+unlock(r1)", "lock(r1)", "unlock(r1)", "lock(r1)+inc+unlock(r2)",
	"lock+inc+unlock(*r1=slot0)", "store_lock_word(r1)",
	"lock(r1);if(r3)r1=r2;inc+unlock(r1)", "lock(r1);if(!r3)else{r1=r2};inc+unlock(r1)",
	"lock_pair(r1,r2)+inc(r1)+unlock_pair(r1,r2)",
	"lock_pair(r1,r2)+inc(r2)+unlock_pair(r2,r1)",
	"lock_pair(r1,r1)+inc+unlock_pair(r1,r1)", "lock_pair(r1,r2)", "unlock_pair(r1,r2)",
	"lock_pair(r1,r2)+inc+unlock(r1)", "lock(r1)+inc+unlock_pair(r1,r2)",
	"lock_pair(r1,r2);if(r3)r1=r2;inc+unlock_pair(r1,r2)",
	"lock_pair(r1,r2);if(!r3)else{r1=r2};inc+unlock_pair(r1,r2)",
};
static const char *const cb_names[] = {
	"inc(val)", "lock+inc+unlock(val)", "lock(val)", "unlock(val)",
	"lock+inc+unlock(*ctx=slot0)", "store_lock_word(val)",
	"lock(val);if(f)p=copy_of_val;inc+unlock(p)", "lock(val);if(!f)else{p=copy_of_val};inc+unlock(p)",
	"lock(val);if(f)p=*ctx;inc+unlock(p)", "lock(val);if(!f)else{p=*ctx};inc+unlock(p)",
	"lock_pair(val,*ctx)+inc(val)+unlock_pair(val,*ctx)",
	"lock_pair(val,*ctx)+inc(*ctx)+unlock_pair(*ctx,val)",
	"lock_pair(val,val)+inc+unlock_pair(val,val)", "lock_pair(val,*ctx)",
	"unlock_pair(val,*ctx)",
	"lock_pair(val,*ctx)+inc+unlock(val)", "lock(val)+inc+unlock_pair(val,*ctx)",
	"lock_pair(val,*ctx);p=val;if(f)p=*ctx;inc+unlock_pair(p,*ctx)",
	"lock_pair(val,*ctx);p=val;if(!f)else{p=*ctx};inc+unlock_pair(p,*ctx)",
};
static const char *const wlock_names[] = { "stx w +4", "st w +4", "stx dw +0", "atomic add w +4",
					   "stx h +6" };

static void var_name(const struct fprog *p, int v, int ptr, char *s, size_t n)
{
	if (p->var[v].src == SRC_FIELD)
		snprintf(s, n, "r%d->d0 bit %d", 6 + ptr, p->var[v].bit);
	else if (p->var[v].src == SRC_PKT)
		snprintf(s, n, "pkt[%d] bit 0", PKT_BIT + p->var[v].bit);
	else
		snprintf(s, n, "len bit %d", p->var[v].bit);
}

static void dump_op(const struct fprog *p, const struct op *o, char *s, size_t n)
{
	char v[32];

	switch (o->kind) {
	case OP_LOCK:
		snprintf(s, n, "lock(r%d)", 6 + o->a);
		break;
	case OP_UNLOCK:
		snprintf(s, n, "unlock(r%d)", 6 + o->a);
		break;
	case OP_PLOCK:
		snprintf(s, n, "lock_pair(r%d, r%d)", 6 + o->a, 6 + o->b);
		break;
	case OP_PUNLOCK:
		snprintf(s, n, "unlock_pair(r%d, r%d)", 6 + o->a, 6 + o->b);
		break;
	case OP_INC:
		snprintf(s, n, "r%d->cnt++", 6 + o->a);
		break;
	case OP_MOV:
		snprintf(s, n, "r%d = r%d", 6 + o->a, 6 + o->b);
		break;
	case OP_SPILL:
		snprintf(s, n, "*(fp%d) = r%d", FP_SLOT(o->a), 6 + o->b);
		break;
	case OP_FILL:
		snprintf(s, n, "r%d = *(fp%d)", 6 + o->a, FP_SLOT(o->b));
		break;
	case OP_IF:
		if (o->a == SRC_ITER)
			snprintf(s, n, "if (iteration %s %d) {", o->c ? "==" : "!=", o->b);
		else
			snprintf(s, n, "if (%s == %d) {",
				 (var_name(p, o->b, o->d, v, sizeof(v)), v), o->c);
		break;
	case OP_ELSE:
		snprintf(s, n, "} else {");
		break;
	case OP_END:
	case OP_LOOP_END:
		snprintf(s, n, "}");
		break;
	case OP_LOOP:
		snprintf(s, n, "loop %d times {", o->a);
		break;
	case OP_CALL:
		var_name(p, o->d, 0, v, sizeof(v));
		snprintf(s, n, "call sub_%s(r%d, r%d, r3 = %s == %d)", sub_names[o->a], 6 + o->b,
			 6 + o->c, v, o->e);
		break;
	case OP_FOREACH:
		var_name(p, o->d, 0, v, sizeof(v));
		snprintf(s, n, "bpf_for_each_map_elem(cb_%s, ctx=fp%d; f = %s == %d)", cb_names[o->a],
			 FP_SLOT(0), v, o->e);
		break;
	case OP_WLOCK:
		snprintf(s, n, "lock word store via r%d: %s", 6 + o->a, wlock_names[o->b]);
		break;
	}
}

static void dump(struct kt *t, const struct fprog *p, int mark)
{
	char line[256];
	int i, n = 0, depth = 1;

	for (i = 0; i < p->np; i++) {
		if (p->key[i] >= 0)
			n += snprintf(line + n, sizeof(line) - n, " r%d=&e%d", 6 + i, p->key[i]);
		else
			n += snprintf(line + n, sizeof(line) - n, " r%d=&e[pkt[%d]&3]", 6 + i,
				      PKT_KEY + i);
	}
	kt_log(t, "  lookups:%s; *(fp%d)=r6 *(fp%d)=r7", line, FP_SLOT(0), FP_SLOT(1));
	for (i = 0; i < p->nop; i++) {
		const struct op *o = &p->op[i];

		if (o->kind == OP_ELSE || o->kind == OP_END || o->kind == OP_LOOP_END)
			depth--;
		dump_op(p, o, line, sizeof(line));
		kt_log(t, "  %2d%s%*s%s", i, i == mark ? " >" : "  ", 2 * depth, "", line);
		if (o->kind == OP_IF || o->kind == OP_ELSE || o->kind == OP_LOOP)
			depth++;
	}
	kt_log(t, "  %2d%s%*sexit", p->nop, p->nop == mark ? " >" : "  ", 2, "");
}

static void dump_path(const struct fprog *p, const struct path *path, char *s, size_t n)
{
	int i, k = snprintf(s, n, "bits=%#x", path->bits);

	for (i = 0; i < p->np; i++)
		if (p->key[i] < 0)
			k += snprintf(s + k, n - k, " pkt[%d]&3=%d", PKT_KEY + i, path->ukey[i]);
}

/* ---- running ---- */

/* The run for variables 'bits': unknown keys vary with the program and bits. */
static void run_path(unsigned long long seed, unsigned int bits, struct path *path)
{
	int i;

	path->bits = bits;
	for (i = 0; i < MAX_PTRS; i++)
		path->ukey[i] = mix64(seed ^ (bits * 31 + i)) & 3;
}

/*
 * The program's inputs for one path: each source's bits, noise where no
 * variable is read, the variables' values where they are.
 */
static void path_inputs(const struct fprog *p, unsigned long long seed, const struct path *path,
			unsigned int *in)
{
	int i;

	for (i = 0; i < NR_INPUTS; i++)
		in[i] = mix64(seed ^ (path->bits * 7 + 100 + i)) & (NR_PATHS - 1);
	for (i = 0; i < NR_BITS; i++) {
		in[p->var[i].src] &= ~(1u << p->var[i].bit);
		in[p->var[i].src] |= ((path->bits >> i) & 1) << p->var[i].bit;
	}
}

/* Elements zeroed, with the d0 input (high bits are noise). */
static void reset_elems(int map, unsigned int d0)
{
	int key;

	for (key = 0; key < NR_ELEMS; key++) {
		int v[4] = { 0, 0, (int)(d0 | 0x5a00), 0 };

		bpf_map_update_elem(map, &key, v, 0);
	}
}

/* The unknown keys and the packet input (bit 0 of each byte; others noise). */
static void fill_packet(const struct path *path, unsigned int in, unsigned char *pkt)
{
	int i;

	memset(pkt, 0, PKT_BASE + NR_PATHS);
	for (i = 0; i < MAX_PTRS; i++)
		pkt[PKT_KEY + i] = 0xa4 | path->ukey[i];
	for (i = 0; i < NR_BITS; i++)
		pkt[PKT_BIT + i] = 0x06 | ((in >> i) & 1);
}

/* Counters, read under the lock (it must be free), or plainly on kernels without BPF_F_LOCK. */
static int read_count(int map, int key)
{
	int v[4];

	if (bpf_map_lookup_elem_flags(map, &key, v, BPF_F_LOCK) &&
	    (errno != EINVAL || bpf_map_lookup_elem(map, &key, v)))
		return -1;
	return v[0];
}

/* Run a sound accepted program once per branch path; counters must match. */
static void run_paths(struct kt *t, int fd, int map, const struct fprog *p,
		      unsigned long long seed, long idx, bool locks, struct totals *tot)
{
	unsigned char pkt[PKT_BASE + NR_PATHS];
	unsigned int bits, in[NR_INPUTS];
	struct path path;
	struct model m;
	char ps[128];
	int key, got;

	for (bits = 0; bits < NR_PATHS; bits++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .repeat = 1);

		run_path(seed, bits, &path);
		path_inputs(p, seed, &path, in);
		replay(p, &path, &m);
		reset_elems(map, in[SRC_FIELD]);
		fill_packet(&path, in[SRC_PKT], pkt);
		opts.data_size_in = PKT_BASE + in[SRC_LEN];
		if (bpf_prog_test_run_opts(fd, &opts)) {
			kt_fail(t, "program %ld: test_run: %s", idx, strerror(errno));
			return;
		}
		tot->runs++;
		tot->locking_runs += locks;
		for (key = 0; key < NR_ELEMS; key++) {
			got = read_count(map, key);
			if (got == m.count[key])
				continue;
			if (++tot->bad_runs <= 3) {
				dump_path(p, &path, ps, sizeof(ps));
				kt_log(t, "program %ld, path %s: element %d counted %d, the model says %d",
				       idx, ps, key, got, m.count[key]);
				dump(t, p, -1);
			}
			return;
		}
	}
}

static bool takes_lock(const struct fprog *p)
{
	int i;

	for (i = 0; i < p->nop; i++)
		if (p->op[i].kind == OP_LOCK || p->op[i].kind == OP_PLOCK ||
		    (p->op[i].kind == OP_CALL && p->op[i].a != SUB_U && p->op[i].a != SUB_WLOCK &&
		     p->op[i].a != SUB_PAIR + PB_U) ||
		    (p->op[i].kind == OP_FOREACH && p->op[i].a != CB_U && p->op[i].a != CB_INC &&
		     p->op[i].a != CB_WLOCK && p->op[i].a != CB_PAIR + PB_U))
			return true;
	return false;
}

/* Whether it calls a pair kfunc, itself or in a body. */
static bool has_pair(const struct fprog *p)
{
	int i;

	for (i = 0; i < p->nop; i++)
		if (p->op[i].kind == OP_PLOCK || p->op[i].kind == OP_PUNLOCK ||
		    (p->op[i].kind == OP_CALL && p->op[i].a >= SUB_PAIR) ||
		    (p->op[i].kind == OP_FOREACH && p->op[i].a >= CB_PAIR))
			return true;
	return false;
}

static void report_unsound(struct kt *t, long idx, unsigned long long seed, const struct fprog *p,
			   const int *fd, const struct path *bad, const struct model *m)
{
	char ps[128];

	dump_path(p, bad, ps, sizeof(ps));
	kt_log(t, "program %ld (seed %#llx) accepted (default flags: %s, STATE_FREQ: %s), yet on path %s it %s at op %d:",
	       idx, seed, fd[0] >= 0 ? "yes" : "no", fd[1] >= 0 ? "yes" : "no", ps,
	       why_names[m->why], m->why_op);
	dump(t, p, m->why_op);
}

/* Load one program twice and judge it; run it if it is sound and accepted. */
static void one_program(struct kt *t, int map, long idx, unsigned long long seed,
			bool check_runs, struct totals *tot)
{
	static struct asmb a;
	struct fprog p;
	struct path bad;
	struct model m;
	char reason[96];
	enum why why;
	int fd[2], f;
	long runs;
	bool pair;

	generate(&p, seed);
	why = check_all(&p, &bad, &m);
	tot->why[why]++;
	tot->unsound += why != SOUND;
	tot->sound += why == SOUND;
	pair = has_pair(&p);
	tot->pair += pair;
	tot->pair_sound += pair && why == SOUND;
	compile(&p, map, &a);
	for (f = 0; f < 2; f++) {
		fd[f] = load(&a, f ? BPF_F_TEST_STATE_FREQ : 0, false);
		tot->accepted[f] += fd[f] >= 0;
	}
	tot->accepted_lockers += fd[0] >= 0 && takes_lock(&p);
	tot->pair_accepted += pair && fd[0] >= 0;
	if (getenv("BPFLOCK_FUZZ_VERBOSE")) {
		load(&a, 0, true);
		log_reason(reason, sizeof(reason));
		kt_log(t, "program %ld (seed %#llx), %d insns: the model: %s; default flags: %d, STATE_FREQ: %d; %s",
		       idx, seed, a.n, why_names[why], fd[0] >= 0 ? 0 : fd[0], fd[1] >= 0 ? 0 : fd[1],
		       reason);
		dump(t, &p, why == SOUND ? -1 : m.why_op);
	}
	tot->diverge += (fd[0] >= 0) != (fd[1] >= 0);
	if ((fd[0] >= 0) != (fd[1] >= 0) && why == SOUND && tot->diverge <= 3 && !check_runs) {
		kt_log(t, "program %ld (seed %#llx): default flags %s it (%d), BPF_F_TEST_STATE_FREQ %s it (%d); the model: %s",
		       idx, seed, fd[0] >= 0 ? "accept" : "refuse", fd[0] >= 0 ? 0 : fd[0],
		       fd[1] >= 0 ? "accept" : "refuse", fd[1] >= 0 ? 0 : fd[1], why_names[why]);
		dump(t, &p, -1);
	}
	if (why != SOUND && (fd[0] >= 0 || fd[1] >= 0)) {
		if (!tot->unsound_accepted_why[why][0] && !tot->unsound_accepted_why[why][1])
			tot->first_why[why] = idx;
		tot->unsound_accepted++;
		tot->pair_unsound_accepted += pair;
		for (f = 0; f < 2; f++) {
			tot->unsound_accepted_flag[f] += fd[f] >= 0;
			tot->unsound_accepted_why[why][f] += fd[f] >= 0;
		}
		/* show some that default flags accept, and some that only STATE_FREQ does */
		if (++tot->reported[fd[0] >= 0] <= 3 && !check_runs)
			report_unsound(t, idx, seed, &p, fd, &bad, &m);
	} else if (why == SOUND && fd[0] < 0) {
		tot->over_rejected++;
		tot->pair_over_rejected += pair;
		load(&a, 0, true);
		log_reason(reason, sizeof(reason));
		count_reason(tot, reason, idx);
	} else if (why == SOUND && check_runs) {
		runs = tot->runs;
		run_paths(t, fd[0], map, &p, seed, idx, takes_lock(&p), tot);
		tot->pair_runs += pair ? tot->runs - runs : 0;
	}
	for (f = 0; f < 2; f++)
		if (fd[f] >= 0)
			close(fd[f]);
}

static void print_totals(struct kt *t, const struct totals *tot, double secs, bool details)
{
	int i, j, order[MAX_REASONS];

	for (i = 1; i < NR_WHYS && details; i++) {
		const long *acc = tot->unsound_accepted_why[i];
		char first[48] = "";

		if (!tot->why[i])
			continue;
		if (acc[0] || acc[1])
			snprintf(first, sizeof(first), "; first: program %ld", tot->first_why[i]);
		kt_log(t, "unsound by the model: %ld %s (accepted: %ld default flags, %ld STATE_FREQ%s)",
		       tot->why[i], why_names[i], acc[0], acc[1], first);
	}
	for (i = 0; i < tot->nreason; i++)
		order[i] = i;
	for (i = 1; i < tot->nreason; i++)	/* most frequent first */
		for (j = i; j > 0 && tot->reason_count[order[j]] > tot->reason_count[order[j - 1]]; j--) {
			int tmp = order[j];

			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	for (i = 0; i < tot->nreason && i < 10 && details; i++)
		kt_log(t, "over-rejected: %ld \"%s\" (first: program %ld)",
		       tot->reason_count[order[i]], tot->reason[order[i]],
		       tot->reason_first[order[i]]);
	printf("# fuzz: %ld programs (%ld sound, %ld unsound by the model), accepted %ld default (%ld of them lock) / %ld STATE_FREQ; "
	       "findings: %ld verdicts differ, %ld unsound accepted (%ld default, %ld STATE_FREQ); "
	       "%ld sound refused (over-rejections); %ld runs (%ld of locking programs), %ld off by the model; %.1f s\n",
	       tot->programs, tot->sound, tot->unsound, tot->accepted[0], tot->accepted_lockers,
	       tot->accepted[1], tot->diverge, tot->unsound_accepted, tot->unsound_accepted_flag[0],
	       tot->unsound_accepted_flag[1], tot->over_rejected, tot->runs, tot->locking_runs,
	       tot->bad_runs, secs);
	if (pairs)
		printf("# fuzz: pair ops in %ld programs (%ld sound), accepted %ld default; %ld unsound accepted, %ld sound refused; %ld runs\n",
		       tot->pair, tot->pair_sound, tot->pair_accepted, tot->pair_unsound_accepted,
		       tot->pair_over_rejected, tot->pair_runs);
}

/*
 * The pair kfuncs' ids in vmlinux BTF (0022). Kernels without them get
 * no pair op, and so the programs of before; BPFLOCK_FUZZ_PAIRS=0 does
 * the same on ours.
 */
static bool find_pairs(struct kt *t)
{
	static const char *const names[] = { "bpf_spin_lock_pair", "bpf_spin_unlock_pair" };
	const char *env = getenv("BPFLOCK_FUZZ_PAIRS");
	struct btf *vmlinux;
	int i;

	if (env && !atoi(env)) {
		kt_log(t, "BPFLOCK_FUZZ_PAIRS=0: no pair ops");
		return false;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		kt_log(t, "no vmlinux BTF (%s): no pair ops", strerror(errno));
		return false;
	}
	for (i = 0; i < 2; i++)
		pair_fn[i] = btf__find_by_name_kind(vmlinux, names[i], BTF_KIND_FUNC);
	btf__free(vmlinux);
	if (pair_fn[0] <= 0 || pair_fn[1] <= 0) {
		kt_log(t, "%s and %s not in vmlinux BTF (the kernel has no 0022): no pair ops",
		       names[0], names[1]);
		return false;
	}
	kt_log(t, "pair ops: %s is BTF id %d, %s %d", names[0], pair_fn[0], names[1], pair_fn[1]);
	return true;
}

static void fuzz(struct kt *t, bool check_runs)
{
	/* an explicit count is taken as it is; the default scales */
	long n = getenv("BPFLOCK_FUZZ_N") ? atol(getenv("BPFLOCK_FUZZ_N")) : kt_scaled(1500);
	long first = getenv("BPFLOCK_FUZZ_FIRST") ? atol(getenv("BPFLOCK_FUZZ_FIRST")) : 0;
	const char *s = getenv("BPFLOCK_FUZZ_SEED");
	unsigned long long seed = s ? strtoull(s, NULL, 0) : 0x5eed10c4b1f5ULL;
	static struct totals tot;
	int map = lock_array();
	struct timespec t0, t1;
	long i;

	if (!KT_OK(t, map, "create the lock array") ||
	    !KT_OK(t, load_func_btf(), "load the functions' BTF"))
		return;
	pairs = find_pairs(t);
	sub_may_keep_lock = !strcmp(kt_base(), "6.12");
	kt_log(t, "seed %#llx, programs %ld..%ld", seed, first, first + n - 1);
	memset(&tot, 0, sizeof(tot));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = first; i < first + n && !t->failed; i++, tot.programs++)
		one_program(t, map, i, mix64(seed + i * 0x9e3779b97f4a7c15ULL), check_runs, &tot);
	close(map);
	close(fbtf.fd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_totals(t, &tot, t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9, !check_runs);
	if (!check_runs) {
		KT_EQ(t, tot.diverge, 0, "programs whose verdict depends on BPF_F_TEST_STATE_FREQ");
		KT_EQ(t, tot.unsound_accepted, 0, "unsound programs accepted");
		/* the feature works at all (a short reproduction run may have none) */
		if (tot.programs >= 100)
			KT_TRUE(t, tot.accepted_lockers > 0, "some program that locks was accepted");
		if (tot.programs >= 100 && pairs)
			KT_TRUE(t, tot.pair_accepted > 0, "some program with pair ops was accepted");
	} else {
		KT_EQ(t, tot.bad_runs, 0, "runs whose counters differ from the model");
		if (tot.programs >= 100)
			KT_TRUE(t, tot.locking_runs > 0, "some accepted program that locks ran");
		if (tot.programs >= 100 && pairs)
			KT_TRUE(t, tot.pair_runs > 0, "some accepted program with pair ops ran");
	}
}

static void verdicts(struct kt *t, const void *arg)
{
	fuzz(t, false);
}

static void runs(struct kt *t, const void *arg)
{
	fuzz(t, true);
}

int main(int argc, char **argv)
{
	static const struct kt_case cases[] = {
		{ "verdicts", KT_BEYOND, verdicts, KT_ON_BASE("6.12", KT_FEATURE) },
		{ "runs", KT_FEATURE, runs },
	};

	return kt_main(argc, argv, "fuzz", cases, KT_ARRAY_SIZE(cases));
}
