package zframe

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// ax_early_arena runs when the program is loaded, before any thread: glibc
// fixes how many arenas it may make at a thread's first allocation, and a
// thread keeps the arena it took, so one arena must be asked for before
// then (see TuneMalloc). ARKTOS_FRAME_HEAP=0 (or 0B, 0MiB, ...) leaves it.
__attribute__((constructor)) static void ax_early_arena(void) {
#ifdef __GLIBC__
	const char *v = getenv("ARKTOS_FRAME_HEAP");
	if (v != NULL && v[0] == '0' && (v[1] == 0 || (v[1] < '0' || v[1] > '9') && v[1] != '.')) {
		return;
	}
	mallopt(M_ARENA_MAX, 1);
#endif
}

// ax_tune_malloc: see TuneMalloc. Returns 1 when glibc took every setting.
static int ax_tune_malloc(int keep, int threshold) {
#ifdef __GLIBC__
	return mallopt(M_ARENA_MAX, 1) && mallopt(M_MMAP_THRESHOLD, threshold) &&
		mallopt(M_TRIM_THRESHOLD, keep) && mallopt(M_TOP_PAD, keep);
#else
	return 0;
#endif
}
*/
import "C"

import "sync"

// MmapThreshold is glibc's largest mmap threshold on 64-bit systems (32 MiB,
// HEAP_MAX_SIZE/2): frames up to it come from the reusable heap once
// TuneMalloc ran; larger ones are still mapped and unmapped one by one.
const MmapThreshold = 32 << 20

// MaxMallocKeep is the most TuneMalloc keeps (mallopt takes an int).
const MaxMallocKeep = 1 << 30

var tuned struct {
	once sync.Once
	ok   bool
}

// TuneMalloc makes glibc's malloc, which libzmq uses for every frame it
// receives or copies to send, keep up to keep bytes of freed frames resident
// for the next message instead of handing them back to the system. It
// reports whether glibc took the settings (false elsewhere, e.g. musl, or a
// keep of 0 or less: nothing is changed then). Only the first call in a
// process counts: the settings are process-wide.
//
// Why: libzmq queues a whole multipart message before delivering it, so a
// 256 MiB array in 16 MiB frames is 256 MiB of malloc'd messages at once.
// By default each frame is mapped fresh (over glibc's mmap threshold, or in
// a thread arena whose heaps are at most 64 MiB and are unmapped when
// empty) and every page is faulted in and zeroed by the kernel again on
// each transfer: on the 2-core VM of bench/transfer a 256 MiB upload in
// frames took 65,000 page faults and ran at 0.1-0.4 GiB/s from Go against
// about 2 GiB/s with the settings below (zero faults). The settings: one
// arena (libzmq's I/O threads allocate from the main heap, which grows and
// shrinks as one region), frames under MmapThreshold from that heap, and
// keep bytes of its free top kept when it shrinks (M_TRIM_THRESHOLD and
// M_TOP_PAD).
//
// The arena count must be set before any thread's first allocation (glibc
// fixes its arena limit then, and a thread keeps the arena it took): a
// constructor of this package, ax_early_arena, asks for one arena when the
// program is loaded, unless ARKTOS_FRAME_HEAP is 0. Set later, as the
// other settings are (a tuned mallopt at server start), some of libzmq's
// frames still went to a thread arena and were faulted in afresh in one
// transfer in three.
func TuneMalloc(keep int64) bool {
	tuned.once.Do(func() {
		if keep <= 0 {
			return
		}
		tuned.ok = C.ax_tune_malloc(C.int(min(keep, MaxMallocKeep)), C.int(MmapThreshold)) == 1
	})
	return tuned.ok
}
