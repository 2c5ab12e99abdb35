/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hand-written BPF instructions, for the few cases whose map is made by the
 * test itself (odd BTF layouts) and so cannot come from a compiled object.
 */
#ifndef BPFLOCK_INSN_H
#define BPFLOCK_INSN_H

#include <linux/bpf.h>

#define I_MOV64_REG(d, s)	((struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0 })
#define I_MOV64_IMM(d, i)	((struct bpf_insn){ BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i })
#define I_ADD64_REG(d, s)	((struct bpf_insn){ BPF_ALU64 | BPF_ADD | BPF_X, d, s, 0, 0 })
#define I_ADD64_IMM(d, i)	((struct bpf_insn){ BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i })
#define I_ST_W(d, off, i)	((struct bpf_insn){ BPF_ST | BPF_MEM | BPF_W, d, 0, off, i })
#define I_ST_DW(d, off, i)	((struct bpf_insn){ BPF_ST | BPF_MEM | BPF_DW, d, 0, off, i })
#define I_JEQ_IMM(d, i, off)	((struct bpf_insn){ BPF_JMP | BPF_JEQ | BPF_K, d, 0, off, i })
#define I_CALL(fn)		((struct bpf_insn){ BPF_JMP | BPF_CALL, 0, 0, 0, fn })
/* bpf-to-bpf call of the instruction off + 1 ahead */
#define I_CALL_SUB(off)		((struct bpf_insn){ BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, off })
#define I_JA(off)		((struct bpf_insn){ BPF_JMP | BPF_JA, 0, 0, off, 0 })
#define I_JGT_IMM(d, i, off)	((struct bpf_insn){ BPF_JMP | BPF_JGT | BPF_K, d, 0, off, i })
#define I_JNE_IMM(d, i, off)	((struct bpf_insn){ BPF_JMP | BPF_JNE | BPF_K, d, 0, off, i })
#define I_LDX_W(d, s, off)	((struct bpf_insn){ BPF_LDX | BPF_MEM | BPF_W, d, s, off, 0 })
#define I_LDX_DW(d, s, off)	((struct bpf_insn){ BPF_LDX | BPF_MEM | BPF_DW, d, s, off, 0 })
#define I_STX_DW(d, s, off)	((struct bpf_insn){ BPF_STX | BPF_MEM | BPF_DW, d, s, off, 0 })
#define I_EXIT()		((struct bpf_insn){ BPF_JMP | BPF_EXIT, 0, 0, 0, 0 })
#define I_AND64_IMM(d, i)	((struct bpf_insn){ BPF_ALU64 | BPF_AND | BPF_K, d, 0, 0, i })
#define I_JGE_IMM(d, i, off)	((struct bpf_insn){ BPF_JMP | BPF_JGE | BPF_K, d, 0, off, i })
#define I_JGT_REG(d, s, off)	((struct bpf_insn){ BPF_JMP | BPF_JGT | BPF_X, d, s, off, 0 })
#define I_LDX_B(d, s, off)	((struct bpf_insn){ BPF_LDX | BPF_MEM | BPF_B, d, s, off, 0 })
#define I_STX_H(d, s, off)	((struct bpf_insn){ BPF_STX | BPF_MEM | BPF_H, d, s, off, 0 })
#define I_STX_W(d, s, off)	((struct bpf_insn){ BPF_STX | BPF_MEM | BPF_W, d, s, off, 0 })
/* lock *(u32 *)(d + off) += s */
#define I_ATOMIC_ADD_W(d, s, off) \
	((struct bpf_insn){ BPF_STX | BPF_ATOMIC | BPF_W, d, s, off, BPF_ADD })
/* Two instructions: r = the address of the subprogram off + 1 ahead (a callback). */
#define I_LD_FUNC(d, off)						\
	((struct bpf_insn){ BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_FUNC, 0, off }), \
	((struct bpf_insn){ 0, 0, 0, 0, 0 })
/* Two instructions: r = map (by fd). */
#define I_LD_MAP_FD(d, fd)						\
	((struct bpf_insn){ BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd }), \
	((struct bpf_insn){ 0, 0, 0, 0, 0 })

/*
 * Look up key 0 of the map and take and release the lock at lock_off;
 * returns 0. Loaded as a tc program.
 */
#define LOCK_PROG(map_fd, lock_off) {					\
	I_ST_W(BPF_REG_10, -4, 0),					\
	I_MOV64_REG(BPF_REG_2, BPF_REG_10),				\
	I_ADD64_IMM(BPF_REG_2, -4),					\
	I_LD_MAP_FD(BPF_REG_1, map_fd),					\
	I_CALL(BPF_FUNC_map_lookup_elem),				\
	I_JEQ_IMM(BPF_REG_0, 0, 7),					\
	I_MOV64_REG(BPF_REG_6, BPF_REG_0),				\
	I_MOV64_REG(BPF_REG_1, BPF_REG_6),				\
	I_ADD64_IMM(BPF_REG_1, lock_off),				\
	I_CALL(BPF_FUNC_spin_lock),					\
	I_MOV64_REG(BPF_REG_1, BPF_REG_6),				\
	I_ADD64_IMM(BPF_REG_1, lock_off),				\
	I_CALL(BPF_FUNC_spin_unlock),					\
	I_MOV64_IMM(BPF_REG_0, 0),					\
	I_EXIT(),							\
}

/*
 * LOCK_PROG with calls under the lock (ours allows them): a clock read, a
 * static subprogram incrementing the caller's element (offset 0), and a
 * lockless lookup, between lock and unlock.
 */
#define LOCK_CALLS_PROG(map_fd, lock_off) {				\
	I_ST_W(BPF_REG_10, -4, 0),					\
	I_MOV64_REG(BPF_REG_2, BPF_REG_10),				\
	I_ADD64_IMM(BPF_REG_2, -4),					\
	I_LD_MAP_FD(BPF_REG_1, map_fd),					\
	I_CALL(BPF_FUNC_map_lookup_elem),				\
	I_JEQ_IMM(BPF_REG_0, 0, 15),					\
	I_MOV64_REG(BPF_REG_6, BPF_REG_0),				\
	I_MOV64_REG(BPF_REG_1, BPF_REG_6),				\
	I_ADD64_IMM(BPF_REG_1, lock_off),				\
	I_CALL(BPF_FUNC_spin_lock),					\
	I_CALL(BPF_FUNC_ktime_get_ns),					\
	I_MOV64_REG(BPF_REG_1, BPF_REG_6),				\
	I_CALL_SUB(10),							\
	I_MOV64_REG(BPF_REG_2, BPF_REG_10),				\
	I_ADD64_IMM(BPF_REG_2, -4),					\
	I_LD_MAP_FD(BPF_REG_1, map_fd),					\
	I_CALL(BPF_FUNC_map_lookup_elem),				\
	I_MOV64_REG(BPF_REG_1, BPF_REG_6),				\
	I_ADD64_IMM(BPF_REG_1, lock_off),				\
	I_CALL(BPF_FUNC_spin_unlock),					\
	I_MOV64_IMM(BPF_REG_0, 0),					\
	I_EXIT(),							\
	I_LDX_W(BPF_REG_2, BPF_REG_1, 0),				\
	I_ADD64_IMM(BPF_REG_2, 1),					\
	I_STX_W(BPF_REG_1, BPF_REG_2, 0),				\
	I_MOV64_IMM(BPF_REG_0, 0),					\
	I_EXIT(),							\
}

#endif
