# bpflock: our BPF spin locks as patch series on Debian's linux-source-6.1
# and linux-source-6.12, built and tested booted in QEMU. `make help` lists
# the targets.

KERNEL ?= ours
# The base (Debian's linux-source-BASE): 6.1 or 6.12; every script reads
# it from the environment (6.1 when unset). `make test` and `make run`
# without BASE do every base, in this order.
BASES := 6.1 6.12
ifdef BASE
export BASE
RUN_BASES := $(BASE)
else
RUN_BASES := $(BASES)
endif
SHELL := /bin/bash
S := scripts

.PHONY: help deps run test test-sched-ext test-upstream test-nojit test-debug test-kcsan test-debian deb install-test torture bench bisect-check shell vm-run kernels tests series-check model clean-results

help:
	@echo "bpflock targets:"
	@echo "  make run                 build everything, boot ours, show the feature at work (each base)"
	@echo "  make test                on each base: the suite on stock, baseline and ours + expectation"
	@echo "                           matrix, the tree's selftests gate; 6.1: the Spin models, test-nojit;"
	@echo "                           6.12: sched_ext (make test BASE=6.1: one base)"
	@echo "  make test KERNEL=stock   the suite on one variant (stock, baseline or ours)"
	@echo "  make test-sched-ext      6.12's sched_ext schedulers on stock-6.12, baseline-6.12, ours-6.12"
	@echo "  make shell KERNEL=...    interactive guest shell (tests in /tests/bin; quit: poweroff -f)"
	@echo "  make vm-run KERNEL=... RUN='cmd' [DIR=folder]"
	@echo "                           run a command in the guest with DIR's files in its cwd"
	@echo "  make test-nojit          the lock suites on ours with bpf_jit_enable=0 (helpers, not the inline lock)"
	@echo "  make test-upstream       the tree's own BPF selftests (all of test_progs) on stock and ours, compared"
	@echo "  make test-debug          the suite on debug builds (lockdep, KASAN, UBSAN, ...) of stock and ours"
	@echo "  make test-kcsan          the suite and a 60 s torture on KCSAN builds of stock and ours + race report"
	@echo "  make test FLAVOUR=debian the suite on ours built from Debian's config and on Debian's own kernel"
	@echo "  make deb [MODULES=file]  installable linux-image/linux-headers packages of ours in build/deb"
	@echo "  make install-test        Debian 12 + our package booted with systemd: units, bpftrace tools, vs Debian's kernel"
	@echo "  make torture [SECONDS=60] the torture case alone on stock and ours, for SECONDS"
	@echo "  make bench [ROUNDS=5]    benchmarks: stock vs ours, interleaved rounds, then instruction"
	@echo "                           counts under QEMU icount [ICOUNT_ROUNDS=3] (not a test)"
	@echo "  make kernels             build the three kernel variants"
	@echo "  make series-check        checkpatch --strict on every patch of the series"
	@echo "  make bisect-check [FROM=N] every prefix of the series (from N patches on) builds and boots"
	@echo "  make model [FULL=1]      Spin models of the lock protocol (tests/model), mutants included"
	@echo "  make tests               build the guest's test binaries and initramfs only"
	@echo "  make deps                install the Debian packages the test bed needs, check disk space"
	@echo "  make clean-results       forget every run's results, the stored passing ones included"
	@echo "Variables: BASE (6.1|6.12: linux-source-BASE, patches/BASE; default: both for"
	@echo "  test and run, 6.1 for the others),"
	@echo "  VM_CPUS (4), VM_ACCEL (kvm|tcg, probed), BPFLOCK_CACHE (/var/cache/bpflock),"
	@echo "  BPFLOCK_SCALE (percent of the default iterations), BPFLOCK_TESTS (binaries to run),"
	@echo "  VERBOSE=1 (stream the guest console), FRESH=1 (run every test binary and every"
	@echo "  selftests guest again, even those whose passing result for the same kernel and"
	@echo "  binary is stored; CI sets it)"

deps:
	@$(S)/deps.sh

run: deps
	@for b in $(RUN_BASES); do BASE=$$b $(S)/demo.sh || exit 1; done

# `make test` runs all variants unless KERNEL is given on the command line.
FLAVOUR ?= plain
test: deps
ifeq ($(origin KERNEL),command line)
	@FLAVOUR=$(FLAVOUR) $(S)/test.sh $(KERNEL)
else ifeq ($(FLAVOUR),debian)
	@$(MAKE) -s test-debian
else ifneq ($(FLAVOUR),plain)
	@FLAVOUR=$(FLAVOUR) $(S)/test.sh stock ours
else
	@$(S)/test-bases.sh $(RUN_BASES)
endif

# 6.12's tools/sched_ext schedulers on the three 6.12 kernels (make test
# runs it on 6.12).
test-sched-ext: deps
	@BASE=6.12 $(S)/sched-ext.sh stock baseline ours

# The tree's own selftests/bpf built from stock, run on stock and ours;
# any difference not in tests/upstream/BASE/differences.txt fails. `make
# test` runs them with test_progs' tests listed in
# tests/upstream/BASE/progs.list; this target all of test_progs, on each
# base unless BASE is given.
test-upstream: deps
	@for b in $(RUN_BASES); do BASE=$$b $(S)/upstream.sh --full || exit 1; done

# The lock suites again on ours with bpf_jit_enable=0: the interpreter and
# the helpers instead of the JIT's inline lock. Kfuncs (the pair), fentry
# and other trampoline programs need the JIT, so their suites stay out.
NOJIT_TESTS := verifier runtime user_lock user_rmw jit calls lru_inner bad_input btf_maps
test-nojit: deps
	@BPFLOCK_JIT=0 BPFLOCK_TESTS="$(NOJIT_TESTS)" $(S)/test.sh ours

ROUNDS ?= 5
SCALE ?= 100
bench: deps
	@$(S)/bench.sh $(ROUNDS) $(SCALE)

# Debug kernels are slow under TCG: a fifth of the iterations, but
# thousands of fuzzed programs under CONFIG_BPF_LOCK_DEBUG's checks.
test-debug: deps
	@FLAVOUR=debug BPFLOCK_SCALE=$${BPFLOCK_SCALE:-20} BPFLOCK_FUZZ_N=$${BPFLOCK_FUZZ_N:-2000} \
		$(S)/test.sh stock ours

# KCSAN kernels: the suite at a fifth of the iterations plus a longer
# torture, then every data-race report classified (ours / not ours).
test-kcsan: deps
	@rc=0; FLAVOUR=kcsan BPFLOCK_SCALE=$${BPFLOCK_SCALE:-20} BPFLOCK_FUZZ_N=$${BPFLOCK_FUZZ_N:-500} \
		BPFLOCK_TORTURE_SECONDS=$${BPFLOCK_TORTURE_SECONDS:-60} VM_TIMEOUT=$${VM_TIMEOUT:-3600} $(S)/test.sh stock ours || rc=$$?; \
		$(S)/kcsan-report.sh build/results/kcsan stock ours || rc=1; exit $$rc

# Ours built from Debian's own config (localmodconfig to the guest's
# modules), and Debian's own binary kernel of the same version as stock
# (DEBIAN_STOCK=build: stock built like ours instead).
test-debian: deps
	@FLAVOUR=debian $(S)/test.sh stock ours

deb:
	@MODULES=$(MODULES) $(S)/deb.sh ours

install-test:
	@$(S)/install-test.sh

SECONDS ?= 60
torture: deps
	@BPFLOCK_TESTS=torture BPFLOCK_TORTURE_SECONDS=$(SECONDS) \
		BPFLOCK_TEST_TIMEOUT=$$(( $(SECONDS) + 300 )) \
		BPFLOCK_BIN_TIMEOUT=$$(( 3 * ($(SECONDS) + 300) )) \
		VM_TIMEOUT=$$(( 3 * ($(SECONDS) + 300) + 600 )) $(S)/test.sh stock ours

kernels: deps
	@for v in $$(. $(S)/lib.sh && base_variants); do $(S)/kernel.sh $$v >/dev/null || exit 1; done

tests: deps
	@$(S)/build-tests.sh >/dev/null

shell: deps
	@img=$$($(S)/kernel.sh $(KERNEL)) && t=$$($(S)/build-tests.sh) && \
		$(S)/vm.sh --kernel $$img --initrd $$t/initramfs.cpio --shell --name $(KERNEL)

# The command reaches the guest through the environment, never through
# make's expansion, so whatever it quotes arrives untouched.
vm-run: export BPFLOCK_RUN := $(value RUN)
vm-run: deps
	@test -n "$$BPFLOCK_RUN" || { echo "usage: make vm-run KERNEL=ours RUN='cmd' [DIR=folder]"; exit 2; }
	@img=$$($(S)/kernel.sh $(KERNEL)) && t=$$($(S)/build-tests.sh) && \
		$(S)/vm.sh --kernel $$img --initrd $$t/initramfs.cpio --name $(KERNEL) \
		--cmd "$$BPFLOCK_RUN" $(if $(DIR),--add $(DIR))

series-check: deps
	@$(S)/series-check.sh

bisect-check: deps
	@FROM=$(FROM) $(S)/bisect-check.sh

# No deps: the models need only spin and gcc, which model.sh checks for.
model:
	@$(S)/model.sh

clean-results:
	rm -rf build/results $${BPFLOCK_CACHE:-/var/cache/bpflock}/results \
		$${BPFLOCK_CACHE:-/var/cache/bpflock}/upstream/*/results
