import Foundation
import LiveObjects

// A random predicate rendered in the string query language.

struct RenderedQuery {
    var text = ""
    var arguments: [PropertyValue] = []
}

extension QueryPredicate {
    func render(_ out: inout RenderedQuery, variable: String? = nil) {
        switch self {
        case .constant(let value): out.text += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let p):
            out.text += "NOT ("
            p.render(&out, variable: variable)
            out.text += ")"
        case .and(let ps), .or(let ps):
            let joiner: String
            if case .and = self { joiner = " AND " } else { joiner = " || " }
            out.text += "("
            for (i, p) in ps.enumerated() {
                if i > 0 { out.text += joiner }
                p.render(&out, variable: variable)
            }
            out.text += ")"
        case .compare(let quantifier, let lhs, let op, let options, let rhs):
            if quantifier != .direct { out.text += quantifier.rawValue + " " }
            lhs.render(&out, variable: variable)
            out.text += " \(op.rawValue)\(options.text) "
            rhs.render(&out, variable: variable)
        }
    }

    var text: RenderedQuery {
        var out = RenderedQuery()
        render(&out)
        return out
    }
}

extension QueryOperand {
    func render(_ out: inout RenderedQuery, variable: String?) {
        switch self {
        case .constant(let value): Self.literal(value, &out)
        case .field(let field): out.text += field.rawValue
        case .element(let field): out.text += "$\(variable ?? "v").\(field.rawValue)"
        case .many(let list, let field): out.text += "\(list.rawValue).\(field.rawValue)"
        case .count(let list): out.text += "\(list.rawValue).@count"
        case .aggregate(let op, let list, let field): out.text += "\(list.rawValue).@\(op.rawValue).\(field.rawValue)"
        case .subquery(let list, let predicate):
            out.text += "SUBQUERY(\(list.rawValue), $v, "
            predicate.render(&out, variable: "v")
            out.text += ").@count"
        }
    }

    static func literal(_ value: PropertyValue, _ out: inout RenderedQuery) {
        switch value {
        case .null: out.text += "NULL"
        case .bool(let b): out.text += b ? "TRUE" : "FALSE"
        case .int(let i): out.text += String(i)
        case .double(let d): out.text += String(d)
        // A decimal as a number literal, which compares by its digits; NaN has none (an argument).
        case .decimal(let d) where !d.isNaN: out.text += d.description
        case .objectID(let id): out.text += "oid(\(id.hexString))"
        case .string(let s):
            out.text += "\""
            for character in s.unicodeScalars {
                if character == "\"" || character == "\\" { out.text += "\\" }
                out.text.unicodeScalars.append(character)
            }
            out.text += "\""
        case .list(let items):
            out.text += "{"
            for (i, item) in items.enumerated() {
                if i > 0 { out.text += ", " }
                literal(item, &out)
            }
            out.text += "}"
        default:
            // Dates (and anything without a literal) as arguments.
            out.arguments.append(value)
            out.text += "$\(out.arguments.count - 1)"
        }
    }
}
