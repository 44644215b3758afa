internal import CCRC32C

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of snapshot files and
/// journal lines (see docs/FORMAT.md).
///
/// Computed with the processor's CRC instructions where it has them (x86-64 with SSE4.2, ARMv8
/// with its CRC extension), otherwise eight bytes at a time through eight 256-entry tables.
/// The check value, the CRC-32C of the ASCII bytes `123456789`, is `0xE3069283`.
struct CRC32C {
    /// The running value, before its final inversion.
    private var state: UInt32 = 0xFFFF_FFFF

    init() {}

    /// The checksum of the bytes given so far.
    var value: UInt32 { ~state }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Adds `bytes` to the checksum.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if Self.hardware {
            state = liveobjects_crc32c_hardware(state, base, bytes.count)
        } else {
            state = Self.software(state, base, bytes.count)
        }
    }

    /// Whether the processor's CRC instructions are used.
    static let hardware = liveobjects_crc32c_hardware_available() != 0

    /// The table-driven computation ("slicing by 8"): table `k` gives the CRC of a byte
    /// followed by `k` zero bytes.
    static func software(_ state: UInt32, _ bytes: UnsafeRawPointer, _ count: Int) -> UInt32 {
        var crc = state
        var p = bytes
        var n = count
        tables.withUnsafeBufferPointer { tables in
            let t = tables.baseAddress!
            while n >= 8 {
                let v = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)) ^ UInt64(crc)
                let low =
                    t[7 << 8 | Int(v & 0xFF)] ^ t[6 << 8 | Int(v >> 8 & 0xFF)]
                    ^ t[5 << 8 | Int(v >> 16 & 0xFF)] ^ t[4 << 8 | Int(v >> 24 & 0xFF)]
                let high =
                    t[3 << 8 | Int(v >> 32 & 0xFF)] ^ t[2 << 8 | Int(v >> 40 & 0xFF)]
                    ^ t[1 << 8 | Int(v >> 48 & 0xFF)] ^ t[Int(v >> 56)]
                crc = low ^ high
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = crc >> 8 ^ t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
                p += 1
                n -= 1
            }
        }
        return crc
    }

    /// The eight tables of ``software(_:_:_:)``, one after the other.
    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 << 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? c >> 1 ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let previous = t[(k - 1) << 8 | i]
                t[k << 8 | i] = previous >> 8 ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()

    // MARK: Text

    /// The checksum as 8 lowercase hexadecimal digits, its form in files.
    static func hex(_ value: UInt32) -> [UInt8] {
        (0..<8).map { i in
            let digit = UInt8(value >> (28 - 4 * UInt32(i)) & 0xF)
            return digit < 10 ? 0x30 + digit : 0x61 + digit - 10
        }
    }

    /// The value of 8 lowercase hexadecimal digits at `p`, or nil.
    static func parseHex(_ p: UnsafeRawPointer) -> UInt32? {
        var value: UInt32 = 0
        for i in 0..<8 {
            let b = p.load(fromByteOffset: i, as: UInt8.self)
            let digit: UInt8
            switch b {
            case 0x30...0x39: digit = b - 0x30
            case 0x61...0x66: digit = b - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
