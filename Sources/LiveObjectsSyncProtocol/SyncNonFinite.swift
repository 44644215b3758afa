/// The spelling of the non-finite numbers on the wire (docs/SYNC-PROTOCOL.md, "Values on the
/// wire"): JSON has none, so `{"double": …}` and `{"float": …}` hold a string, the one the
/// snapshot and journal files use (docs/FORMAT.md): `"NaN"`, `"Infinity"`, `"-Infinity"`.
///
/// Readers also take the spelling of earlier devices and servers, `"nan"`, `"inf"` and
/// `"-inf"`, so that what they sent and stored still reads.
public enum SyncNonFinite {
    /// The string a non-finite number is written as; nil for a finite one.
    public static func text(for number: Double) -> String? {
        if number.isFinite { return nil }
        return number.isNaN ? "NaN" : number < 0 ? "-Infinity" : "Infinity"
    }

    /// The number a string stands for, in the current spelling or the earlier one; nil for any
    /// other string.
    public static func number(_ text: String) -> Double? {
        switch text {
        case "NaN", "nan": .nan
        case "Infinity", "inf": .infinity
        case "-Infinity", "-inf": -.infinity
        default: nil
        }
    }
}
