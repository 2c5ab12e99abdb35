# Read after the selftests' own Makefile (make -f Makefile -f extra.mk, see
# scripts/upstream.sh): test_maps_one, the tree's test_maps one test per
# process, built with the same flags and objects as test_maps.
BPFLOCK_UPSTREAM := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
MAP_TEST_OBJS := $(patsubst map_tests/%.c,$(OUTPUT)/%.test.o,$(wildcard map_tests/*.c))

$(OUTPUT)/test_maps_one: $(BPFLOCK_UPSTREAM)/test_maps_one.c test_maps.c test_maps.h \
		map_tests/tests.h $(MAP_TEST_OBJS) $(TESTING_HELPERS) $(BPFOBJ)
	$(call msg,BINARY,,$@)
	$(Q)$(CC) $(CFLAGS) $(filter-out test_maps.c,$(filter %.c %.o %.a,$^)) $(LDLIBS) -o $@

# 6.12's test objects list the skeletons they include by basename in
# their .d files (atomics.lskel.h), and its linked skeletons depend on
# their objects by basename (linked_funcs1.bpf.o); its Makefile maps only
# NAME.skel.h to $(OUTPUT), with a rule that always runs. With OUTPUT
# outside the source directory a second make stopped at "No rule to make
# target 'atomics.lskel.h'", or rebuilt 261 test objects: make finds
# them all in $(OUTPUT) by their dates instead.
vpath %.skel.h $(OUTPUT)
vpath %.lskel.h $(OUTPUT)
vpath %.subskel.h $(OUTPUT)
vpath %.bpf.o $(OUTPUT)
