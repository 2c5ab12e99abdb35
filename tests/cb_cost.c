// SPDX-License-Identifier: GPL-2.0
/*
 * What callbacks cost the verifier. 0025 walked every bounded callback
 * run by run, runs x paths, and refused with E2BIG programs that stock
 * 6.1 and stock 6.12 load with a few thousand instructions or less. Each
 * case here is one such shape, built instruction by instruction, and
 * must load on every kernel with at most MAX instructions processed (the
 * "processed N insns" of the log, every pass counted): 1.5x what stock
 * 6.12's verifier, which verifies callbacks to convergence, processed
 * for these very programs (docs/bench/stock-6.12-verifier.md; the
 * outside review's own programs of the same shapes in brackets).
 *
 * - straight_loop128: bpf_loop(128) over a straight-line callback of
 *   BODY instructions (6.12: 8,011 [8,029]).
 * - straight_for_each128: the same body over an array of 128
 *   (6.12: 8,011 [8,015]).
 * - nested_loop128: bpf_loop(128) whose callback runs bpf_loop(128) over
 *   a 40-instruction body (6.12: 59 [117]).
 * - coin_counter24: 24 runs, each adding 1 to a caller's counter on a
 *   coin flip, the caller returning the counter (6.12: 36 [496]).
 * - hash_chain8: a hash map's callback writes a chain of 8 of its
 *   caller's slots (slot j + 1 only where slot j is not 0); the caller
 *   then indexes a map value with a constant it keeps in a ninth slot,
 *   which the callback never writes. 0025 refused it: after 8 passes it
 *   took every slot as written, the constant too; 0041 verified it again
 *   for each link found (675 instructions). Runs that converge see the
 *   chain settle in one pass (6.12: 323 [349]).
 * - hash_chain40: the same with 40 links, which 0041 refused with E2BIG
 *   (one pass per link). No 6.12 figure: the bound (20,000) only says
 *   that the runs converge in one pass.
 * - long_callback_states: the states a long callback makes the verifier
 *   keep. main fills 448 bytes of its stack (copied into every state) and
 *   runs bpf_loop(2) of a callback of LONG_CALLS helper calls, each
 *   followed by a prune point. 0057 keeps a state at every prune point of
 *   a callback, at most one per 4 instructions processed in the load;
 *   without that cap this program kept 60,003 states (776 MB in a 2 GiB
 *   guest; 150,000 calls OOM-killed the loader), stock-6.1 7,501. Bound:
 *   LONG_CALLS * 1.5 instructions, processed / 4 + 16 states.
 * - narrow_counter: a u32 counter in main's stack that the callback of a
 *   bpf_loop() of unknown count fills, adds 1 to with a 64-bit add (what
 *   clang emits for ctx->cnt++ without alu32) and stores back; main then
 *   checks it and indexes a value with it. 0058 first bounded every
 *   widened 4-byte slot to 32 bits, and this slot, [1, 1 << 32] after
 *   each widened run, never converged (the load did not end in 15
 *   minutes; an attacker's review). Bound: 1,000 instructions (ours-6.1
 *   150, stock-6.1 30). 6.1 only: upstream's verifier never converges
 *   on it either (stock-6.12: E2BIG at 1M instructions; ours-6.12 did
 *   not end within the case's 300 s).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "insn.h"
#include "progs.h"

#define BODY 8000
#define LONG_CALLS 60000

static char vlog[1 << 16];

#define MAX_FUNCS 4

/* A growing program, and where its functions start (for func_info) */
struct cprog {
	struct bpf_insn *insn;
	int n;
	struct bpf_func_info func[MAX_FUNCS];
	int nargs[MAX_FUNCS];
	int nfunc;
};

static void put(struct cprog *p, struct bpf_insn i)
{
	p->insn[p->n++] = i;
}

/* r2 = the callback that starts at instruction @target (patched later) */
static int put_ld_func(struct cprog *p)
{
	struct bpf_insn ld[] = { I_LD_FUNC(BPF_REG_2, 0) };
	int at = p->n;

	put(p, ld[0]);
	put(p, ld[1]);
	return at;
}

/* The callback that @ld_at loads, taking @nargs arguments, starts here */
static void aim(struct cprog *p, int ld_at, int nargs)
{
	p->insn[ld_at].imm = p->n - ld_at - 1;
	p->func[p->nfunc].insn_off = p->n;
	p->nargs[p->nfunc++] = nargs;
}

static void put_map(struct cprog *p, int reg, int fd)
{
	struct bpf_insn ld[] = { I_LD_MAP_FD(reg, fd) };

	put(p, ld[0]);
	put(p, ld[1]);
}

/* r0 = 0; exit */
static void put_ret0(struct cprog *p)
{
	put(p, I_MOV64_IMM(BPF_REG_0, 0));
	put(p, I_EXIT());
}

/* A straight-line body: n additions to r5 */
static void put_body(struct cprog *p, int n)
{
	int i;

	put(p, I_MOV64_IMM(BPF_REG_5, 0));
	for (i = 0; i < n; i++)
		put(p, I_ADD64_IMM(BPF_REG_5, 1));
}

/* call bpf_loop(runs, callback at ld's target, ctx r3 as set, 0) */
static int put_loop(struct cprog *p, int runs)
{
	int ld;

	put(p, I_MOV64_IMM(BPF_REG_1, runs));
	ld = put_ld_func(p);
	put(p, I_MOV64_IMM(BPF_REG_4, 0));
	put(p, I_CALL(BPF_FUNC_loop));
	return ld;
}

static void build_straight_loop(struct cprog *p, int map)
{
	int ld;

	put(p, I_MOV64_IMM(BPF_REG_3, 0));
	ld = put_loop(p, 128);
	put_ret0(p);
	aim(p, ld, 2);
	put_body(p, BODY);
	put_ret0(p);
}

static void build_straight_for_each(struct cprog *p, int map)
{
	int ld;

	put_map(p, BPF_REG_1, map);
	ld = put_ld_func(p);
	put(p, I_MOV64_IMM(BPF_REG_3, 0));
	put(p, I_MOV64_IMM(BPF_REG_4, 0));
	put(p, I_CALL(BPF_FUNC_for_each_map_elem));
	put_ret0(p);
	aim(p, ld, 4);
	put_body(p, BODY);
	put_ret0(p);
}

static void build_nested_loop(struct cprog *p, int map)
{
	int ld_outer, ld_inner;

	put(p, I_MOV64_IMM(BPF_REG_3, 0));
	ld_outer = put_loop(p, 128);
	put_ret0(p);
	aim(p, ld_outer, 2);
	put(p, I_MOV64_IMM(BPF_REG_3, 0));
	ld_inner = put_loop(p, 128);
	put_ret0(p);
	aim(p, ld_inner, 2);
	put_body(p, 40);
	put_ret0(p);
}

static void build_coin_counter(struct cprog *p, int map)
{
	int ld;

	put(p, I_MOV64_IMM(BPF_REG_1, 0));
	put(p, I_STX_DW(BPF_REG_10, BPF_REG_1, -8));
	put(p, I_MOV64_REG(BPF_REG_3, BPF_REG_10));
	put(p, I_ADD64_IMM(BPF_REG_3, -8));
	ld = put_loop(p, 24);
	put(p, I_LDX_DW(BPF_REG_0, BPF_REG_10, -8));
	put(p, I_EXIT());
	/* callback(index, counter): on a coin flip, *counter += 1 */
	aim(p, ld, 2);
	put(p, I_MOV64_REG(BPF_REG_6, BPF_REG_2));
	put(p, I_CALL(BPF_FUNC_get_prandom_u32));
	put(p, I_AND64_IMM(BPF_REG_0, 1));
	put(p, I_JEQ_IMM(BPF_REG_0, 0, 3));
	put(p, I_LDX_DW(BPF_REG_1, BPF_REG_6, 0));
	put(p, I_ADD64_IMM(BPF_REG_1, 1));
	put(p, I_STX_DW(BPF_REG_6, BPF_REG_1, 0));
	put_ret0(p);
}

/*
 * Slots fp-8 .. fp-8 * @links form the chain (fp-8 * @links is the
 * callback's context and slot 0 of the chain, fp-8 slot @links - 1); the
 * slot below keeps the constant 7. A hash map's callback gets (map, key,
 * value, ctx).
 */
static void build_hash_chain(struct cprog *p, int hash, int array, int links)
{
	int ld, j, exit_jump, konst = -8 * (links + 1);

	put(p, I_MOV64_IMM(BPF_REG_1, 0));
	for (j = 0; j < links; j++)
		put(p, I_STX_DW(BPF_REG_10, BPF_REG_1, -8 * (j + 1)));
	put(p, I_MOV64_IMM(BPF_REG_1, 7));
	put(p, I_STX_DW(BPF_REG_10, BPF_REG_1, konst));
	put_map(p, BPF_REG_1, hash);
	ld = put_ld_func(p);
	put(p, I_MOV64_REG(BPF_REG_3, BPF_REG_10));
	put(p, I_ADD64_IMM(BPF_REG_3, -8 * links));
	put(p, I_MOV64_IMM(BPF_REG_4, 0));
	put(p, I_CALL(BPF_FUNC_for_each_map_elem));
	/* value = lookup(array, 0); return value[the constant] */
	put(p, I_ST_W(BPF_REG_10, konst - 4, 0));
	put_map(p, BPF_REG_1, array);
	put(p, I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	put(p, I_ADD64_IMM(BPF_REG_2, konst - 4));
	put(p, I_CALL(BPF_FUNC_map_lookup_elem));
	exit_jump = p->n;
	put(p, I_JEQ_IMM(BPF_REG_0, 0, 0));
	put(p, I_LDX_DW(BPF_REG_1, BPF_REG_10, konst));
	put(p, I_ADD64_REG(BPF_REG_0, BPF_REG_1));
	put(p, I_LDX_B(BPF_REG_0, BPF_REG_0, 0));
	put(p, I_EXIT());
	p->insn[exit_jump].off = p->n - exit_jump - 1;
	put_ret0(p);
	/* the callback: r4 = the chain, slot j at 8 * j */
	aim(p, ld, 4);
	/* last link first: one pass of the verifier finds one more write */
	for (j = links - 2; j >= 0; j--) {
		put(p, I_LDX_DW(BPF_REG_1, BPF_REG_4, 8 * j));
		put(p, I_JEQ_IMM(BPF_REG_1, 0, 1));
		put(p, I_STX_DW(BPF_REG_4, BPF_REG_1, 8 * (j + 1)));
	}
	put(p, I_MOV64_IMM(BPF_REG_1, 1));
	put(p, I_STX_DW(BPF_REG_4, BPF_REG_1, 0));
	put_ret0(p);
}

struct cost_case {
	void (*build)(struct cprog *p, int map);
	long max;		/* 1.5 x stock 6.12's count (hash_chain8: see above) */
	bool hash;		/* build gets a hash map (and the array through arrays) */
	long insns_per_state;	/* if set: total_states <= processed / it + 16 */
	const char *not_612;	/* if set: skipped on 6.12, for this reason */
};

static int array_of(int entries, int value_size)
{
	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "cost", sizeof(int), value_size,
			      entries, NULL);
}

static int chain_hash = -1;

static void build_long_callback(struct cprog *p, int map)
{
	int ld, off, i;

	for (off = -8; off >= -448; off -= 8)
		put(p, I_ST_DW(BPF_REG_10, off, 1));
	put(p, I_MOV64_IMM(BPF_REG_3, 0));
	ld = put_loop(p, 2);
	put_ret0(p);
	aim(p, ld, 2);
	for (i = 0; i < LONG_CALLS; i++)
		put(p, I_CALL(BPF_FUNC_get_prandom_u32));
	put_ret0(p);
}

static void build_narrow_counter(struct cprog *p, int map)
{
	int ld, out;

	put(p, I_CALL(BPF_FUNC_get_prandom_u32));
	put(p, I_STX_W(BPF_REG_10, BPF_REG_0, -4));
	put(p, I_MOV64_IMM(BPF_REG_1, 0));
	put(p, I_STX_W(BPF_REG_10, BPF_REG_1, -8));
	put(p, I_CALL(BPF_FUNC_get_prandom_u32));
	put(p, I_MOV64_REG(BPF_REG_3, BPF_REG_10));
	put(p, I_ADD64_IMM(BPF_REG_3, -8));
	ld = put_loop(p, 0);
	p->insn[ld - 1] = I_MOV64_REG(BPF_REG_1, BPF_REG_0);	/* the count: unknown */
	put(p, I_LDX_W(BPF_REG_6, BPF_REG_10, -8));
	out = p->n;
	put(p, I_JGT_IMM(BPF_REG_6, 3, 0));
	put(p, I_ST_W(BPF_REG_10, -16, 0));
	put_map(p, BPF_REG_1, map);
	put(p, I_MOV64_REG(BPF_REG_2, BPF_REG_10));
	put(p, I_ADD64_IMM(BPF_REG_2, -16));
	put(p, I_CALL(BPF_FUNC_map_lookup_elem));
	put(p, I_JEQ_IMM(BPF_REG_0, 0, 2));
	put(p, I_ADD64_REG(BPF_REG_0, BPF_REG_6));
	put(p, I_LDX_B(BPF_REG_1, BPF_REG_0, 0));
	p->insn[out].off = p->n - out - 1;
	put_ret0(p);
	aim(p, ld, 2);
	put(p, I_MOV64_REG(BPF_REG_7, BPF_REG_2));
	put(p, I_LDX_W(BPF_REG_3, BPF_REG_7, 0));
	put(p, I_ADD64_IMM(BPF_REG_3, 1));
	put(p, I_STX_W(BPF_REG_7, BPF_REG_3, 0));
	put_ret0(p);
}

static void build_hash_chain_case(struct cprog *p, int array)
{
	build_hash_chain(p, chain_hash, array, 8);
}

static void build_hash_chain40_case(struct cprog *p, int array)
{
	build_hash_chain(p, chain_hash, array, 40);
}

static void cost(struct kt *t, const void *arg)
{
	const struct cost_case *c = arg;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_buf = vlog, .log_size = sizeof(vlog),
		    .log_level = 4);	/* BPF_LOG_STATS: messages and statistics only */
	struct cprog p = { calloc(LONG_CALLS + 1024, sizeof(struct bpf_insn)), 0, {}, { 1 }, 1 };
	int map = array_of(128, 8), btf = -1, fd, k = 1, i;
	__u32 ids[MAX_FUNCS];
	long v = 0, processed = -1, states = -1;
	const char *stats;

	if (c->not_612 && !strcmp(kt_base(), "6.12")) {
		kt_skip(t, "a 6.1 case: %s", c->not_612);
		goto out;
	}

	if (!KT_OK(t, map, "create the array"))
		goto out;
	if (c->hash) {
		chain_hash = bpf_map_create(BPF_MAP_TYPE_HASH, "chain", sizeof(int),
					    sizeof(long), 4, NULL);
		if (!KT_OK(t, chain_hash, "create the hash map") ||
		    !KT_OK(t, bpf_map_update_elem(chain_hash, &k, &v, 0), "insert an element"))
			goto out;
	}
	c->build(&p, map);
	btf = funcs_btf_load(p.nfunc, p.nargs, ids);
	if (!KT_OK(t, btf, "load the functions' BTF"))
		goto out;
	for (i = 0; i < p.nfunc; i++)
		p.func[i].type_id = ids[i];
	opts.prog_btf_fd = btf;
	opts.func_info = p.func;
	opts.func_info_cnt = p.nfunc;
	opts.func_info_rec_size = sizeof(p.func[0]);
	vlog[0] = 0;
	fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "cost", "GPL", p.insn, p.n, &opts);
	stats = strstr(vlog, "processed ");
	if (stats)
		processed = atol(stats + strlen("processed "));
	stats = strstr(vlog, "total_states ");
	if (stats)
		states = atol(stats + strlen("total_states "));
	if (fd < 0) {
		kt_fail(t, "refused (errno %d %s); log tail:\n%s", errno, strerror(errno),
			vlog + (strlen(vlog) > 400 ? strlen(vlog) - 400 : 0));
		goto out;
	}
	kt_log(t, "%d instructions, %ld processed (at most %ld)", p.n, processed, c->max);
	KT_TRUE(t, processed > 0 && processed <= c->max,
		"processed within the case's bound");
	if (c->insns_per_state) {
		kt_log(t, "%ld states kept (at most %ld)", states,
		       processed / c->insns_per_state + 16);
		KT_TRUE(t, states > 0 && states <= processed / c->insns_per_state + 16,
			"states kept within the case's bound");
	}
	KT_OK(t, prog_run(fd, 1, NULL), "test_run");
	close(fd);
out:
	if (btf >= 0)
		close(btf);
	if (chain_hash >= 0)
		close(chain_hash);
	if (map >= 0)
		close(map);
	free(p.insn);
}

static const struct cost_case straight_loop = { build_straight_loop, 8011 * 3 / 2 };
static const struct cost_case straight_for_each = { build_straight_for_each, 8011 * 3 / 2 };
static const struct cost_case nested_loop = { build_nested_loop, 59 * 3 / 2 };
static const struct cost_case coin_counter = { build_coin_counter, 36 * 3 / 2 };
static const struct cost_case hash_chain = { build_hash_chain_case, 323 * 3 / 2, true };
static const struct cost_case hash_chain40 = { build_hash_chain40_case, 20000, true };
static const struct cost_case long_callback = { build_long_callback, LONG_CALLS * 3 / 2, false, 4 };
static const struct cost_case narrow_counter = {
	build_narrow_counter, 1000, false, 0,
	"stock-6.12 and baseline-6.12 refuse it with E2BIG, ours-6.12 does not end in 300 s"
};

int main(int argc, char **argv)
{
	static const struct kt_case cases[] = {
		{ "straight_loop128", KT_COMMON, cost, &straight_loop },
		{ "straight_for_each128", KT_COMMON, cost, &straight_for_each },
		{ "nested_loop128", KT_COMMON, cost, &nested_loop },
		{ "coin_counter24", KT_COMMON, cost, &coin_counter },
		{ "hash_chain8", KT_COMMON, cost, &hash_chain },
		{ "hash_chain40", KT_COMMON, cost, &hash_chain40 },
		{ "long_callback_states", KT_COMMON, cost, &long_callback },
		{ "narrow_counter", KT_COMMON, cost, &narrow_counter },
	};

	return kt_main(argc, argv, "cb_cost", cases, KT_ARRAY_SIZE(cases));
}
