import LiveObjectsJSON
import LiveObjectsSyncProtocol

// The value of an `AnyValue` (mixed) property on the wire (docs/SYNC-PROTOCOL.md, "Mixed
// values"): a plain value of any kind, `{"list": [value, …]}`, `{"dictionary": [[key, value], …]}`
// or a link, `{"ref": reference}` as a plain link's, nested at most `maximumMixedNestingDepth` deep. The
// shape check of a whole push lets a list of objects and a dictionary through (only their outer
// shape); what is inside is checked per change, so that one bad mixed value refuses its change
// only.

extension PushedChange {
    /// Whether a value has the outer shape of a nested mixed list or dictionary: a `list` or
    /// `dictionary` member holding an array of JSON objects or of pairs. What they hold is
    /// checked per change (``mixedProblem(_:depth:)``).
    static func isMixedShape(_ value: JSONValue) -> Bool {
        guard case .object(let members) = value, members.count == 1, let (tag, payload) = members.first,
            case .array(let items) = payload
        else { return false }
        switch tag {
        case "list": return items.allSatisfy { $0.objectValue != nil }
        case "dictionary": return items.allSatisfy { $0.arrayValue != nil }
        default: return false
        }
    }

    /// What is wrong with the value of a mixed property, or nil: an unknown kind, a payload not
    /// of its kind, lists and dictionaries nested deeper than
    /// `SyncProtocolLimits.maximumMixedNestingDepth` (a top-level one at depth 0, as
    /// `AnyValue.maximumNestingDepth` counts), an entry of a dictionary that is not a
    /// `[key, value]` pair, a key given twice (as a device's `String` compares keys: canonically
    /// equivalent spellings are one key), a link that is not a reference (`{"ref": null}`
    /// included: an AnyValue's nil is `{"null": true}`), or one `referenceProblem` refuses (a
    /// space's schema: a type it declares, an id of its key's kind).
    static func mixedProblem(
        _ value: JSONValue, depth: Int = 0, referenceProblem: (JSONValue) -> String? = { _ in nil }
    ) -> String? {
        guard case .object(let members) = value, members.count == 1, let (tag, payload) = members.first else {
            return "an AnyValue is an object with exactly one member naming its kind"
        }
        switch tag {
        case "list", "dictionary":
            guard depth < SyncProtocolLimits.maximumMixedNestingDepth else {
                return
                    "an AnyValue nests lists and dictionaries at most \(SyncProtocolLimits.maximumMixedNestingDepth) deep"
            }
            guard case .array(let items) = payload else { return "the \(tag) of an AnyValue is not an array" }
            if tag == "list" {
                // A loop, not `lazy.compactMap(…).first`, which evaluates an element twice: a
                // recursion through it would take 2^depth steps.
                for item in items {
                    if let problem = mixedProblem(item, depth: depth + 1, referenceProblem: referenceProblem) {
                        return problem
                    }
                }
                return nil
            }
            var seen = Set<String>()
            for item in items {
                guard case .array(let pair) = item, pair.count == 2, case .string(let key) = pair[0] else {
                    return "an entry of an AnyValue dictionary is not a [key, value] pair"
                }
                guard seen.insert(key).inserted else {
                    return "an AnyValue dictionary holds the key \(JSONValue.string(key).text) twice"
                }
                if let problem = mixedProblem(pair[1], depth: depth + 1, referenceProblem: referenceProblem) {
                    return problem
                }
            }
            return nil
        case "ref":
            if payload == .null { return "the nil of an AnyValue is {\"null\": true}, not {\"ref\": null}" }
            guard isReference(payload) else {
                return "a link inside an AnyValue is not a reference (an object with a type and a plain id)"
            }
            return referenceProblem(payload).map { "a link inside an AnyValue \($0)" }
        case "refs":
            return "{\"refs\": …} is no AnyValue: a list holding links is {\"list\": [{\"ref\": …}, …]}"
        case "null", "bool", "int", "float", "double", "string", "date", "data", "uuid", "decimal", "objectID":
            return isPlainValue(value) ? nil : "{\"\(tag)\": \(payload.text)} is not a value of its kind"
        default:
            return "\(JSONValue.string(tag).text) is not a kind of AnyValue"
        }
    }
}
