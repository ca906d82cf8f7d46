#ifndef CAMO_ALLOCATION_COUNTER_H
#define CAMO_ALLOCATION_COUNTER_H

/// Counts heap allocations in the process that links this library (camo-bench only): malloc, calloc, realloc,
/// memalign, aligned_alloc and posix_memalign are defined here, counted, and passed on to glibc's own
/// (`__libc_malloc` and its siblings), so every allocation (Swift's runtime, Foundation, the C libraries) is seen.
/// free is not interposed: glibc's frees what its own allocator gave.

/// Allocations since the process started.
unsigned long camo_allocation_count(void);

#endif
