#!/bin/sh
# The tree's own test_verifier, built with only its spin_lock cases
# (verifier/spin_lock.c), reported as one KTAP case with its summary.
# usage: upstream_verifier [--list]
name=upstream_verifier/test_verifier_spin_lock
if [ "${1:-}" = --list ]; then
	echo "$name feature"
	exit 0
fi
echo "KTAP version 1"
echo "# suite: upstream_verifier"
echo "1..1"
dir=$(dirname "$0")
out=$("$dir/upstream.d/test_verifier" 2>&1)
rc=$?
echo "$out" | grep -E '^#[0-9]+/|Summary' | sed 's/^/    # /'
if [ $rc -eq 0 ]; then
	echo "ok 1 $name"
else
	echo "not ok 1 $name"
fi
