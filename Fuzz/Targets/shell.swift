import LiveObjectsShell

// Shell input: any text is split into commands and parsed into a command or a typed error; the
// same bytes, typed at the line editor, leave its cursor inside its buffer.

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzShell(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let line = String(decoding: bytes, as: UTF8.self)
    for command in CommandSplitter.split(line) {
        do {
            _ = try CommandParser.parse(command.text)
        } catch {
            _ = error.text
        }
    }
    var decoder = KeyDecoder()
    var editor = LineEditor(history: ["count Dog", "query Person where age > 3"])
    var renderer = LineRenderer(columns: 20)
    decoder.feed(bytes)
    while let key = decoder.next() ?? decoder.flushEscape() {
        if case .submit = editor.handle(key) { editor.reset() }
        precondition(editor.cursor >= 0 && editor.cursor <= editor.buffer.count)
        _ = renderer.draw(prompt: "> ", text: editor.buffer, cursor: editor.cursor)
    }
    return 0
}
