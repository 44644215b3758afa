// CRC-32C with the processor's CRC instructions: the Persistence module checks every snapshot
// byte with it at open and when saving. Processors without them take the Swift table-driven
// path (Persistence's CRC32C.swift).
#include "CCRC32C.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

int liveobjects_crc32c_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t liveobjects_crc32c_hardware(uint32_t state, const void *_Nonnull bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t crc = state;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __builtin_ia32_crc32di(crc, word);
        p += 8;
        count -= 8;
    }
    uint32_t crc32 = (uint32_t)crc;
    while (count > 0) {
        crc32 = __builtin_ia32_crc32qi(crc32, *p);
        p += 1;
        count -= 1;
    }
    return crc32;
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>

int liveobjects_crc32c_hardware_available(void) { return 1; }

uint32_t liveobjects_crc32c_hardware(uint32_t state, const void *_Nonnull bytes, size_t count) {
    const unsigned char *p = bytes;
    uint32_t crc = state;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __crc32cd(crc, word);
        p += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = __crc32cb(crc, *p);
        p += 1;
        count -= 1;
    }
    return crc;
}

#else

int liveobjects_crc32c_hardware_available(void) { return 0; }

uint32_t liveobjects_crc32c_hardware(uint32_t state, const void *_Nonnull bytes, size_t count) {
    (void)bytes;
    (void)count;
    return state;
}

#endif
