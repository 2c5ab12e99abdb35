// SPDX-License-Identifier: GPL-2.0
/*
 * Two locks at once (6.1: 0022, 6.12: 0029): bpf_spin_lock_pair() and
 * bpf_spin_unlock_pair(), kfuncs stock does not have, so every case here
 * is "beyond" on both bases.
 *
 * The bank (progs/pair.bpf.c): NACC accounts of START each, in an array
 * and in a hash. Transfer programs on every vCPU move random amounts
 * between random accounts (the same one included) under the pair lock,
 * only when the payer can afford it; an auditor program on every vCPU
 * locks two random accounts together and compares their ledgers; user
 * space samples accounts with BPF_F_LOCK. Invariants, exact:
 *  - every locked sample: bal >= 0 and bal = START + received - sent;
 *  - every audit: payer.sent[payee] = payee.recv[payer] both ways;
 *  - at the end: the balances sum to NACC x START, every ledger entry
 *    matches its twin, and the transfers counted equal those booked.
 * Taking the pair in address order is what keeps transfers in both
 * directions from deadlocking: a hang fails the case by its timeout.
 * The twin made of two single locks in a row must break the audit
 * invariant: its mismatches are reported.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

#define NACC 16
#define START 1000
#define MAX_CPUS 8
#define REPEAT 50

struct account {
	long bal;
	struct bpf_spin_lock lock;
	long sent[NACC];
	long recv[NACC];
};

struct bank_case {
	const char *map;
	const char *transfer;
	const char *audit;
	bool broken;		/* two single locks: report, do not judge audits */
};

struct runner {
	int fd, cpu;
	volatile int *stop;
	long runs;
	int err;
};

static void *runner(void *arg)
{
	struct runner *r = arg;

	pin_cpu(r->cpu);
	while (!*r->stop) {
		__u32 ret;

		if (prog_run(r->fd, REPEAT, &ret)) {
			r->err = errno;
			break;
		}
		r->runs += REPEAT;
	}
	return NULL;
}

static long stat_sum(int fd, __u32 key, int ncpu)
{
	long v[256] = {}, sum = 0;
	int i;

	if (bpf_map_lookup_elem(fd, &key, v))
		return -1;
	for (i = 0; i < ncpu; i++)
		sum += v[i];
	return sum;
}

static bool account_consistent(const struct account *a)
{
	long in = 0, out = 0;
	int j;

	for (j = 0; j < NACC; j++) {
		in += a->recv[j];
		out += a->sent[j];
	}
	return a->bal >= 0 && a->bal == START + in - out;
}

static void bank(struct kt *t, const void *arg)
{
	const struct bank_case *bc = arg;
	const char *progs[] = { bc->transfer, bc->audit, NULL };
	struct embedded_obj o = EMBEDDED_OBJ(pair);
	struct account accts[NACC], zero = { .bal = START };
	struct runner r[2 * MAX_CPUS];
	pthread_t th[2 * MAX_CPUS];
	long samples = 0, bad_samples = 0, sum = 0, ledger_bad = 0;
	long transfers, refused, audits, mismatches, runs = 0;
	int map, tfd, afd, stats, i, j, n;
	int ncpu = libbpf_num_possible_cpus();
	volatile int stop = 0;
	struct bpf_object *obj;
	time_t end;
	__u32 key;

	n = sysconf(_SC_NPROCESSORS_ONLN);
	n = n > MAX_CPUS ? MAX_CPUS : n;
	obj = obj_load(t, &o, progs);
	if (!obj)
		return;
	map = obj_map_fd(t, obj, bc->map);
	stats = obj_map_fd(t, obj, "stats");
	tfd = obj_prog_fd(t, obj, bc->transfer);
	afd = obj_prog_fd(t, obj, bc->audit);
	if (map < 0 || stats < 0 || tfd < 0 || afd < 0)
		goto out;
	for (key = 0; key < NACC; key++)
		if (!KT_OK(t, bpf_map_update_elem(map, &key, &zero, BPF_ANY), "open account"))
			goto out;
	/* a transfer and an auditor thread on every vCPU */
	for (i = 0; i < 2 * n; i++) {
		r[i] = (struct runner){ .fd = i < n ? tfd : afd, .cpu = i % n, .stop = &stop };
		pthread_create(&th[i], NULL, runner, &r[i]);
	}
	/* sample with BPF_F_LOCK for the whole run */
	for (end = time(NULL) + (kt_scaled(3000) + 999) / 1000; time(NULL) < end; samples++) {
		struct account a;

		key = samples % NACC;
		if (!KT_OK(t, bpf_map_lookup_elem_flags(map, &key, &a, BPF_F_LOCK), "locked read"))
			break;
		bad_samples += !account_consistent(&a);
	}
	stop = 1;
	for (i = 0; i < 2 * n; i++) {
		pthread_join(th[i], NULL);
		if (r[i].err)
			kt_fail(t, "runner %d: test_run: %s", i, strerror(r[i].err));
		if (i < n)
			runs += r[i].runs;
	}
	for (key = 0; key < NACC; key++)
		if (!KT_OK(t, bpf_map_lookup_elem_flags(map, &key, &accts[key], BPF_F_LOCK),
			   "final read"))
			goto out;
	for (i = 0; i < NACC; i++) {
		sum += accts[i].bal;
		bad_samples += !account_consistent(&accts[i]);
		for (j = 0; j < NACC; j++)
			ledger_bad += accts[i].sent[j] != accts[j].recv[i];
	}
	transfers = stat_sum(stats, 0, ncpu);
	refused = stat_sum(stats, 1, ncpu);
	audits = stat_sum(stats, 2, ncpu);
	mismatches = stat_sum(stats, 3, ncpu);
	kt_log(t, "%ld transfers (%ld refused for funds) by %d vCPUs, %ld audits, %ld audit mismatches, %ld locked samples; sum %ld",
	       transfers, refused, n, audits, mismatches, samples, sum);
	KT_EQ(t, transfers + refused, runs, "transfer runs counted");
	KT_TRUE(t, transfers > 0 && audits > 0, "transfers and audits ran");
	KT_EQ(t, sum, NACC * START, "sum of balances");
	KT_EQ(t, bad_samples, 0, "accounts negative or off their own ledger");
	KT_EQ(t, ledger_bad, 0, "final ledger entries without their twin");
	if (!bc->broken)
		KT_EQ(t, mismatches, 0, "audits that saw half a transfer");
	else
		kt_log(t, "two single locks in a row: %ld of %ld audits saw half a transfer",
		       mismatches, audits);
out:
	bpf_object__close(obj);
}

static const struct bank_case bank_array = { "bank", "transfer_pair", "audit_bank", false };
static const struct bank_case bank_hash = { "bank_hash", "transfer_pair_hash",
					    "audit_bank_hash", false };
static const struct bank_case bank_singles = { "bank", "transfer_singles", "audit_bank",
					       true };

int main(int argc, char **argv)
{
	static const struct kt_case fixed[] = {
		{ "bank_array", KT_BEYOND, bank, &bank_array, KT_ON_BASE("6.12", KT_BEYOND) },
		{ "bank_hash", KT_BEYOND, bank, &bank_hash, KT_ON_BASE("6.12", KT_BEYOND) },
		{ "bank_two_single_locks", KT_BEYOND, bank, &bank_singles,
		  KT_ON_BASE("6.12", KT_BEYOND) },
	};
	struct embedded_obj o = EMBEDDED_OBJ(pair);
	struct kt_case *cases, *all;
	int n, i;

	n = annotated_cases(&o, &cases);
	if (n < 0)
		return 1;
	all = calloc(n + KT_ARRAY_SIZE(fixed), sizeof(*all));
	if (!all)
		return 1;
	for (i = 0; i < (int)KT_ARRAY_SIZE(fixed); i++)
		all[i] = fixed[i];
	memcpy(all + i, cases, n * sizeof(*cases));
	return kt_main(argc, argv, "pair", all, n + i);
}
