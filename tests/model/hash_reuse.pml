/*
 * A hash element deleted and its memory reused by an insert while a
 * BPF_F_LOCK reader still copies it (kernel/bpf/hashtab.c).
 *
 * Element E holds key 1, value a = b = 1 (prealloc: free_htab_elem()
 * pushes it on the free list at once, and alloc_htab_elem() pops it for
 * the next insert; bpf_mem_alloc reuses freed elements from its per-CPU
 * cache the same way: no grace period between free and reuse).
 *
 * CPU 0, user space BPF_MAP_LOOKUP_ELEM(key 1, BPF_F_LOCK):
 *   rcu_read_lock(); l = lookup(key 1);         (may find E)
 *   copy_map_value_locked(map, value, l's value, true): lock E, copy a, b,
 *   unlock E.
 * CPU 1, a program holding E's lock from a lookup made before the delete:
 *   bpf_spin_lock(&E->lock); a = 3; b = 3; bpf_spin_unlock();
 * CPU 2: bpf_map_delete_elem(key 1); bpf_map_update_elem(key 2, value 2):
 *   htab_map_delete_elem(): unlink E, free_htab_elem() -> free list;
 *   htab_map_update_elem() -> alloc_htab_elem(): pop E, write key 2,
 *   write the value:
 *     stock (-DSTOCK): copy_map_value() with no lock;
 *     0007:            copy_map_value_locked(map, E's value, value, false);
 *   then link E under key 2. The lock word is never reset.
 *
 * Property: the reader's copy has a == b (it may be the old value or the
 * new one, or a program's, never a mix).
 *
 * Abstraction: buckets, RCU and the free list are reduced to E's state
 * (linked under key 1 / free / linked under key 2); the bucket lock is
 * not modelled (only CPU 2 changes the list). The lock word is an atomic
 * test-and-set, justified by mutex_*.pml. Sequentially consistent.
 *
 * Variants (-D):
 *   STOCK              no 0007: the insert writes without the lock; spin
 *                      must find the torn read;
 *   MUTANT_RESET_LOCK  0007, but the insert zeroes the lock word first
 *                      (as a fresh element would be): the reader inside
 *                      loses its exclusion, torn read again. This is why
 *                      alloc_htab_elem() leaves the word alone.
 */

bit lock;			/* E's bpf_spin_lock word */
byte a = 1, b = 1;		/* E's value */
byte key = 1;			/* E's key; 0 while E is on the free list */

inline acquire() { atomic { lock == 0 -> lock = 1 } }
inline release() { lock = 0 }

proctype reader()
{
	byte ra, rb;
	bool found;

	/* htab_map_lookup_elem() under rcu_read_lock(): finds E or not */
	atomic { found = (key == 1) };
	if
	:: found ->
		acquire();			/* copy_map_value_locked(..., true) */
		ra = a;
		rb = b;
		release();
		assert(ra == rb)		/* no torn read */
	:: else				/* -ENOENT */
	fi
}

proctype program()
{
	/* looked E up before the delete: it may lock E whatever E became */
	acquire();				/* bpf_spin_lock() */
	a = 3;
	b = 3;
	release()				/* bpf_spin_unlock() */
}

proctype updater()
{
	/* htab_map_delete_elem(key 1): unlink, free_htab_elem() */
	key = 0;
	/* htab_map_update_elem(key 2): alloc_htab_elem() pops E */
#ifdef STOCK
	a = 2;					/* copy_map_value(), no lock */
	b = 2;
#else
#ifdef MUTANT_RESET_LOCK
	lock = 0;
#endif
	acquire();				/* copy_map_value_locked(..., false) */
	a = 2;
	b = 2;
	release();
#endif
	key = 2					/* hlist_nulls_add_head_rcu() */
}

init {
	atomic {
		run reader();
		run program();
		run updater()
	}
}
