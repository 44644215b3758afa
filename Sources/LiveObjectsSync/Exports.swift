// The protocol's shared types (error codes, change kinds, the wire messages without values, the
// list merge) are part of this module's API: apps that import LiveObjectsSync see them.
@_exported import LiveObjectsSyncProtocol
