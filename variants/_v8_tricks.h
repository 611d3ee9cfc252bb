/* v8's two tricks on top of v6's algorithm (variants/_v8_merge.pyx), each a switch that is on unless the
   build turns it off with -DV8_<TRICK>=0.  The rung is built with both on.  The ablation
   (tools/ablation/v8/) builds v8's merge again, once per trick with that one off, into out/,
   and times the builds side by side.  Each switch is a constant the C compiler sees, so the code it
   guards is kept or dropped when v8 is compiled: the rung's own build tests no switch while it runs. */
#ifndef BPE_V8_TRICKS_H
#define BPE_V8_TRICKS_H

#include "_hints.h"

/* Offsets, records, table buckets and slots fetched a few places ahead of their use. */
#ifndef V8_PREFETCH
#define V8_PREFETCH 1
#endif

/* The lost pairs (x, a) and (b, y) found once per neighbour when a merge's words are done, and a fresh
   token's pairs given slots without a probe; off: each word's lost pairs found and lowered as it is
   rewritten, and every gained pair looked up in the table when first seen. */
#ifndef V8_DEFERRED_PROBES
#define V8_DEFERRED_PROBES 1
#endif

/* The prefetch as v8 calls it: it does nothing where its switch is off. */
#define V8_FETCH(p) ((V8_PREFETCH) ? BPE_PREFETCH(p) : (void)0)

#endif
