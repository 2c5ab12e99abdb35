/*
 * The fallback form of our lock word (neither CONFIG_QUEUED_SPINLOCKS nor
 * CONFIG_BPF_ARCH_SPINLOCK), include/linux/bpf_lock.h:
 *
 *	bpf_lock_word_acquire():  while (atomic_xchg_acquire(word, 1))
 *					atomic_cond_read_relaxed(word, !VAL);
 *	bpf_lock_word_release():  atomic_set_release(word, 0);
 *
 * Stock's __bpf_spin_lock() (kernel/bpf/helpers.c at tag base) is the
 * same loop entered at the read (do { cond_read } while (xchg)); x86's
 * virt_spin_lock() (qspinlock under a hypervisor without PV spinlocks) is
 * the same with cmpxchg(0 -> 1). Their atomic steps are the ones below.
 *
 * Abstraction: the word is one variable, atomic_xchg_acquire() one step,
 * the spin on atomic_cond_read_relaxed() a blocking guard (a CPU that
 * would spin for ever is a blocked process: invalid end state). Promela
 * is sequentially consistent: the barriers are argued in
 * docs/memory-model.md.
 *
 * Variants (-D):
 *   LIVE          CPUs loop for ever, for the liveness runs:
 *                 pan -l (progress label on the critical section, weak
 *                 fairness): no cycle in which no CPU ever gets the lock,
 *                 i.e. no deadlock, no livelock;
 *                 STARVE as well: the ltl claim "CPU 0 always eventually
 *                 gets it", which test-and-set does NOT give (unfair):
 *                 spin must find the starving run;
 *   MUTANT_TEST_THEN_SET  xchg split into a read and, if it read 0, a
 *                 store: two CPUs read 0 and both take it (mutual
 *                 exclusion);
 *   MUTANT_WAIT_INVERTED  the spin waits for VAL instead of !VAL: a
 *                 waiter that missed the owner's window waits for ever
 *                 (deadlock).
 */

#ifndef NCPU
#define NCPU 3
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

byte word;			/* the lock word: 0 unlocked, 1 locked */
byte in_cs;
bool want0, cs0;		/* CPU 0 waits for / holds the lock (STARVE) */

proctype cpu(byte id)
{
	byte got;
	byte n = 0;

	do
#ifdef LIVE
	:: true ->
#else
	:: n < ROUNDS ->
#endif
#ifdef STARVE
		if :: id == 0 -> want0 = true :: else fi;
#endif
		do
		:: true ->
#ifdef MUTANT_TEST_THEN_SET
			got = word;			/* a read ... */
			if :: got == 0 -> word = 1 :: else fi;	/* ... then a store */
#else
			atomic { got = word; word = 1 }	/* atomic_xchg_acquire() */
#endif
			if
			:: got == 0 -> break
			:: else
			fi;
#ifdef MUTANT_WAIT_INVERTED
			(word != 0);
#else
			(word == 0)			/* atomic_cond_read_relaxed(!VAL) */
#endif
		od;
		got = 0;
		in_cs++;
#ifdef STARVE
		if :: id == 0 -> want0 = false; cs0 = true :: else fi;
#endif
progress_cs:
		assert(in_cs == 1);
		in_cs--;
#ifdef STARVE
		if :: id == 0 -> cs0 = false :: else fi;
#endif
		word = 0;				/* atomic_set_release(word, 0) */
#ifndef LIVE
		n++
	:: else -> break
#endif
	od
}

init {
	byte i;
	atomic {
		for (i : 0 .. NCPU - 1) {
			run cpu(i)
		}
	}
}

#ifdef STARVE
ltl starvation_free { [] (want0 -> <> cs0) }
#endif
