/*
 * A BPF_F_LOCK lookup against programs that update two fields of the same
 * element under its lock.
 *
 * Reader (user space, BPF_MAP_LOOKUP_ELEM with BPF_F_LOCK):
 *   bpf_map_copy_value() -> copy_map_value_locked(map, value, ptr, true)
 *   = bpf_lock_word_lock_irqsave(); copy_map_value(); ..._unlock_irqrestore()
 * Writers (programs on two other CPUs):
 *   bpf_spin_lock(&e->lock); e->a = v; e->b = v; bpf_spin_unlock(&e->lock);
 * plus a BPF_F_LOCK update from user space, which copies in under the
 * same lock (htab_elem_update_locked() / array_map_update_elem()):
 * the same shape as a program writer, so it is one of the two writers.
 *
 * Abstraction: the lock word is an atomic test-and-set (one step,
 * blocking while held): mutex_qspin.pml and mutex_tas.pml check that both
 * real forms give mutual exclusion, so any of them can stand in here.
 * Each field is one word, read or written in one step (copy_map_value()
 * is a memcpy: it may split a field, which only matters when the lock
 * does not exclude the writer, and then the model already fails).
 * Sequentially consistent: the reorderings a missing acquire or release
 * would allow on arm64 are the mutants.
 *
 * Property: every copy the reader gets has a == b.
 *
 * Mutants (-D):
 *   MUTANT_EARLY_UNLOCK  the writer's last store after its unlock: what a
 *                        relaxed (non-release) unlock lets a weakly
 *                        ordered CPU do;
 *   MUTANT_EARLY_READ    the reader's first load before its lock: what a
 *                        relaxed (non-acquire) lock lets a CPU do;
 *   MUTANT_NO_LOCK       the reader copies without the lock (a lookup
 *                        without BPF_F_LOCK).
 */

#ifndef ROUNDS
#define ROUNDS 2
#endif

bit lock;			/* the element's bpf_spin_lock word */
byte a = 1, b = 1;		/* two fields of the value, kept equal by writers */

inline acquire() { atomic { lock == 0 -> lock = 1 } }
inline release() { lock = 0 }

proctype writer(byte v)
{
	byte n = 0;
	do
	:: n < ROUNDS ->
		acquire();
		a = v;
#ifdef MUTANT_EARLY_UNLOCK
		release();
		b = v;
#else
		b = v;
		release();
#endif
		n++
	:: else -> break
	od
}

proctype reader()
{
	byte ra, rb;
	byte n = 0;
	do
	:: n < ROUNDS ->
#if defined(MUTANT_NO_LOCK)
		ra = a;
		rb = b;
#elif defined(MUTANT_EARLY_READ)
		ra = a;
		acquire();
		rb = b;
		release();
#else
		acquire();
		ra = a;			/* copy_map_value(): field by field */
		rb = b;
		release();
#endif
		assert(ra == rb);	/* no torn read */
		ra = 0; rb = 0;
		n++
	:: else -> break
	od
}

init {
	atomic {
		run writer(2);
		run writer(3);
		run reader()
	}
}
