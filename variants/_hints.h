/* Memory hints shared by the compiled rungs (v8's merge, v9's counter).  Each is only a hint: where the
   compiler or the system lacks it, it does nothing, and the results are the same. */
#ifndef BPE_HINTS_H
#define BPE_HINTS_H

/* Fetch the cache line at p ahead of its use: a loop that knows its next few random reads (v8's next
   words, v9's next pre-tokens' slots) overlaps their misses instead of waiting for each in turn. */
#if defined(__GNUC__) || defined(__clang__)
#define BPE_PREFETCH(p) __builtin_prefetch((p), 1, 3)
#else
#define BPE_PREFETCH(p) ((void)(p))
#endif

/* Ask Linux to back a large block with 2 MiB pages.  A block read at random (v8's records, v9's hash
   tables) misses the TLB on nearly every read with 4 KiB pages and walks the page tables, a second
   miss; one 2 MiB page covers 512 of them.  Elsewhere, or for a small block, nothing. */
#if defined(__linux__)
#include <sys/mman.h>
#include <stdint.h>
static void bpe_advise_huge(void *p, size_t size) {
    const uintptr_t page = (uintptr_t)2 << 20;
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + size) & ~(page - 1);
    if (end > start) madvise((void *)start, end - start, MADV_HUGEPAGE);
}
#else
static void bpe_advise_huge(void *p, size_t size) { (void)p; (void)size; }
#endif

#endif
