/* v8's tricks (variants/_v8_merge.pyx), each a switch that is on unless the build turns it off with
   -DV8_<TRICK>=0.  The rung is built with every one on.  The ablation (bpe/lab/measure/ablation/v8/)
   builds v8's merge again, once per trick with that one off, into out/, and times the builds side by side.
   Each switch is a constant the C compiler sees, so the code it guards is kept or dropped when v8 is
   compiled: the rung's own build tests no switch while it runs. */
#ifndef BPE_V8_TRICKS_H
#define BPE_V8_TRICKS_H

#include "_hints.h"

/* Records, refs, table buckets and slots fetched a few places ahead of their use. */
#ifndef V8_PREFETCH
#define V8_PREFETCH 1
#endif

/* The lost pairs (x, a) and (b, y) found once per neighbour when a merge's words are done, and a fresh
   token's pairs given slots without a probe; off: each word's lost pairs found and lowered as it is
   rewritten, and every gained pair looked up in the table when first seen. */
#ifndef V8_DEFERRED_PROBES
#define V8_DEFERRED_PROBES 1
#endif

/* A 32-bit summary of the pairs each word holds, beside its record's offset: a clear bit skips a stale
   listing without reading the record; off: every listing reads its record. */
#ifndef V8_SUMMARY_BITS
#define V8_SUMMARY_BITS 1
#endif

/* The blocks read at random advised to 2 MiB pages (bpe_advise_huge); off: left to the system. */
#ifndef V8_HUGE_PAGES
#define V8_HUGE_PAGES 1
#endif

/* The records laid out by count, the most frequent words first; off: in the order the counts come. */
#ifndef V8_COUNT_ORDER
#define V8_COUNT_ORDER 1
#endif

/* One or two holders kept in the pair's slot itself; off: every pair's holders in an array of its own,
   allocated with its first word. */
#ifndef V8_HOLDERS_IN_SLOT
#define V8_HOLDERS_IN_SLOT 1
#endif

/* The two hints as v8 calls them: each does nothing where its switch is off. */
#define V8_FETCH(p) ((V8_PREFETCH) ? BPE_PREFETCH(p) : (void)0)
#define V8_ADVISE_HUGE(p, size) ((V8_HUGE_PAGES) ? bpe_advise_huge((p), (size)) : (void)0)

#endif
