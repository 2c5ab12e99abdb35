// SPDX-License-Identifier: GPL-2.0
/*
 * Sleepable programs that take locks (tests/sleepable.c): one program of
 * each sleepable type the config can attach (fentry.s, fexit.s and
 * fmod_ret.s on getpgid(), lsm.s on file_open, iter.s on tasks, uprobe.s
 * on a function of the test binary, syscall programs) locks one element
 * shared with tc programs and adds to a and b together. Each also counts
 * what it added in sstats, outside the lock, so the test can check the
 * element against the programs' own count. Stock 6.1 refuses them all:
 * "sleepable progs cannot use bpf_spin_lock yet".
 *
 * Then what stays refused in a sleepable program: a sleepable helper
 * (bpf_copy_from_user) under the lock, and an exit holding it.
 */
#include "bpflock.h"

struct selem {
	long a;
	struct bpf_spin_lock lock;
	long b;			/* always equal to a under the lock */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct selem);
} smap SEC(".maps");

/* Keep in sync with enum kind in tests/sleepable.c. */
enum {
	K_FENTRY, K_FEXIT, K_FMOD_RET, K_LSM, K_ITER, K_UPROBE, K_SYSCALL, K_COPY,
	NR_KINDS
};

/* What each program added to a (and b); this map holds no lock. */
struct sstats {
	long added[NR_KINDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct sstats);
} sstats SEC(".maps");

/* The test's tgid: hook programs count only the test's events. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, int);
} scfg SEC(".maps");

struct bpf_iter_meta {
	void *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct task_struct;

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

/* The syscall programs' context: where the amount to add lives. */
struct copy_ctx {
	__u64 src;
};

static __always_inline int lock_add(long n)
{
	int key = 0;
	struct selem *e = bpf_map_lookup_elem(&smap, &key);

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->a += n;
	e->b += n;
	bpf_spin_unlock(&e->lock);
	return 1;
}

static __always_inline int from_test(void)
{
	int key = 0;
	int *tgid = bpf_map_lookup_elem(&scfg, &key);

	return tgid && (bpf_get_current_pid_tgid() >> 32) == *tgid;
}

/* Add n under the lock, then count it in sstats; 0 on success. */
#define ADD(k, n) ({							\
	int __key = 0;							\
	struct sstats *__s = bpf_map_lookup_elem(&sstats, &__key);	\
	int __ok = __s && lock_add(n);					\
	if (__ok)							\
		__sync_fetch_and_add(&__s->added[k], n);		\
	!__ok;								\
})

/* the contender, on every vCPU; works on stock too */
SEC("tc") __success __retval(0)
int tc_bump(struct __sk_buff *skb)
{
	return lock_add(1) ? 0 : 1;
}

/* run by tests/sleepable.c; loads on ours only */
SEC("fentry.s/__x64_sys_getpgid") __needs_error_injection __beyond __success __load_only
__on("6.12", "kind=feature")
int fentry_s_bump(void *ctx)
{
	if (from_test())
		ADD(K_FENTRY, 1);
	return 0;
}

SEC("fexit.s/__x64_sys_getpgid") __needs_error_injection __beyond __success __load_only
__on("6.12", "kind=feature")
int fexit_s_bump(void *ctx)
{
	if (from_test())
		ADD(K_FEXIT, 1);
	return 0;
}

/* returns 0: getpgid() runs and returns as usual */
SEC("fmod_ret.s/__x64_sys_getpgid") __needs_error_injection __beyond __success __load_only
__on("6.12", "kind=feature")
int fmod_ret_s_bump(void *ctx)
{
	if (from_test())
		ADD(K_FMOD_RET, 1);
	return 0;
}

/* file_open is one of the sleepable LSM hooks; 0 lets the open proceed */
SEC("lsm.s/file_open") __beyond __success __load_only
__on("6.12", "kind=feature")
int lsm_s_bump(void *ctx)
{
	if (from_test())
		ADD(K_LSM, 1);
	return 0;
}

/* One 8-byte record per task visited: user space counts the visits. */
SEC("iter.s/task") __beyond __success __load_only
__on("6.12", "kind=feature")
int iter_s_bump(struct bpf_iter__task *ctx)
{
	__u64 one = 1;

	if (!ctx->task)
		return 0;
	if (!ADD(K_ITER, 1))
		bpf_seq_write(ctx->meta->seq, &one, sizeof(one));
	return 0;
}

SEC("uprobe.s") __beyond __success __load_only
__on("6.12", "kind=beyond")
int uprobe_s_bump(void *ctx)
{
	if (from_test())
		ADD(K_UPROBE, 1);
	return 0;
}

/* run by BPF_PROG_RUN from user space; returns 0 after its increment */
SEC("syscall") __beyond __success __load_only
__on("6.12", "kind=feature")
int syscall_bump(void *ctx)
{
	return ADD(K_SYSCALL, 1);
}

/*
 * A sleepable helper before the lock: bpf_copy_from_user() may fault the
 * page in and sleep, then the amount it read is added under the lock.
 */
SEC("syscall") __beyond __success __load_only
__on("6.12", "kind=feature")
int copy_then_lock(struct copy_ctx *ctx)
{
	long n = 0;

	if (bpf_copy_from_user(&n, sizeof(n), (void *)ctx->src))
		return 1;
	if (n < 1 || n > 100)
		return 2;
	return ADD(K_COPY, n) ? 3 : 0;
}

/* A sleepable helper under the lock: it may sleep with interrupts off. */
SEC("syscall") __beyond __failure __errno(EINVAL)
__msg("function calls are not allowed while holding a lock: bpf_copy_from_user#148 is not one of")
__on("6.12", "kind=beyond")
int copy_under_lock_syscall(struct copy_ctx *ctx)
{
	int key = 0;
	struct selem *e = bpf_map_lookup_elem(&smap, &key);
	long n = 0;

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	bpf_copy_from_user(&n, sizeof(n), (void *)ctx->src);
	e->a += n;
	e->b += n;
	bpf_spin_unlock(&e->lock);
	return 0;
}

SEC("fentry.s/__x64_sys_getpgid") __needs_error_injection __beyond __failure __errno(EINVAL)
__msg("function calls are not allowed while holding a lock: bpf_copy_from_user#148 is not one of")
__on("6.12", "kind=beyond")
int copy_under_lock_fentry(void *ctx)
{
	int key = 0;
	struct selem *e = bpf_map_lookup_elem(&smap, &key);
	long n = 0;

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	bpf_copy_from_user(&n, sizeof(n), (void *)0x1000);
	e->a += n;
	e->b += n;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* The usual exit rule: no sleepable program returns holding the lock. */
SEC("lsm.s/file_open") __beyond __failure __errno(EINVAL)
__msg("bpf_spin_unlock is missing: release the lock on every path before exit")
__on("6.12", "kind=beyond")
int exit_locked_lsm(void *ctx)
{
	int key = 0;
	struct selem *e = bpf_map_lookup_elem(&smap, &key);

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	return 0;
}

/* held on one path only */
SEC("syscall") __beyond __failure __errno(EINVAL)
__msg("bpf_spin_unlock is missing: release the lock on every path before exit")
__on("6.12", "kind=beyond")
int exit_locked_syscall(struct copy_ctx *ctx)
{
	int key = 0;
	struct selem *e = bpf_map_lookup_elem(&smap, &key);

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	if (ctx->src & 1)
		return 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}
