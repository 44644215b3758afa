import Foundation

/// Runs ``InputDecoding`` under a `JSONDecoder`.
struct JSONInput: Decodable {
    struct Context: Sendable {
        let decoding: InputDecoding
        let schema: ObjectSchema
        let isArray: Bool
    }

    static let contextKey = CodingUserInfoKey(rawValue: "LiveObjects.JSONInput")!

    var objects: [[String: Input]] = []

    init(from decoder: any Decoder) throws {
        guard let context = decoder.userInfo[Self.contextKey] as? Context else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no schema to decode with"))
        }
        guard context.isArray else {
            objects = [try context.decoding.decodeObject(context.schema, from: decoder)]
            return
        }
        var container: any UnkeyedDecodingContainer
        do {
            container = try decoder.unkeyedContainer()
        } catch {
            throw InputDecoding.error(error, objectType: context.schema.name, property: nil, expected: "a JSON array")
        }
        while !container.isAtEnd {
            let index = container.currentIndex
            do {
                objects.append(try context.decoding.decodeObject(context.schema, from: try container.superDecoder()))
            } catch {
                var error = InputDecoding.error(error, objectType: context.schema.name, property: nil, expected: nil)
                error.message = "element \(index): " + error.message
                throw error
            }
        }
    }

    /// The objects of a JSON document, as property input by name.
    static func decode(
        _ json: Data, schema: ObjectSchema, schemas: [String: ObjectSchema], isArray: Bool, decoder: JSONDecoder
    ) throws(LiveObjectsError) -> [[String: Input]] {
        let reader = JSONDecoder()
        reader.dateDecodingStrategy = decoder.dateDecodingStrategy
        reader.dataDecodingStrategy = decoder.dataDecodingStrategy
        reader.nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
        reader.keyDecodingStrategy = decoder.keyDecodingStrategy
        reader.userInfo = decoder.userInfo
        reader.userInfo[contextKey] = Context(
            decoding: InputDecoding(schemas: schemas, rejectsUnknownKeys: true), schema: schema, isArray: isArray)
        do {
            return try reader.decode(JSONInput.self, from: json).objects
        } catch let error as LiveObjectsError {
            throw error
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            let detail =
                (context.underlyingError as? any CustomStringConvertible)?.description ?? context.debugDescription
            throw LiveObjectsError(.corruptFile, "the JSON is not valid: \(detail)", objectType: schema.name)
        } catch {
            throw InputDecoding.error(error, objectType: schema.name, property: nil, expected: nil)
        }
    }
}
