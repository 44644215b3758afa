import LiveObjectsShell

// Shell command lines: any text is parsed into a command or a typed error.

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzShell(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try CommandParser.parse(line)
    } catch {
        _ = error.text
    }
    return 0
}
