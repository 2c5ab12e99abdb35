/*
 * The qspinlock form of our lock word (CONFIG_QUEUED_SPINLOCKS):
 * bpf_lock_word_acquire() is arch_spin_lock() = queued_spin_lock() and
 * queued_spin_lock_slowpath() (kernel/locking/qspinlock.c, 6.1, native,
 * no paravirt), bpf_lock_word_release() is queued_spin_unlock().
 *
 * Abstraction (faithful for NCPU <= 3, one context per CPU):
 * - the 32-bit word is three variables, locked (byte 0), pending
 *   (byte 1: _Q_PENDING_BITS is 8 below 16K CPUs) and tail (cpu + 1,
 *   0 = no tail; idx is always 0: one lock context per CPU, no nesting).
 *   Every kernel operation on the word is one Promela step on the bytes
 *   it covers: a cmpxchg or read of the whole word reads/writes all
 *   three, xchg_tail() only tail, clear_pending_set_locked() the 16-bit
 *   locked_pending, set_locked() only locked, as the hardware serialises
 *   accesses to one word;
 * - qnodes[cpu].mcs.{locked,next} are node_locked[] and node_next[];
 * - spin-waits (atomic_cond_read_*, smp_cond_load_*) are blocking guards:
 *   a CPU stuck in one for ever shows up as an invalid end state
 *   (deadlock) or, in the liveness run, as a starved CPU;
 * - Promela is sequentially consistent: this checks the algorithm's
 *   atomic steps, not the barriers (docs/memory-model.md argues those).
 *
 * Variants (-D):
 *   FETCH_OR_ATOMIC  queued_fetch_set_pending_acquire() as one atomic
 *                    fetch_or (generic, arm64) instead of x86's
 *                    "lock btsl" followed by a separate atomic_read();
 *   LIVE             CPUs loop for ever; the ltl claim says CPU 0, once
 *                    it wants the lock, gets it (fairness of the queue),
 *                    checked with weak fairness (pan -a -f). 2 CPUs by
 *                    default (under a second); NCPU=3 takes ~15 s and
 *                    about 1 GB (scripts/model.sh runs it with FULL=1);
 *   MUTANT_SPLIT_CMPXCHG  fast path reads the word, then stores locked:
 *                    no atomic compare-and-exchange (mutual exclusion);
 *   MUTANT_NO_HANDOFF     the queue head takes the lock but never sets
 *                    next->locked (arch_mcs_spin_unlock_contended()
 *                    removed): its successor waits for ever (deadlock);
 *   MUTANT_HEAD_WAITS_ZERO  the queue head waits for the whole word to be
 *                    0 instead of !(locked|pending): its own tail keeps
 *                    it waiting and the next CPU queues behind it
 *                    (deadlock; with LIVE: starvation, 2 CPUs suffice);
 *   MUTANT_PENDING_NO_RECHECK  after setting pending, the value it
 *                    returned is not checked for another pending/tail
 *                    owner: two CPUs can both act as pending owner.
 */

#ifndef NCPU
#define NCPU 3
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

byte locked;			/* lock->locked */
byte pending;			/* lock->pending */
byte tail;			/* lock->tail: cpu + 1, 0 = none */
bit node_locked[NCPU];		/* qnodes[cpu].mcs.locked */
byte node_next[NCPU];		/* qnodes[cpu].mcs.next: cpu + 1, 0 = NULL */

byte in_cs;			/* CPUs inside the critical section */
bool want0, cs0;		/* CPU 0 waits for / holds the lock (LIVE) */

proctype cpu(byte id)
{
	byte vl, vp, vt;	/* the local copy 'val' of the word */
	byte old, next;
	byte n = 0;

#ifdef LIVE
	do
	:: true ->
#else
	do
	:: n < ROUNDS ->
#endif
#ifdef LIVE
		if :: id == 0 -> want0 = true :: else fi;
#endif

		/* queued_spin_lock(): atomic_try_cmpxchg_acquire(val 0 -> LOCKED).
		 * Each atomic block below is one access to shared memory plus
		 * the purely local decisions that follow it: interleaving
		 * other CPUs between a read and a branch on its local copy
		 * gives no new behaviour, and merging keeps the state space
		 * small enough for the 3-CPU liveness run. */
#ifdef MUTANT_SPLIT_CMPXCHG
		atomic { vl = locked; vp = pending; vt = tail };
		if
		:: (vl == 0 && vp == 0 && vt == 0) ->
			locked = 1;	/* separate store: another CPU can get in between */
			goto cs
		:: else
		fi;
#else
		atomic {
			if
			:: (locked == 0 && pending == 0 && tail == 0) ->
				locked = 1;
				goto cs
			:: else -> vl = locked; vp = pending; vt = tail
			fi
		}
#endif
		/* ---- queued_spin_lock_slowpath(lock, val) ---- */

		/* val == PENDING: re-read the word until it changes, at most
		 * _Q_PENDING_LOOPS times. The last read can return anything the
		 * word holds at that moment, PENDING included (loops ran out):
		 * one read at an arbitrary time is exactly that. Then: any
		 * contention (pending or tail) means queue. */
		atomic {
			if
			:: (vl == 0 && vp == 1 && vt == 0) ->
				vl = locked; vp = pending; vt = tail
			:: else
			fi;
			if
			:: (vp != 0 || vt != 0) -> goto queue
			:: else
			fi
		}

		/* queued_fetch_set_pending_acquire() */
#ifdef FETCH_OR_ATOMIC
		atomic { vl = locked; vp = pending; vt = tail; pending = 1 }
#else
		atomic { vp = pending; pending = 1 }	/* lock btsl: old pending bit */
		atomic { vl = locked; vt = tail }	/* atomic_read() & ~PENDING */
#endif

#ifndef MUTANT_PENDING_NO_RECHECK
		/* someone else has pending or a tail: undo our pending, queue */
		if
		:: (vp != 0 || vt != 0) ->
			if
			:: vp == 0 -> pending = 0	/* clear_pending() */
			:: else
			fi;
			goto queue
		:: else
		fi;
#endif

		/* we are the pending owner: wait for the owner to go
		 * (atomic_cond_read_acquire(!(VAL & LOCKED))), then
		 * clear_pending_set_locked(): WRITE_ONCE(locked_pending, LOCKED) */
		if
		:: vl != 0 -> (locked == 0)
		:: else
		fi;
		atomic { pending = 0; locked = 1 };
		goto cs;

queue:
		/* our node is not published yet: nobody else reads it */
		atomic { node_locked[id] = 0; node_next[id] = 0 };

		/* queued_spin_trylock(): atomic_read(), then cmpxchg if 0 */
		atomic {
			vl = locked; vp = pending; vt = tail;
			if
			:: (vl == 0 && vp == 0 && vt == 0) -> skip
			:: else -> goto publish
			fi
		}
		atomic {
			if
			:: (locked == 0 && pending == 0 && tail == 0) ->
				locked = 1;
				goto cs
			:: else
			fi
		}
publish:
		/* xchg_tail(): publish our node as the tail */
		atomic { old = tail; tail = id + 1; next = 0 };
		if
		:: old != 0 ->
			node_next[old - 1] = id + 1;	/* WRITE_ONCE(prev->next, node) */
			atomic {
				(node_locked[id] == 1);	/* arch_mcs_spin_lock_contended() */
			}
			next = node_next[id]		/* READ_ONCE(node->next) */
		:: else
		fi;

		/* head of the queue: atomic_cond_read_acquire(!(VAL & LOCKED_PENDING)) */
		atomic {
#ifdef MUTANT_HEAD_WAITS_ZERO
			(locked == 0 && pending == 0 && tail == 0) ->
#else
			(locked == 0 && pending == 0) ->
#endif
			vl = locked; vp = pending; vt = tail;
			if
			:: vt != id + 1 -> goto set_locked
			:: else
			fi
		}
		/* last in the queue: atomic_try_cmpxchg_relaxed(val -> LOCKED) */
		atomic {
			if
			:: (locked == vl && pending == vp && tail == vt) ->
				tail = 0;
				locked = 1;
				goto cs
			:: else
			fi
		}
set_locked:
		locked = 1;				/* set_locked() */
		if
		:: next == 0 ->
			(node_next[id] != 0);		/* smp_cond_load_relaxed(&node->next, VAL) */
			next = node_next[id]
		:: else
		fi;
#ifndef MUTANT_NO_HANDOFF
		node_locked[next - 1] = 1;		/* arch_mcs_spin_unlock_contended() */
#endif
cs:
		/* the critical section */
		/* the locals are dead here: clearing them keeps equal states equal */
		atomic { vl = 0; vp = 0; vt = 0; old = 0; next = 0; in_cs++ };
#ifdef LIVE
		if :: id == 0 -> want0 = false; cs0 = true :: else fi;
#endif
progress_cs:
		assert(in_cs == 1);
		in_cs--;
#ifdef LIVE
		if :: id == 0 -> cs0 = false :: else fi;
#endif

		/* queued_spin_unlock(): smp_store_release(&lock->locked, 0) */
		locked = 0;
#ifndef LIVE
		n++			/* not in LIVE: a counter would multiply the states */
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

#ifdef LIVE
/* CPU 0 never waits for ever: with weak fairness, every request is served */
ltl starvation_free { [] (want0 -> <> cs0) }
#endif
