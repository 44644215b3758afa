import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// One connection's guard, in its pipeline after HTTP decoding: it closes a connection that is
/// too slow (docs/SYNC-PROTOCOL.md, "Connections"), and answers a connection over the bound
/// with 503 once it has read its request, then closes it.
///
/// - A new connection has `headerTimeout` to send a whole request head.
/// - While a request's body comes, each part must follow the one before within `readTimeout`.
/// - While the server answers (a long poll waits) nothing is timed.
/// - After an answer, the connection is kept for `idleTimeout` for its next request head.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let configuration: SyncHTTPServer.Configuration
    private let metrics: SyncMetrics
    /// Whether the connection counts as served (false: refused, or not yet started).
    private var admitted = false
    private var refused = false
    private var started = false
    /// Requests read and not yet answered.
    private var inFlight = 0
    private var readingBody = false
    private var timer: Scheduled<Void>?

    init(configuration: SyncHTTPServer.Configuration, metrics: SyncMetrics) {
        self.configuration = configuration
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        if metrics.admitConnection(maximum: configuration.maximumConnections) {
            admitted = true
        } else {
            refused = true
            metrics.add(.refusedConnections)
        }
        time(context, configuration.headerTimeout)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { finish() }

    private func finish() {
        timer?.cancel()
        timer = nil
        if admitted {
            admitted = false
            metrics.releaseConnection()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch part {
        case .head:
            inFlight += 1
            readingBody = true
            time(context, configuration.readTimeout)
        case .body:
            time(context, configuration.readTimeout)
        case .end:
            readingBody = false
            time(context, nil)
        }
        guard !refused else {
            if case .end = part { refuse(context) }
            return
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inFlight -= 1
            if inFlight == 0, !readingBody { time(context, configuration.idleTimeout) }
        }
        context.write(data, promise: promise)
    }

    /// The answer of a connection over the bound: 503, then the connection closes.
    private func refuse(_ context: ChannelHandlerContext) {
        let body = ByteBuffer(
            string:
                #"{"error":{"code":"internal","message":"the server has as many connections as it serves; try again later"}}"#
        )
        let head = HTTPResponse(
            status: .serviceUnavailable,
            headerFields: [
                .contentType: "application/json", .contentLength: String(body.readableBytes), .connection: "close",
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// Closes the connection after `duration` unless the state changes first; nil, untimed.
    private func time(_ context: ChannelHandlerContext, _ duration: Duration?) {
        timer?.cancel()
        timer = nil
        guard let duration else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(duration)) { [self] in
            timer = nil
            metrics.add(.timedOutConnections)
            context.close(promise: nil)
        }
    }
}
