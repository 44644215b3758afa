#ifndef LIVEOBJECTS_CPREFETCH_H
#define LIVEOBJECTS_CPREFETCH_H

/// Asks the processor to start loading the cache line at `address` for a read soon after,
/// without waiting for it. Changes nothing and never faults.
static inline __attribute__((always_inline)) void liveobjects_prefetch(const void *_Nonnull address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
