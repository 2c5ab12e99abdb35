#!/usr/bin/env bash
# `make run`: build ours and the guest programs, boot, and show the
# feature at work (tests/demo.c).
# usage: scripts/demo.sh [stock|baseline|ours]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:-ours}
say "$SOURCE_PACKAGE $(installed_version) (series tested on $(tested_version))"
image=$("$BPFLOCK_ROOT/scripts/kernel.sh" "$variant")
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")
"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "$image" --initrd "$tests/initramfs.cpio" \
	--name "$variant" --quiet --log "$BPFLOCK_ROOT/build/demo-console.log" \
	--out "$BPFLOCK_ROOT/build/demo.txt" --cmd '/tests/demo >/dev/ttyS1 2>&1' || rc=$?
grep -v '^BPFLOCK_STATUS=' "$BPFLOCK_ROOT/build/demo.txt" || true
"$BPFLOCK_ROOT/scripts/splats.sh" "$BPFLOCK_ROOT/build/demo-console.log"
exit "${rc:-0}"
