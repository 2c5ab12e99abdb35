// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's test_maps, one test per process: test_maps.c runs every test
 * in one process and exits at the first failure, so one stress test can
 * hold the whole run and one failure hides the rest. This runs the test
 * named on the command line (with "prealloc" or "noprealloc", the two
 * passes of test_maps' main), or lists them.
 *
 * usage: test_maps_one --list | test_maps_one NAME [prealloc|noprealloc]
 * Built by scripts/upstream.sh with the selftests' own Makefile (extra.mk).
 */
#define main test_maps_main
#include "test_maps.c"
#undef main

#define DEFINE_TEST(name) { #name, test_##name },
static const struct {
	const char *name;
	void (*fn)(void);
} map_tests[] = {
#include <map_tests/tests.h>
};
#undef DEFINE_TEST

static const char *const flag_tests[] = {
	"hashmap", "hashmap_percpu", "hashmap_walk", "hashmap_zero_seed",
	"arraymap", "arraymap_percpu", "arraymap_percpu_many_keys",
	"devmap", "devmap_hash", "sockmap", "map_large", "map_parallel",
	"map_stress", "map_rdonly", "map_wronly", "reuseport_array",
	"queuemap", "stackmap", "map_in_map",
};

/* The tests of run_all_tests(), in its order. */
static int run_flag_test(const char *t)
{
	if (!strcmp(t, "hashmap")) test_hashmap(0, NULL);
	else if (!strcmp(t, "hashmap_percpu")) test_hashmap_percpu(0, NULL);
	else if (!strcmp(t, "hashmap_walk")) test_hashmap_walk(0, NULL);
	else if (!strcmp(t, "hashmap_zero_seed")) test_hashmap_zero_seed();
	else if (!strcmp(t, "arraymap")) test_arraymap(0, NULL);
	else if (!strcmp(t, "arraymap_percpu")) test_arraymap_percpu(0, NULL);
	else if (!strcmp(t, "arraymap_percpu_many_keys")) test_arraymap_percpu_many_keys();
	else if (!strcmp(t, "devmap")) test_devmap(0, NULL);
	else if (!strcmp(t, "devmap_hash")) test_devmap_hash(0, NULL);
	else if (!strcmp(t, "sockmap")) test_sockmap(0, NULL);
	else if (!strcmp(t, "map_large")) test_map_large();
	else if (!strcmp(t, "map_parallel")) test_map_parallel();
	else if (!strcmp(t, "map_stress")) test_map_stress();
	else if (!strcmp(t, "map_rdonly")) test_map_rdonly();
	else if (!strcmp(t, "map_wronly")) test_map_wronly();
	else if (!strcmp(t, "reuseport_array")) test_reuseport_array();
	else if (!strcmp(t, "queuemap")) test_queuemap(0, NULL);
	else if (!strcmp(t, "stackmap")) test_stackmap(0, NULL);
	else if (!strcmp(t, "map_in_map")) test_map_in_map();
	else return -1;
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < ARRAY_SIZE(flag_tests); i++)
			printf("%s/prealloc\n%s/noprealloc\n", flag_tests[i], flag_tests[i]);
		for (i = 0; i < ARRAY_SIZE(map_tests); i++)
			printf("%s/-\n", map_tests[i].name);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: %s --list | NAME [prealloc|noprealloc]\n", argv[0]);
		return 2;
	}
	srand(time(NULL));
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	map_opts.map_flags = argc > 2 && !strcmp(argv[2], "noprealloc") ? BPF_F_NO_PREALLOC : 0;
	if (run_flag_test(argv[1]) == 0) {
		printf("test_maps %s: OK, %d SKIPPED\n", argv[1], skips);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(map_tests); i++) {
		if (!strcmp(argv[1], map_tests[i].name)) {
			map_tests[i].fn();
			printf("test_maps %s: OK, %d SKIPPED\n", argv[1], skips);
			return 0;
		}
	}
	fprintf(stderr, "%s: no test named '%s' (--list lists them)\n", argv[0], argv[1]);
	return 2;
}
