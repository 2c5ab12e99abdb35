/*
 * bpf_spin_lock_pair() (0022) among the other holders of lock words.
 *
 * Three elements whose lock words sit at addresses 0 < 1 < 2, and every
 * kind of holder there is, each on its own CPU:
 *   pair01, pair12, pair20  programs calling bpf_spin_lock_pair(a, b)
 *                           with the arguments in the order shown, so
 *                           that taking them in argument order closes a
 *                           cycle 1 -> 0, 2 -> 1, 0 -> 2;
 *   pair11                  bpf_spin_lock_pair(e, e): one word twice;
 *   single                  bpf_spin_lock() on word 1, or a BPF_F_LOCK
 *                           copy (the same shape: one word, nothing else);
 *   reuse                   the reused hash element write (0007): the
 *                           bucket lock, then the element's word 2.
 * Run time (kernel/bpf/bpf_lock.c): sort the two words by address, take
 * the lower, then the higher unless it is the same word; release in
 * reverse. Interrupts are off and no other program runs on the CPU
 * (the NMI guard, nmi_guard.pml), and a region calls nothing that takes
 * a lock (the verifier), so these are all the waits there are.
 *
 * Abstraction: a word is an atomic test-and-set (mutex_qspin.pml and
 * mutex_tas.pml check the real forms).
 *
 * Properties: mutual exclusion on every word (assert), and no deadlock:
 * every holder finishes (pan's invalid end states).
 *
 * Mutants (-D):
 *   MUTANT_ARG_ORDER        take the words in argument order, unsorted:
 *                           the three pairs deadlock;
 *   MUTANT_SAME_TWICE       take the second word even when it is the
 *                           first: pair11 waits for itself;
 *   MUTANT_CALL_UNDER_PAIR  a pair holder takes the bucket lock inside its
 *                           region (as a map update under the lock would):
 *                           it meets reuse's bucket-then-word order.
 */

#ifndef ROUNDS
#define ROUNDS 1
#endif

bit w[3];			/* the lock words, by address */
byte in_cs[3];			/* holders inside each word's critical section */
bit bucket;			/* the hash bucket lock of 0007 */

inline take(i) { atomic { w[i] == 0 -> w[i] = 1 } }
inline drop(i) { w[i] = 0 }

inline enter(i) { in_cs[i]++; assert(in_cs[i] == 1) }
inline leave(i) { in_cs[i]-- }

proctype pair(byte a, b)
{
	byte lo, hi, n = 0;

#ifdef MUTANT_ARG_ORDER
	lo = a; hi = b;
#else
	if
	:: a <= b -> lo = a; hi = b
	:: else -> lo = b; hi = a
	fi;
#endif
	do
	:: n < ROUNDS ->
		take(lo);
#ifdef MUTANT_SAME_TWICE
		take(hi);
#else
		if
		:: hi != lo -> take(hi)
		:: else -> skip
		fi;
#endif
		enter(lo);
		if
		:: hi != lo -> enter(hi)
		:: else -> skip
		fi;
#ifdef MUTANT_CALL_UNDER_PAIR
		atomic { bucket == 0 -> bucket = 1 };
		bucket = 0;
#endif
		if
		:: hi != lo -> leave(hi)
		:: else -> skip
		fi;
		leave(lo);
		if
		:: hi != lo -> drop(hi)
		:: else -> skip
		fi;
		drop(lo);
		n++
	:: else -> break
	od
}

proctype single(byte i)
{
	byte n = 0;
	do
	:: n < ROUNDS ->
		take(i); enter(i); leave(i); drop(i);
		n++
	:: else -> break
	od
}

/* 0007: htab_map_update_elem() holds the bucket, writes the reused
 * element under its word. */
proctype reuse(byte i)
{
	byte n = 0;
	do
	:: n < ROUNDS ->
		atomic { bucket == 0 -> bucket = 1 };
		take(i); enter(i); leave(i); drop(i);
		bucket = 0;
		n++
	:: else -> break
	od
}

init
{
	atomic {
		run pair(1, 0);
		run pair(2, 1);
		run pair(0, 2);
		run pair(1, 1);
		run single(1);
		run reuse(2)
	}
}
