#ifndef LIVEOBJECTS_CCRC32C_H
#define LIVEOBJECTS_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor computes CRC-32C in hardware (x86-64 with SSE4.2, or an ARMv8
/// processor built for with its CRC extension), checked once at run time.
int liveobjects_crc32c_hardware_available(void);

/// Continues a CRC-32C (Castagnoli) over `count` bytes at `bytes` with the processor's CRC
/// instructions. `state` is the running value before its final inversion (start with
/// 0xFFFFFFFF, invert at the end). Call only when `liveobjects_crc32c_hardware_available()`.
uint32_t liveobjects_crc32c_hardware(uint32_t state, const void *_Nonnull bytes, size_t count);

#endif
