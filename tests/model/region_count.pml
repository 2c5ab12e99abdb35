/*
 * 6.12's lock-region mark is a count, not 6.1's flag (patches/6.12 0023):
 * a region may hold another. A program holds element A's lock through
 * the helper (the per-CPU flags slot) and, under it, drops an object
 * whose own list is freed under the object's lock C
 * (bpf_list_head_free(): bpf_lock_word_lock_irqsave(), flags on its own
 * stack). The inner region's end must not unmark the outer one.
 *
 * CPU 0, include/linux/bpf_lock.h and kernel/bpf/bpf_lock.c:
 *   local_irq_save(f); bpf_lock_region_enter(); take(A); slot = f;
 *     local_irq_save(f2); bpf_lock_region_enter(); take(C);
 *     release(C); bpf_lock_region_exit(); local_irq_restore(f2);
 *   f = slot; release(A); bpf_lock_region_exit(); local_irq_restore(f);
 * bpf_lock_region_enter()/exit() are __this_cpu_inc()/__this_cpu_dec():
 * modelled as a load and a store, which an NMI may split (x86 makes it
 * one instruction; other architectures need not).
 * CPU 1 takes A too (contention). One NMI on CPU 0, at any moment or
 * never, runs a guarded tracing program that locks A or B through the
 * helper: skipped (recursion_misses) while the count is not 0, else it
 * enters and leaves a region of its own, which leaves the count as it
 * found it.
 *
 * Properties:
 * - no self-deadlock: no invalid end state;
 * - the saved flags are not overwritten: CPU 0 leaves with interrupts on
 *   (assert), and the count is back at 0 (assert).
 *
 * Variants (-D): NMI_ONLY_A / NMI_ONLY_B as in nmi_guard.pml.
 * Mutant (-D):
 *   MUTANT_FLAG  the mark set to 1 and cleared to 0 (6.1's flag): after
 *                the inner region's end the CPU holds A unmarked, and the
 *                NMI's program spins on A (invalid end state) or, with
 *                B, overwrites the flags slot (assertion).
 */

bit lockA, lockB, lockC;	/* two elements' and an object's lock words */
bit irq0 = 1;			/* CPU 0: interrupts on */
bit slot0;			/* CPU 0: bpf_lock_cpu.irq_flags */
byte busy0;			/* CPU 0: bpf_lock_cpu.busy */
bit nmi_active;			/* an NMI runs on CPU 0 */
bit nmi_fired;
byte misses;			/* prog->stats misses (recursion_misses) */

#ifdef MUTANT_FLAG
inline region_enter(tmp) { busy0 = 1 }
inline region_exit(tmp) { busy0 = 0 }
#else
inline region_enter(tmp) { tmp = busy0; busy0 = tmp + 1 }
inline region_exit(tmp) { tmp = busy0; busy0 = tmp - 1 }
#endif

/* CPU 0's own code runs only while no NMI runs on it */
proctype cpu0() provided (nmi_active == 0)
{
	bit flags, f2;
	byte tmp;

	/* the helper's lock_irqsave(&A) */
	flags = irq0; irq0 = 0;
	region_enter(tmp);
	atomic { lockA == 0 -> lockA = 1 };
	slot0 = flags;
	flags = 0;

	/* bpf_obj_drop() under A: the object's list freed under its lock C */
	f2 = irq0; irq0 = 0;
	region_enter(tmp);
	atomic { lockC == 0 -> lockC = 1 };
	skip;
	lockC = 0;
	region_exit(tmp);
	irq0 = f2;

	/* still under A */
	skip;

	/* the helper's lock_irqrestore(&A) */
	flags = slot0;
	lockA = 0;
	region_exit(tmp);
	irq0 = flags;

	assert(irq0 == 1);		/* the flags it saved, not an NMI's */
	assert(busy0 == 0)
}

/* CPU 1: the same program on A; it has its own irq state and slot */
proctype cpu1()
{
	atomic { lockA == 0 -> lockA = 1 };
	skip;
	lockA = 0
}

/* one NMI on CPU 0, at any moment; it runs to its end before CPU 0 goes on */
proctype nmi()
{
	bit flags;
	bit x;				/* the element it locks: 0 = A, 1 = B */
	byte tmp;

	atomic { nmi_fired == 0 -> nmi_fired = 1; nmi_active = 1 };
	/* bpf_prog_lock_guard_skip(): bpf_lock_cpu_busy() */
	if
	:: busy0 != 0 -> misses++; goto out
	:: else
	fi;
#if defined(NMI_ONLY_A)
	x = 0;
#elif defined(NMI_ONLY_B)
	x = 1;
#else
	if :: x = 0 :: x = 1 fi;
#endif

	/* the guarded program: bpf_spin_lock(X) on CPU 0's slot */
	flags = irq0; irq0 = 0;
	region_enter(tmp);
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
	region_exit(tmp);
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
