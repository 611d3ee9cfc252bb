/* The memory hint shared by the compiled rungs (v8's merge, v9's counter, the encoder).  It is only a hint:
   where the compiler lacks it, it does nothing, and the results are the same. */
#ifndef BPE_HINTS_H
#define BPE_HINTS_H

/* Fetch the cache line at p ahead of its use: a loop that knows its next few random reads (v8's next
   words, v9's next pre-tokens' slots) overlaps their misses instead of waiting for each in turn. */
#if defined(__GNUC__) || defined(__clang__)
#define BPE_PREFETCH(p) __builtin_prefetch((p), 1, 3)
#else
#define BPE_PREFETCH(p) ((void)(p))
#endif

#endif
