// SPDX-License-Identifier: GPL-2.0
/*
 * Not a test: how many instructions the verifier walks for each program
 * of the suite ("processed N insns"), to compare pruning between kernels.
 * One line per program: object/program N, or "refused".
 * usage: insn_counts
 */
#include <stdio.h>
#include <stdlib.h>

#include "progs.h"

static void count(const struct embedded_obj *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
	static char log[1 << 20];
	struct bpf_program *p;
	struct bpf_object *obj;

	obj = bpf_object__open_mem(o->data, o->size, &opts);
	if (!obj)
		return;
	bpf_object__for_each_program(p, obj) {
		const char *name = bpf_program__name(p), *hit;
		int err = load_one_logged(o, name, NULL, NULL, log, sizeof(log));

		hit = strstr(log, "processed ");
		if (!err && hit)
			printf("%s/%s %ld\n", o->name, name, strtol(hit + 10, NULL, 10));
		else
			printf("%s/%s refused\n", o->name, name);
	}
	bpf_object__close(obj);
}

int main(void)
{
	const struct embedded_obj objs[] = {
		EMBEDDED_OBJ(verifier), EMBEDDED_OBJ(runtime), EMBEDDED_OBJ(user_lock),
		EMBEDDED_OBJ(extras), EMBEDDED_OBJ(torture), EMBEDDED_OBJ(bench),
		EMBEDDED_OBJ(holes), EMBEDDED_OBJ(guard), EMBEDDED_OBJ(up_spin_lock),
		EMBEDDED_OBJ(up_map_lock),
	};
	unsigned int i;

	for (i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		count(&objs[i]);
	return 0;
}
