// SPDX-License-Identifier: GPL-2.0
/*
 * A measurement, not a test: relink a test binary with
 *   -Wl,--wrap=bpf_prog_load -Wl,--wrap=bpf_object__load
 * and this file, and it prints one "# VERDICT" line per program it loads:
 * its verdict and the verifier's instructions processed (docs/bench/
 * stock-6.12-verifier.md says how it was used). tests/Makefile does not
 * build it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <bpf/bpf.h>

#define offsetofend(T, M) (offsetof(T, M) + sizeof(((T *)0)->M))

int __real_bpf_prog_load(enum bpf_prog_type prog_type, const char *prog_name,
			 const char *license, const struct bpf_insn *insns,
			 size_t insn_cnt, struct bpf_prog_load_opts *opts);

static char own_log[1 << 20];

int __wrap_bpf_prog_load(enum bpf_prog_type prog_type, const char *prog_name,
			 const char *license, const struct bpf_insn *insns,
			 size_t insn_cnt, struct bpf_prog_load_opts *opts)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	const char *log, *p;
	int fd, err;

	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	o.sz = sizeof(o);
	if (!o.log_buf) {
		own_log[0] = 0;
		o.log_buf = own_log;
		o.log_size = sizeof(own_log);
		o.log_level = 4;
	}
	fd = __real_bpf_prog_load(prog_type, prog_name, license, insns, insn_cnt, &o);
	err = errno;
	if (opts && opts->sz >= offsetofend(struct bpf_prog_load_opts, log_true_size))
		opts->log_true_size = o.log_true_size;
	log = o.log_buf;
	p = NULL;
	/* the last "processed N insns" of the log */
	for (const char *q = log; (q = strstr(q, "processed ")); q++)
		p = q;
	fprintf(stderr, "# VERDICT %s type=%d insns=%zu %s processed=%ld\n",
		prog_name && *prog_name ? prog_name : "-", prog_type, insn_cnt,
		fd >= 0 ? "loaded" : strerror(err), p ? atol(p + 10) : -1L);
	errno = err;
	return fd;
}

/* Objects: every program gets a stats log unless the caller gave one;
 * after the load, one VERDICT line per program libbpf attempted. */
#include <bpf/libbpf.h>

int __real_bpf_object__load(struct bpf_object *obj);

int __wrap_bpf_object__load(struct bpf_object *obj)
{
	struct bpf_program *prog;
	char *logs[64] = {};
	int i = 0, err, e;

	bpf_object__for_each_program(prog, obj) {
		size_t sz;

		if (i < 64 && bpf_program__autoload(prog) && !bpf_program__log_buf(prog, &sz)) {
			logs[i] = calloc(1, 1 << 18);
			logs[i][0] = 0;
			bpf_program__set_log_buf(prog, logs[i], 1 << 18);
			bpf_program__set_log_level(prog, 4);
		}
		i++;
	}
	err = __real_bpf_object__load(obj);
	e = errno;
	i = 0;
	bpf_object__for_each_program(prog, obj) {
		size_t sz;
		const char *log = bpf_program__log_buf(prog, &sz), *p = NULL;
		int fd = bpf_program__fd(prog);
		long processed = -1;

		if (!bpf_program__autoload(prog)) {
			i++;
			continue;
		}
		if (fd >= 0) {
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);

			if (!bpf_obj_get_info_by_fd(fd, &info, &len))
				processed = info.verified_insns;
		} else if (log) {
			for (const char *q = log; (q = strstr(q, "processed ")); q++)
				p = q;
			if (p)
				processed = atol(p + 10);
		}
		fprintf(stderr, "# VERDICT %s/%s %s processed=%ld\n", bpf_object__name(obj),
			bpf_program__name(prog),
			fd >= 0 ? "loaded" : (log && *log ? "refused" : "not-attempted"), processed);
		if (fd < 0 && log && *log) {
			const char *tail = log + (strlen(log) > 200 ? strlen(log) - 200 : 0);

			fprintf(stderr, "# VERDICT-LOG %s\n", strchr(tail, '\n') ? strchr(tail, '\n') + 1 : tail);
		}
		i++;
	}
	for (i = 0; i < 64; i++)
		free(logs[i]);
	errno = e;
	return err;
}
