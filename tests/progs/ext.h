/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by an extension (freplace) and its target (ext_*.bpf.c): the two
 * must declare the replaced function's arguments alike.
 *
 * EXT_TP_CTX and EXT_SYS_CTX: a context argument of a tp_btf and of a
 * syscall program, whose context type is void *. 6.12 takes a struct
 * tagged arg:ctx for it (bpf_raw_tracepoint_args for tp_btf, any for a
 * syscall program); 6.1 takes a pointer to an anonymous struct (the
 * context's empty name).
 */
#ifndef BPFLOCK_EXT_H
#define BPFLOCK_EXT_H

#ifdef __arg_ctx
struct ext_sys_ctx {
	unsigned long long a;
};
#define EXT_TP_CTX struct bpf_raw_tracepoint_args *ctx __arg_ctx
#define EXT_SYS_CTX struct ext_sys_ctx *ctx __arg_ctx
#else
typedef struct { unsigned long long a; } ext_anon_t;
#define EXT_TP_CTX ext_anon_t *ctx
#define EXT_SYS_CTX ext_anon_t *ctx
#endif

#endif
