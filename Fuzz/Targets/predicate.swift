import LiveObjects

// Predicate strings: parsed, bound to the fixture's schema and evaluated on its objects, with
// a few arguments for the placeholders. Any error is fine; a crash or a hang is not.

nonisolated(unsafe) let fixture = Fixture.store().store
let arguments: [PropertyValue] = [.int(3), .string("a"), .double(2.5), .string("name"), .list([.int(1), .int(4)])]

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzPredicate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for table in fixture.tables where !table.schema.isEmbedded {
        _ = try? fixture.rows(of: table, matching: text, arguments: arguments)
    }
    return 0
}
