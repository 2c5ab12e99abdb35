// SPDX-License-Identifier: GPL-2.0
/*
 * A verifier fuzzer for bpf_spin_lock: random tc programs built around
 * lock and unlock of the elements of a 4-element array, with branches on
 * run-time data, pointer moves between registers, spills and fills,
 * static subprogram calls and bpf_for_each_map_elem callbacks.
 *
 * The generator knows what it generated: for every path (every value of
 * the branch bits) it replays the program on a model of the elements'
 * locks, and calls the program unsound if some path takes a lock while
 * holding one, releases a lock it does not hold or another element's,
 * or returns holding one. Each program is verified twice, with default
 * flags and with BPF_F_TEST_STATE_FREQ. Findings:
 *   - the two verdicts differ;
 *   - an unsound program is accepted (never run: it would hang a CPU).
 * Accepted sound programs are run once per path (the packet length
 * carries the branch bits) and every element's counter must move by
 * exactly what the model says. Sound programs the verifier refuses are
 * counted ("over-rejections": the verifier is conservative), not failed.
 *
 * BPFLOCK_FUZZ_SEED picks the programs (default fixed), BPFLOCK_FUZZ_N
 * how many (default 1500 scaled by BPFLOCK_SCALE; make test-debug asks
 * for 2000 on the debug kernels). A longer campaign:
 *   make vm-run KERNEL=ours RUN='BPFLOCK_FUZZ_N=50000 /tests/bin/fuzz'
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "insn.h"
#include "progs.h"

#define NR_ELEMS 4
#define LOCK_OFF 4
#define NR_BITS 4
#define MAX_OPS 48
#define MAX_INSNS 1024
#define PKT_BASE 64	/* packet length = PKT_BASE + branch bits */

enum op_kind {
	OP_LOCK, OP_UNLOCK, OP_INC, OP_MOV, OP_SPILL, OP_FILL,
	OP_IF, OP_ELSE, OP_END,		/* IF bit { ... } ELSE { ... } END */
	OP_CALL, OP_FOREACH,
};

/* What a subprogram or callback does with the element it is given. */
enum body { LOCK_INC_UNLOCK, LOCK_ONLY, UNLOCK_ONLY, NR_BODIES };

struct op {
	enum op_kind kind;
	int a, b;	/* registers (7..9), slot (0..1), bit, or body */
};

struct fprog {
	int keys[3];		/* r7, r8, r9 = &elem[keys[i]] */
	struct op op[MAX_OPS];
	int nop;
};

static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng >> 11) % n;
}

static int rreg(void)
{
	return 7 + rnd(3);
}

static void push(struct fprog *p, enum op_kind kind, int a, int b)
{
	if (p->nop < MAX_OPS)
		p->op[p->nop++] = (struct op){ kind, a, b };
}

/* Straight-line filler, no locks. */
static void gen_filler(struct fprog *p, int n)
{
	while (n--) {
		switch (rnd(5)) {
		case 0:
			push(p, OP_MOV, rreg(), rreg());
			break;
		case 1:
			push(p, OP_SPILL, rnd(2), rreg());
			break;
		case 2:
			push(p, OP_FILL, rreg(), rnd(2));
			break;
		default:
			push(p, OP_INC, rreg(), 0);
		}
	}
}

static void gen_block(struct fprog *p, int depth);

static void gen_if(struct fprog *p, int depth)
{
	push(p, OP_IF, rnd(NR_BITS), 0);
	gen_block(p, depth + 1);
	if (rnd(2)) {
		push(p, OP_ELSE, 0, 0);
		gen_block(p, depth + 1);
	}
	push(p, OP_END, 0, 0);
}

static void gen_block(struct fprog *p, int depth)
{
	int n = 1 + rnd(3);

	while (n-- && p->nop < MAX_OPS - 8) {
		unsigned int c = rnd(12);

		if (c < 2)
			push(p, OP_LOCK, rreg(), 0);
		else if (c < 4)
			push(p, OP_UNLOCK, rreg(), 0);
		else if (c < 5 && depth < 3)
			gen_if(p, depth);
		else if (c < 6)
			push(p, OP_CALL, rreg(), rnd(NR_BODIES));
		else if (c < 7)
			push(p, OP_FOREACH, 0, rnd(NR_BODIES));
		else
			gen_filler(p, 1);
	}
}

/*
 * Half the programs follow the shape that hides a held lock from pruning:
 * lock through a register, change what some register or slot holds on
 * one arm of a branch, unlock through one of them after the join.
 */
static void generate(struct fprog *p)
{
	int i, r;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < 3; i++)
		p->keys[i] = rnd(NR_ELEMS);
	if (rnd(2)) {
		r = rreg();
		gen_filler(p, rnd(3));
		push(p, OP_LOCK, r, 0);
		push(p, OP_IF, rnd(NR_BITS), 0);
		gen_filler(p, 1 + rnd(3));
		if (rnd(2)) {
			push(p, OP_ELSE, 0, 0);
			gen_filler(p, 1 + rnd(2));
		}
		push(p, OP_END, 0, 0);
		if (rnd(3) == 0)
			push(p, OP_FILL, rreg(), rnd(2));
		push(p, OP_UNLOCK, rnd(3) ? r : rreg(), 0);
		gen_filler(p, rnd(2));
	} else {
		gen_block(p, 0);
		gen_block(p, 0);
	}
}

/* ---- the model: replay one path ---- */

struct model {
	int reg[10];
	int slot[2];
	int held;		/* element index, -1: none */
	int count[NR_ELEMS];
	const char *why;	/* first unsound step, NULL: sound */
};

static void unsound(struct model *m, const char *why)
{
	if (!m->why)
		m->why = why;
}

static void m_lock(struct model *m, int e)
{
	if (m->held >= 0)
		unsound(m, m->held == e ? "locks the element it holds (deadlock)" :
					 "takes a second lock");
	m->held = e;
}

static void m_unlock(struct model *m, int e)
{
	if (m->held < 0)
		unsound(m, "releases a lock it does not hold");
	else if (m->held != e)
		unsound(m, "releases another element's lock");
	m->held = -1;
}

static void m_body(struct model *m, enum body body, int e)
{
	switch (body) {
	case LOCK_INC_UNLOCK:
		m_lock(m, e);
		m->count[e]++;
		m_unlock(m, e);
		break;
	case LOCK_ONLY:
		m_lock(m, e);
		break;
	case UNLOCK_ONLY:
		m_unlock(m, e);
		break;
	default:
		break;
	}
}

/* Index of the op after the matching ELSE or END of the IF at i. */
static int skip_block(const struct fprog *p, int i, bool to_else)
{
	int depth = 0;

	for (i++; i < p->nop; i++) {
		if (p->op[i].kind == OP_IF)
			depth++;
		else if (p->op[i].kind == OP_END && depth-- == 0)
			return i + 1;
		else if (p->op[i].kind == OP_ELSE && depth == 0 && to_else)
			return i + 1;
	}
	return i;
}

static void replay(const struct fprog *p, unsigned int bits, struct model *m)
{
	int i, e;

	memset(m, 0, sizeof(*m));
	m->held = -1;
	for (i = 0; i < 3; i++)
		m->reg[7 + i] = p->keys[i];
	m->slot[0] = p->keys[0];
	m->slot[1] = p->keys[1];
	for (i = 0; i < p->nop;) {
		const struct op *o = &p->op[i];

		switch (o->kind) {
		case OP_LOCK:
			m_lock(m, m->reg[o->a]);
			break;
		case OP_UNLOCK:
			m_unlock(m, m->reg[o->a]);
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
			if (!(bits & (1u << o->a))) {
				i = skip_block(p, i, true);
				continue;
			}
			break;
		case OP_ELSE:	/* end of the taken THEN: skip the ELSE */
			i = skip_block(p, i, false);
			continue;
		case OP_END:
			break;
		case OP_CALL:
			m_body(m, o->b, m->reg[o->a]);
			break;
		case OP_FOREACH:
			for (e = 0; e < NR_ELEMS; e++)
				m_body(m, o->b, e);
			break;
		}
		i++;
	}
	if (m->held >= 0)
		unsound(m, "returns holding a lock");
}

/* ---- code generation ---- */

struct asmb {
	struct bpf_insn insn[MAX_INSNS];
	int n;
	int fixup_exit[4];
	int nfix;
	int call_site[MAX_OPS + NR_BODIES];	/* pseudo calls/funcs to patch */
	int call_body[MAX_OPS + NR_BODIES];
	bool call_is_func[MAX_OPS + NR_BODIES];
	int ncall;
};

static int put(struct asmb *a, struct bpf_insn i)
{
	if (a->n < MAX_INSNS)
		a->insn[a->n] = i;
	return a->n++;
}

static void put_lock(struct asmb *a, int reg, int fn)
{
	put(a, I_MOV64_REG(BPF_REG_1, reg));
	put(a, I_ADD64_IMM(BPF_REG_1, LOCK_OFF));
	put(a, I_CALL(fn));
}

static void put_inc(struct asmb *a, int reg)
{
	put(a, I_LDX_W(BPF_REG_0, reg, 0));
	put(a, I_ADD64_IMM(BPF_REG_0, 1));
	put(a, ((struct bpf_insn){ BPF_STX | BPF_MEM | BPF_W, reg, BPF_REG_0, 0, 0 }));
}

static void put_body(struct asmb *a, enum body body, int reg)
{
	if (body != UNLOCK_ONLY)
		put_lock(a, reg, BPF_FUNC_spin_lock);
	if (body == LOCK_INC_UNLOCK)
		put_inc(a, reg);
	if (body != LOCK_ONLY)
		put_lock(a, reg, BPF_FUNC_spin_unlock);
	put(a, I_MOV64_IMM(BPF_REG_0, 0));
	put(a, I_EXIT());
}

static int slot_off(int s)
{
	return -16 - 8 * s;
}

static void compile(const struct fprog *p, int map, struct asmb *a)
{
	int stack[MAX_OPS], sp = 0, i, sub_start[2][NR_BODIES];

	memset(a, 0, sizeof(*a));
	put(a, I_MOV64_REG(BPF_REG_6, BPF_REG_1));
	for (i = 0; i < 3; i++) {
		struct bpf_insn ld[] = { I_LD_MAP_FD(BPF_REG_1, map) };

		put(a, I_ST_W(BPF_REG_10, -4, p->keys[i]));
		put(a, ld[0]);
		put(a, ld[1]);
		put(a, I_MOV64_REG(BPF_REG_2, BPF_REG_10));
		put(a, I_ADD64_IMM(BPF_REG_2, -4));
		put(a, I_CALL(BPF_FUNC_map_lookup_elem));
		a->fixup_exit[a->nfix++] = put(a, I_JEQ_IMM(BPF_REG_0, 0, 0));
		put(a, I_MOV64_REG(7 + i, BPF_REG_0));
	}
	put(a, I_STX_DW(BPF_REG_10, BPF_REG_7, slot_off(0)));
	put(a, I_STX_DW(BPF_REG_10, BPF_REG_8, slot_off(1)));
	for (i = 0; i < p->nop; i++) {
		const struct op *o = &p->op[i];
		int at;

		switch (o->kind) {
		case OP_LOCK:
			put_lock(a, o->a, BPF_FUNC_spin_lock);
			break;
		case OP_UNLOCK:
			put_lock(a, o->a, BPF_FUNC_spin_unlock);
			break;
		case OP_INC:
			put_inc(a, o->a);
			break;
		case OP_MOV:
			put(a, I_MOV64_REG(o->a, o->b));
			break;
		case OP_SPILL:
			put(a, I_STX_DW(BPF_REG_10, o->b, slot_off(o->a)));
			break;
		case OP_FILL:
			put(a, I_LDX_DW(o->a, BPF_REG_10, slot_off(o->b)));
			break;
		case OP_IF:
			put(a, I_LDX_W(BPF_REG_0, BPF_REG_6, offsetof(struct __sk_buff, len)));
			put(a, ((struct bpf_insn){ BPF_ALU64 | BPF_AND | BPF_K, 0, 0, 0, 1 << o->a }));
			stack[sp++] = put(a, I_JEQ_IMM(BPF_REG_0, 0, 0));
			break;
		case OP_ELSE:
			at = put(a, I_JA(0));
			a->insn[stack[sp - 1]].off = a->n - stack[sp - 1] - 1;
			stack[sp - 1] = at;
			break;
		case OP_END:
			at = stack[--sp];
			a->insn[at].off = a->n - at - 1;
			break;
		case OP_CALL:
			put(a, I_MOV64_REG(BPF_REG_1, o->a));
			a->call_body[a->ncall] = o->b;
			a->call_is_func[a->ncall] = false;
			a->call_site[a->ncall++] = put(a, I_CALL_SUB(0));
			break;
		case OP_FOREACH: {
			struct bpf_insn ld[] = { I_LD_MAP_FD(BPF_REG_1, map) };

			put(a, ld[0]);
			put(a, ld[1]);
			a->call_body[a->ncall] = o->b;
			a->call_is_func[a->ncall] = true;
			a->call_site[a->ncall++] =
				put(a, ((struct bpf_insn){ BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2,
							   BPF_PSEUDO_FUNC, 0, 0 }));
			put(a, ((struct bpf_insn){ 0, 0, 0, 0, 0 }));
			put(a, I_MOV64_IMM(BPF_REG_3, 0));
			put(a, I_MOV64_IMM(BPF_REG_4, 0));
			put(a, I_CALL(BPF_FUNC_for_each_map_elem));
			break;
		}
		default:
			break;
		}
	}
	for (i = 0; i < a->nfix; i++)
		a->insn[a->fixup_exit[i]].off = a->n - a->fixup_exit[i] - 1;
	put(a, I_MOV64_IMM(BPF_REG_0, 0));
	put(a, I_EXIT());
	/*
	 * The subprograms (element in r1) and callbacks (element in r3) that
	 * are used: the verifier refuses unreachable code.
	 */
	memset(sub_start, -1, sizeof(sub_start));
	for (i = 0; i < a->ncall; i++) {
		int kind = a->call_is_func[i], body = a->call_body[i];

		if (sub_start[kind][body] >= 0)
			continue;
		sub_start[kind][body] = a->n;
		put(a, I_MOV64_REG(BPF_REG_6, kind ? BPF_REG_3 : BPF_REG_1));
		put_body(a, body, BPF_REG_6);
	}
	for (i = 0; i < a->ncall; i++) {
		int site = a->call_site[i];

		a->insn[site].imm = sub_start[a->call_is_func[i]][a->call_body[i]] - site - 1;
	}
}

/* ---- running ---- */

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

static char vlog[1 << 16];

static int load(const struct asmb *a, __u32 flags)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = flags,
		    .log_buf = vlog, .log_size = sizeof(vlog), .log_level = 1);
	int fd;

	vlog[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "fuzz", "GPL", a->insn, a->n, &opts);
	if (fd < 0 && errno == ENOSPC) {	/* log too long: verdict only */
		opts.log_level = 0;
		opts.log_buf = NULL;
		opts.log_size = 0;
		fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "fuzz", "GPL", a->insn, a->n, &opts);
	}
	return fd < 0 ? -errno : fd;
}

static const char *const op_names[] = {
	"lock", "unlock", "inc", "mov", "spill", "fill", "if", "else", "end", "call", "foreach",
};
static const char *const body_names[] = { "lock+inc+unlock", "lock", "unlock" };

static void dump(struct kt *t, const struct fprog *p)
{
	char line[1024];
	int i, n;

	n = snprintf(line, sizeof(line), "r7=&e%d r8=&e%d r9=&e%d;", p->keys[0], p->keys[1],
		     p->keys[2]);
	for (i = 0; i < p->nop && n < (int)sizeof(line) - 40; i++) {
		const struct op *o = &p->op[i];

		switch (o->kind) {
		case OP_CALL:
		case OP_FOREACH:
			n += snprintf(line + n, sizeof(line) - n, " %s(r%d:%s)", op_names[o->kind],
				      o->a, body_names[o->b]);
			break;
		case OP_IF:
			n += snprintf(line + n, sizeof(line) - n, " if(bit%d){", o->a);
			break;
		case OP_ELSE:
			n += snprintf(line + n, sizeof(line) - n, " }else{");
			break;
		case OP_END:
			n += snprintf(line + n, sizeof(line) - n, " }");
			break;
		default:
			n += snprintf(line + n, sizeof(line) - n, " %s(%d,%d)", op_names[o->kind],
				      o->a, o->b);
		}
	}
	kt_log(t, "  %s", line);
}

struct totals {
	long programs, unsound, accepted[2], diverge, unsound_accepted, over_rejected;
	long accepted_lockers;	/* accepted programs that call bpf_spin_lock() */
	long runs, bad_runs;
};

/* Run a sound accepted program once per path; counters must match. */
static void run_paths(struct kt *t, int fd, int map, const struct fprog *p, struct totals *tot)
{
	int want[NR_ELEMS] = {}, key, i;
	struct model m;
	unsigned int bits;
	char pkt[PKT_BASE + (1 << NR_BITS)] = {};

	for (key = 0; key < NR_ELEMS; key++) {
		int zero[4] = {};

		bpf_map_update_elem(map, &key, zero, 0);
	}
	for (bits = 0; bits < (1u << NR_BITS); bits++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
			    .data_size_in = PKT_BASE + bits, .repeat = 1);

		replay(p, bits, &m);
		for (i = 0; i < NR_ELEMS; i++)
			want[i] += m.count[i];
		if (bpf_prog_test_run_opts(fd, &opts)) {
			kt_fail(t, "test_run: %s", strerror(errno));
			return;
		}
		tot->runs++;
	}
	for (key = 0; key < NR_ELEMS; key++) {
		int v[4];

		/* under the lock: it must be free; no flag on kernels without it */
		if (bpf_map_lookup_elem_flags(map, &key, v, BPF_F_LOCK) &&
		    (errno != EINVAL || bpf_map_lookup_elem(map, &key, v)))
			v[0] = -1;
		if (v[0] != want[key]) {
			tot->bad_runs++;
			if (tot->bad_runs <= 3) {
				kt_log(t, "element %d counted %d, the model says %d", key, v[0],
				       want[key]);
				dump(t, p);
			}
			return;
		}
	}
}

static bool takes_lock(const struct fprog *p)
{
	int i;

	for (i = 0; i < p->nop; i++)
		if (p->op[i].kind == OP_LOCK ||
		    ((p->op[i].kind == OP_CALL || p->op[i].kind == OP_FOREACH) &&
		     p->op[i].b != UNLOCK_ONLY))
			return true;
	return false;
}

static void fuzz(struct kt *t, bool check_runs)
{
	/* an explicit count is taken as it is; the default scales */
	long n = getenv("BPFLOCK_FUZZ_N") ? atol(getenv("BPFLOCK_FUZZ_N")) : kt_scaled(1500);
	const char *seed = getenv("BPFLOCK_FUZZ_SEED");
	struct totals tot = {};
	static struct asmb a;
	struct fprog p;
	struct model m;
	int map = lock_array(), fd[2], f;
	unsigned int bits;
	const char *why;

	if (!KT_OK(t, map, "create the lock array"))
		return;
	rng = seed ? strtoull(seed, NULL, 0) : 0x5eed10c4b1f5ULL;
	if (!rng)
		rng = 1;
	kt_log(t, "seed %#llx, %ld programs", rng, n);
	for (tot.programs = 0; tot.programs < n; tot.programs++) {
		generate(&p);
		why = NULL;
		for (bits = 0; bits < (1u << NR_BITS) && !why; bits++) {
			replay(&p, bits, &m);
			why = m.why;
		}
		bits--;
		tot.unsound += !!why;
		compile(&p, map, &a);
		for (f = 0; f < 2; f++) {
			fd[f] = load(&a, f ? BPF_F_TEST_STATE_FREQ : 0);
			tot.accepted[f] += fd[f] >= 0;
		}
		tot.accepted_lockers += fd[0] >= 0 && takes_lock(&p);
		if ((fd[0] >= 0) != (fd[1] >= 0)) {
			tot.diverge++;
			if (tot.diverge <= 3) {
				kt_log(t, "program %ld: default flags %s it, BPF_F_TEST_STATE_FREQ %s it",
				       tot.programs, fd[0] >= 0 ? "accept" : "refuse",
				       fd[1] >= 0 ? "accept" : "refuse");
				dump(t, &p);
			}
		}
		if (why && (fd[0] >= 0 || fd[1] >= 0)) {
			tot.unsound_accepted++;
			if (tot.unsound_accepted <= 3) {
				kt_log(t, "program %ld accepted (%s), yet on path bits=%#x it %s",
				       tot.programs, fd[0] >= 0 ? "default flags" : "STATE_FREQ",
				       bits, why);
				dump(t, &p);
			}
		} else if (!why && fd[0] < 0) {
			tot.over_rejected++;
		} else if (!why && check_runs) {
			run_paths(t, fd[0], map, &p, &tot);
		}
		for (f = 0; f < 2; f++)
			if (fd[f] >= 0)
				close(fd[f]);
	}
	close(map);
	printf("# fuzz: %ld programs (%ld unsound by the model), accepted %ld (default, %ld of them lock) / %ld (STATE_FREQ), "
	       "%ld verdicts differ, %ld unsound accepted, %ld sound refused, %ld runs, %ld runs off by the model\n",
	       tot.programs, tot.unsound, tot.accepted[0], tot.accepted_lockers, tot.accepted[1], tot.diverge,
	       tot.unsound_accepted, tot.over_rejected, tot.runs, tot.bad_runs);
	if (!check_runs) {
		KT_EQ(t, tot.diverge, 0, "programs whose verdict depends on BPF_F_TEST_STATE_FREQ");
		KT_EQ(t, tot.unsound_accepted, 0, "unsound programs accepted");
		KT_TRUE(t, tot.accepted_lockers > 0, "some program that locks was accepted");
	} else {
		KT_EQ(t, tot.bad_runs, 0, "accepted programs whose counters differ from the model");
		KT_TRUE(t, tot.runs > 0, "some accepted program ran");
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
		{ "verdicts", KT_BEYOND, verdicts },
		{ "runs", KT_FEATURE, runs },
	};

	return kt_main(argc, argv, "fuzz", cases, KT_ARRAY_SIZE(cases));
}
