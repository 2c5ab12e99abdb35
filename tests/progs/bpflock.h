/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the BPF programs of the suite: includes, and the expectation
 * annotations that tests/lib/progs.c reads back from BTF decl tags, so that
 * every program carries its verdict next to its code:
 *
 *   SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
 *   int missing_unlock(struct __sk_buff *skb) { ... }
 */
#ifndef BPFLOCK_PROGS_H
#define BPFLOCK_PROGS_H

#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define __expect(x)	__attribute__((btf_decl_tag("expect:" x)))
/* The verifier accepts the program; it is then run once with test_run. */
#define __success	__expect("success")
/* The verifier rejects the program. */
#define __failure	__expect("failure")
/* A substring the verifier log must contain (may repeat). */
#define __msg(m)	__expect("msg=" m)
/* The errno the load must fail with (a name from errno.h). */
#define __errno(e)	__expect("errno=" #e)
/* The value the program must return when run. */
#define __retval(v)	__expect("retval=" #v)
/*
 * What one base's kernels do instead (their verdict, errno or words), for
 * a rule that base decided otherwise: __on("6.12", "errno=EINVAL"),
 * __on("6.12", "msg=..."), __on("6.12", "success"), __on("6.12", "failure")
 * (with that base's errno and words). A base's messages replace the others.
 * __on("6.12", "kind=feature"): the case's kind there (see __common), for a
 * guarantee that base's stock tree gives too.
 */
#define __on(base, x)	__attribute__((btf_decl_tag("expect@" base ":" x)))
/*
 * Run on this base's kernels only (skipped elsewhere): a case of a rule or
 * a hole that only that base's tree has.
 */
#define __only_on(base)	__expect("only=" base)
/* Expected on every kernel variant (default: only where the feature is). */
#define __common	__expect("kind=common")
/* Expected only of ours: a guarantee stock does not give. */
#define __beyond	__expect("kind=beyond")
/*
 * Loaded with CAP_BPF and CAP_NET_ADMIN only (no CAP_SYS_ADMIN, no
 * CAP_PERFMON): the verifier then refuses reads of uninitialised stack
 * and pointer leaks. The test run is done with every capability.
 */
#define __caps_bpf	__expect("caps=bpf")
/* loaded, not run: BPF_PROG_TEST_RUN cannot run the program's type */
#define __load_only	__expect("load_only")
/*
 * Needs the kernel's error-injection list (CONFIG_FUNCTION_ERROR_INJECTION):
 * fentry.s, fexit.s and fmod_ret.s attach only to functions on it. Debian's
 * config has it off; such a case is skipped there, on every variant.
 */
#define __needs_error_injection	__expect("needs=error_injection")

char _license[] SEC("license") = "GPL";

#endif
