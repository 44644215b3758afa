import LiveObjects
import LiveObjectsJSON

/// The JSON reader of the shell: its errors are `LiveObjectsError`s (Persistence says how one is
/// made from a `JSONError`).
typealias JSONReader = LiveObjectsJSON.JSONReader<LiveObjectsError>
