/*
 * The lock-region mark of 0010 against a program that starts inside a
 * lock region on the same CPU (an NMI, or a tp_btf program in the lock's
 * slow path).
 *
 * CPU 0 runs a program: bpf_spin_lock(&A); ...; bpf_spin_unlock(&A).
 * kernel/bpf/bpf_lock.c, lock_irqsave() / lock_irqrestore():
 *   local_irq_save(flags); bpf_lock_region_enter();   busy = 1
 *   bpf_lock_word_acquire(A); this_cpu irq_flags = flags;
 *   ...
 *   flags = this_cpu irq_flags; bpf_lock_word_release(A);
 *   bpf_lock_region_exit();   busy = 0;   local_irq_restore(flags)
 * CPU 1 runs the same program on A (contention, so that the NMI can also
 * meet a lock held by another CPU: that one must simply wait).
 * An NMI arrives on CPU 0 once, at any point (or never), and runs a
 * guarded tracing program (prog->lock_guard) that locks A or B:
 *   __bpf_prog_enter_lock_guard() / __bpf_trace_run():
 *     if (bpf_lock_cpu_busy()) { misses++; skip }
 *   else bpf_spin_lock(X) ... bpf_spin_unlock(X) with the same per-CPU
 *   irq_flags slot.
 * While the NMI runs, CPU 0's interrupted code does not ('provided').
 *
 * Properties:
 * - no self-deadlock: no invalid end state (an NMI spinning on A that
 *   its own CPU holds blocks everything on CPU 0 for ever);
 * - the saved flags are not overwritten: CPU 0 leaves with interrupts on,
 *   as it entered (assert).
 *
 * Abstraction: the lock words are atomic test-and-set (mutex_*.pml);
 * irq state is one bit per CPU; the busy mark and the flags slot are
 * plain per-CPU variables, and only CPU 0 and its NMI touch CPU 0's
 * (the NMI sees CPU 0's earlier stores in program order: same CPU).
 *
 * Variants (-D): NMI_ONLY_A / NMI_ONLY_B: the NMI program locks only A
 * (the element its CPU holds) or only B (another one), to see each
 * failure of NO_GUARD on its own; by default it picks either.
 *
 * Mutants (-D):
 *   NO_GUARD         no busy check at the program's entry (stock, or
 *                    0010 without its guard): spin finds the NMI spinning
 *                    on A (deadlock: invalid end state) or, with B,
 *                    overwriting the flags slot (assertion);
 *   MUTANT_MARK_LATE busy set after the word is taken instead of before:
 *                    an NMI between the two takes A again;
 *   MUTANT_CLEAR_EARLY busy cleared before the word is released.
 */

bit lockA, lockB;		/* two elements' lock words */
bit irq0 = 1;			/* CPU 0: interrupts on */
bit slot0;			/* CPU 0: bpf_lock_cpu.irq_flags */
bit busy0;			/* CPU 0: bpf_lock_cpu.busy */
bit nmi_active;			/* an NMI runs on CPU 0 */
bit nmi_fired;
byte misses;			/* prog->stats misses (recursion_misses) */

/* CPU 0's own code runs only while no NMI runs on it */
proctype cpu0() provided (nmi_active == 0)
{
	bit flags;

	/* lock_irqsave(&A) */
	flags = irq0; irq0 = 0;			/* local_irq_save() */
#ifndef MUTANT_MARK_LATE
	busy0 = 1;				/* bpf_lock_region_enter() */
#endif
	atomic { lockA == 0 -> lockA = 1 };	/* bpf_lock_word_acquire() */
#ifdef MUTANT_MARK_LATE
	busy0 = 1;
#endif
	slot0 = flags;				/* __this_cpu_write(irq_flags) */
	flags = 0;

	/* the critical section */
	skip;

	/* lock_irqrestore(&A) */
	flags = slot0;				/* __this_cpu_read(irq_flags) */
#ifdef MUTANT_CLEAR_EARLY
	busy0 = 0;
#endif
	lockA = 0;				/* bpf_lock_word_release() */
#ifndef MUTANT_CLEAR_EARLY
	busy0 = 0;				/* bpf_lock_region_exit() */
#endif
	irq0 = flags;				/* local_irq_restore() */

	assert(irq0 == 1)			/* the flags it saved, not an NMI's */
}

/* CPU 1: the same program on A; it has its own irq state and slot */
proctype cpu1()
{
	atomic { lockA == 0 -> lockA = 1 };
	skip;
	lockA = 0
}

/* one NMI on CPU 0, at any moment */
proctype nmi()
{
	bit flags;
	bit x;				/* the element it locks: 0 = A, 1 = B */

	atomic { nmi_fired == 0 -> nmi_fired = 1; nmi_active = 1 };
#ifndef NO_GUARD
	/* __bpf_prog_enter_lock_guard(): bpf_lock_cpu_busy() */
	if
	:: busy0 -> misses++; goto out
	:: else
	fi;
#endif
#if defined(NMI_ONLY_A)
	x = 0;
#elif defined(NMI_ONLY_B)
	x = 1;
#else
	if :: x = 0 :: x = 1 fi;
#endif

	/* the guarded program: bpf_spin_lock(X) on CPU 0's slot */
	flags = irq0; irq0 = 0;
	busy0 = 1;
	if
	:: x == 0 -> atomic { lockA == 0 -> lockA = 1 }
	:: x == 1 -> atomic { lockB == 0 -> lockB = 1 }
	fi;
	slot0 = flags;
	flags = 0;
	/* bpf_spin_unlock(X) */
	flags = slot0;
	if
	:: x == 0 -> lockA = 0
	:: x == 1 -> lockB = 0
	fi;
	busy0 = 0;
	irq0 = flags;
out:
	nmi_active = 0
}

init {
	atomic {
		run cpu0();
		run cpu1();
		run nmi()
	}
}
