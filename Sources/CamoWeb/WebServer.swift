import CamoMedia
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// The agent's web server: the live view page, WHEP, the JSON API and `/metrics`, over HTTPS with a self-signed
/// certificate (see ``WebCertificate``), tokens from ``WebTokenStore``.
///
/// The agent makes one with its ``WebBackend``, calls ``start()``, prints ``certificateFingerprint`` and
/// ``port``, tells it about viewers that end by themselves with ``viewerEnded(id:)``, and calls ``stop()``.
/// Leases are swept every 250 ms of the injected clock.
public final class WebServer: Sendable {
    private struct Running {
        var channel: any Channel
        var sweeper: Task<Void, Never>
        var port: Int
    }

    private enum Phase {
        case idle
        case starting
        case running(Running)
        case stopped
    }

    /// The configuration it was made with.
    public let configuration: WebConfiguration
    private let router: WebRouter
    private let connections: ConnectionRegistry
    private let clock: any MonotonicClock
    private let logger: Logger
    private let group: any EventLoopGroup
    private let phase = Mutex(Phase.idle)
    private let fingerprint = Mutex<String?>(nil)

    /// How often leases are checked for expiry.
    public static let sweepInterval: Duration = .milliseconds(250)

    /// A server for `backend`, timing leases and login limits on `clock`, logging to `logger`. It runs its
    /// connections on `eventLoopGroup` (default NIO's shared singleton group).
    public init(
        configuration: WebConfiguration, backend: any WebBackend, clock: any MonotonicClock = SystemMonotonicClock(),
        logger: Logger, eventLoopGroup: (any EventLoopGroup)? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.group = eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
        self.connections = ConnectionRegistry(
            maxConnections: configuration.maxConnections, maxPerAddress: configuration.maxConnectionsPerAddress)
        self.router = WebRouter(
            configuration: configuration, backend: backend, clock: clock, logger: logger,
            secureCookies: configuration.tls, connections: connections)
    }

    /// The access tokens this server accepts (`web-tokens.json` in the state directory).
    public var tokenStore: WebTokenStore { router.tokens }

    /// The port it listens on once started (the chosen one when the configuration asked for 0).
    public var port: Int? {
        phase.withLock { if case .running(let running) = $0 { running.port } else { nil } }
    }

    /// The SHA-256 fingerprint (`AA:BB:...`) of the certificate it serves, once started with TLS.
    public var certificateFingerprint: String? { fingerprint.withLock { $0 } }

    /// How many live viewers hold a lease now.
    public var viewerCount: Int { router.viewerCount }

    /// Frees the lease of viewer `id`, which ended by itself (ICE failed, the browser went away); the backend is not
    /// asked to end it again.
    public func viewerEnded(id: String) { router.viewerEnded(id: id) }

    /// Loads or makes the certificate, listens, and starts the lease sweep.
    ///
    /// Throws ``WebServerError/portInUse(host:port:)`` when another program holds the port, and
    /// ``WebServerError/invalidConfiguration(_:)`` for plain HTTP off loopback.
    public func start() async throws(WebServerError) {
        try configuration.validate()
        let claimed = phase.withLock { phase -> Bool in
            guard case .idle = phase else { return false }
            phase = .starting
            return true
        }
        guard claimed else { throw .invalidConfiguration("this web server was already started; make a new one") }
        do {
            let running = try await bind()
            let stopped = phase.withLock { phase -> Bool in
                if case .stopped = phase { return true }
                phase = .running(running)
                return false
            }
            if stopped {
                running.sweeper.cancel()
                try? await running.channel.close()
                return
            }
            logger.info(
                "web server listening",
                metadata: [
                    "address": "\(configuration.tls ? "https" : "http")://\(configuration.host):\(running.port)/",
                    "certificate-sha256": "\(certificateFingerprint ?? "none")",
                ])
        } catch {
            phase.withLock { if case .starting = $0 { $0 = .idle } }
            throw error
        }
    }

    private func bind() async throws(WebServerError) -> Running {
        var sslContext: NIOSSLContext?
        if configuration.tls {
            let certificate = try WebCertificate.loadOrCreate(
                directory: configuration.stateDirectory,
                hostnames: configuration.certificateHostnames + [configuration.host])
            do {
                let chain = try NIOSSLCertificate.fromPEMBytes(Array(certificate.certificatePEM.utf8))
                let key = try NIOSSLPrivateKey(bytes: Array(certificate.privateKeyPEM.utf8), format: .pem)
                var tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
                tls.minimumTLSVersion = .tlsv12
                sslContext = try NIOSSLContext(configuration: tls)
            } catch {
                throw .certificate("cannot use the web certificate in \(configuration.stateDirectory.path): \(error)")
            }
            fingerprint.withLock { $0 = certificate.sha256Fingerprint }
            if certificate.created {
                logger.notice(
                    "web: made a new self-signed certificate",
                    metadata: ["sha256": "\(certificate.sha256Fingerprint)", "names": "\(certificate.subjectAlternativeNames)"])
            }
        }
        let router = self.router
        let connections = self.connections
        let maxBody = configuration.maxBodyBytes
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [sslContext] channel in
                channel.eventLoop.makeCompletedFuture {
                    let address = channel.remoteAddress?.ipAddress ?? "unknown"
                    let sync = channel.pipeline.syncOperations
                    let verdict = GateVerdict()
                    try sync.addHandler(ConnectionGate(registry: connections, address: address, verdict: verdict))
                    if let sslContext { try sync.addHandler(NIOSSLServerHandler(context: sslContext)) }
                    try sync.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
                    try sync.addHandler(IdleStateHandler(readTimeout: .seconds(120)))
                    try sync.addHandler(WebHTTPHandler(router: router, maxBodyBytes: maxBody, clientAddress: address, verdict: verdict))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw .portInUse(host: configuration.host, port: configuration.port)
        } catch {
            throw .bind(
                "cannot listen on \(configuration.host) port \(configuration.port): \(error); check the address "
                    + "(--web-host) and port (--web-port)")
        }
        let port = channel.localAddress?.port ?? configuration.port
        let clock = self.clock
        let interval = Self.sweepInterval
        let sweeper = Task(executorPreference: WebTaskExecutor.shared) {
            while !Task.isCancelled {
                do {
                    try await clock.sleep(until: clock.now.advanced(by: interval))
                } catch {
                    return
                }
                router.sweep()
            }
        }
        return Running(channel: channel, sweeper: sweeper, port: port)
    }

    /// Stops listening, closes every connection and ends every viewer ("web server stopped").
    public func stop() async {
        let running = phase.withLock { phase -> Running? in
            defer { phase = .stopped }
            if case .running(let running) = phase { return running }
            return nil
        }
        guard let running else { return }
        running.sweeper.cancel()
        try? await running.channel.close()
        for channel in connections.closeAll() {
            try? await channel.close()
        }
        router.endAll(reason: "web server stopped")
        logger.info("web server stopped")
    }
}
