import Foundation

/// When a token stops being accepted: a request with an expired token is refused like one with
/// an unknown token (401 `unauthorized`).
public enum TokenExpiry: Sendable, Hashable {
    /// A number of seconds after the token is made, by the database's clock.
    case after(seconds: Int64)
    /// At a moment.
    case at(Date)

    /// The longest lifetime accepted: 100 years.
    static let longest: Int64 = 100 * 366 * 86_400

    /// Reads the command line's options: `--expires-in DURATION`, a whole number of seconds
    /// or one with a unit (`90s`, `45m`, `12h`, `30d`, `2w`), and `--expires DATE`, an ISO 8601
    /// day (`2027-01-31`, midnight UTC) or moment (`2027-01-31T12:00:00Z`).
    ///
    /// - Parameter now: The moment a date must be after.
    /// - Throws: ``SyncServerError`` `badRequest` for another option, a malformed value, or a
    ///   moment that is not in the future.
    public static func parse(option: String, value: String, now: Date = Date()) throws(SyncServerError)
        -> TokenExpiry
    {
        switch option {
        case "--expires-in":
            return .after(seconds: try seconds(value, option: option))
        case "--expires":
            let day = ISO8601DateFormatter()
            day.formatOptions = [.withFullDate]
            let moment = ISO8601DateFormatter()
            moment.formatOptions = [.withInternetDateTime]
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            guard let date = moment.date(from: value) ?? fractional.date(from: value) ?? day.date(from: value) else {
                throw SyncServerError(
                    .badRequest,
                    "--expires takes an ISO 8601 date: 2027-01-31 or 2027-01-31T12:00:00Z (not \"\(value)\")")
            }
            guard date > now else { throw SyncServerError(.badRequest, "--expires \(value) is not in the future") }
            return .at(date)
        default:
            throw SyncServerError(.badRequest, "unknown option \(option): a token takes --expires-in or --expires")
        }
    }

    /// A duration of the command line: a whole number of seconds or one with a unit (`90s`,
    /// `45m`, `12h`, `30d`, `2w`), at most 100 years.
    ///
    /// - Throws: ``SyncServerError`` `badRequest` naming `option` for a malformed value.
    public static func seconds(_ value: String, option: String) throws(SyncServerError) -> Int64 {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var digits = Substring(value)
        var unit: Int64 = 1
        if let last = digits.last, let factor = units[last] {
            unit = factor
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let count = Int64(digits), count > 0,
            count <= longest / unit
        else {
            throw SyncServerError(
                .badRequest,
                "\(option) takes a positive number of seconds, or one with a unit: 90s, 45m, 12h, 30d, 2w (not \"\(value)\")"
            )
        }
        return count * unit
    }
}
