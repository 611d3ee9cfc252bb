/* v10's two ideas as build switches (variants/_v10_merge.pyx), as v8's tricks are (_v8_tricks.h): each on
   unless a build turns it off with -DV10_<SWITCH>=0, so an ablation can compile the merge again without
   one and time the two builds side by side.  Each switch is a constant the C compiler sees: the code it
   guards is kept or dropped when the module is compiled, and the rung's own build tests nothing while
   it runs.

   The parallel idea needs no switch: threads=1 runs the same code on the calling thread alone. */
#ifndef BPE_V10_SWITCHES_H
#define BPE_V10_SWITCHES_H

#include "_hints.h"

/* Token ids as 16 bits in the words' records while the vocabulary has at most 65,536 tokens (the block
   widened to 32 bits at the 65,537th); off: 32-bit ids from the start, every record twice as long. */
#ifndef V10_NARROW_IDS
#define V10_NARROW_IDS 1
#endif

/* The holders of a pair kept exact: a word that leaves a pair is found on its list and marked dead, so a
   merge reads only the words that hold its pair (no stale visit); off, as the rung is built: v8's lazy
   lists, where a word stays listed after it loses the pair and a merge reads it to find that out.  Exact
   lists were measured slower on web text (docs/v10.md, "Exact holders, measured and left off"): finding a
   word on a long list costs more than reading its compact record, which the cache mostly holds. */
#ifndef V10_EXACT_HOLDERS
#define V10_EXACT_HOLDERS 0
#endif

#ifndef V10_TABLE_LOAD
#define V10_TABLE_LOAD 50
#endif

#ifndef V10_FLOORED_HEAP
#define V10_FLOORED_HEAP 1
#endif

/* Records, buckets and slots fetched a few places ahead of their use (v8's first trick). */
#ifndef V10_PREFETCH
#define V10_PREFETCH 1
#endif

#define V10_FETCH(p) ((V10_PREFETCH) ? BPE_PREFETCH(p) : (void)0)

#endif
