import CamoDiscovery
import CamoWire
import Logging

/// Waiting for an agent's pairing window and pairing with it (``StudioPairing/pair(host:port:payload:identity:studioName:group:logger:)``
/// for each try). A service that does not answer, refuses, or fails the handshake does not end the wait:
/// another (a live record after a stale one, the real agent beside a fake service naming this studio) may still
/// come. When the time is up, the last failure is thrown.
///
/// The waiting takes a clock (a `ContinuousClock` unless told otherwise) and the tries a closure, so the policy
/// can be tested without an agent or avahi-daemon.
public enum PairingRetry {
    /// One try at pairing with the pairing port at an address.
    public typealias Attempt = (HostPort) async throws(StudioClientError) -> PairedAgent

    /// How soon an address given directly is tried again: the window may not be open yet.
    public static let directRetry: Duration = .milliseconds(250)
    /// How soon a browsed address whose connection failed is tried again: a record a closed window left in the
    /// mDNS cache, or a window about to reopen on the same port.
    public static let connectFailedRetry: Duration = .seconds(1)
    /// How soon a browsed address that refused or failed the handshake is tried again.
    public static let failedRetry: Duration = .seconds(5)
    /// How often the browsed services are looked at again.
    public static let pollInterval: Duration = .milliseconds(100)

    /// Pairs with the agent whose pairing window is at `connect`, or, when `connect` is nil, with one that
    /// `_camopairing._tcp` shows naming this studio (its TXT `studio` is `identity.id`); waits up to `lifetime`.
    /// - Parameters:
    ///   - onFailure: told of each try that reached a pairing port and failed (a refusal, a failed handshake);
    ///     a connection that fails is not told (the window is not open yet).
    /// - Throws: the last ``StudioClientError`` (`handshakeTimeout` when nothing was tried) when the time is up;
    ///   `DiscoveryError` when mDNS cannot be used; `CancellationError`.
    public static func pairWhenReady(
        payload: PairingPayload, identity: StudioIdentity, studioName: String, connect: HostPort?, lifetime: Duration,
        logger: Logger, clock: any Clock<Duration> = ContinuousClock(),
        onFailure: (HostPort, StudioClientError) -> Void = { _, _ in }
    ) async throws -> PairedAgent {
        let attempt: Attempt = { (address: HostPort) async throws(StudioClientError) -> PairedAgent in
            try await StudioPairing.pair(
                host: address.host, port: address.port, payload: payload, identity: identity, studioName: studioName,
                logger: logger)
        }
        if let connect {
            return try await pair(at: connect, within: lifetime, clock: clock, attempt: attempt, onFailure: onFailure)
        }
        let browser = AvahiBrowser(type: CamoServiceType.pairing, logger: logger)
        try browser.start()
        defer { browser.stop() }
        return try await pair(
            studioId: identity.id, services: { browser.discovered }, within: lifetime, clock: clock, attempt: attempt,
            onFailure: onFailure)
    }

    /// Tries `address` every ``directRetry`` until `attempt` pairs or `lifetime` is over.
    /// - Throws: the last failure when the time is up; `CancellationError`.
    public static func pair(
        at address: HostPort, within lifetime: Duration, clock: any Clock<Duration> = ContinuousClock(),
        attempt: Attempt, onFailure: (HostPort, StudioClientError) -> Void = { _, _ in }
    ) async throws -> PairedAgent {
        try await direct(address, within: lifetime, clock: clock, attempt: attempt, onFailure: onFailure)
    }

    /// Tries every address of the services `services` shows naming the studio `studioId` (TXT `studio`), IPv4
    /// first, until `attempt` pairs or `lifetime` is over. An address that failed waits ``connectFailedRetry``
    /// (its connection failed) or ``failedRetry`` (anything else) before it is tried again; the others are
    /// tried meanwhile.
    /// - Throws: the last failure when the time is up; `CancellationError`.
    public static func pair(
        studioId: String, services: () -> [DiscoveredService], within lifetime: Duration,
        clock: any Clock<Duration> = ContinuousClock(), attempt: Attempt,
        onFailure: (HostPort, StudioClientError) -> Void = { _, _ in }
    ) async throws -> PairedAgent {
        try await browsed(studioId: studioId, services: services, within: lifetime, clock: clock, attempt: attempt,
                          onFailure: onFailure)
    }

    /// ``pair(at:within:clock:attempt:onFailure:)`` with the clock's own instants.
    private static func direct<C: Clock<Duration>>(
        _ address: HostPort, within lifetime: Duration, clock: C, attempt: Attempt,
        onFailure: (HostPort, StudioClientError) -> Void
    ) async throws -> PairedAgent {
        let deadline = clock.now.advanced(by: lifetime)
        var lastFailure: StudioClientError?
        while clock.now < deadline {
            do {
                return try await attempt(address)
            } catch {
                report(error, at: address, onFailure)
                lastFailure = error
            }
            try await clock.sleep(for: directRetry)
        }
        throw lastFailure ?? .handshakeTimeout
    }

    /// ``pair(studioId:services:within:clock:attempt:onFailure:)`` with the clock's own instants.
    private static func browsed<C: Clock<Duration>>(
        studioId: String, services: () -> [DiscoveredService], within lifetime: Duration, clock: C, attempt: Attempt,
        onFailure: (HostPort, StudioClientError) -> Void
    ) async throws -> PairedAgent {
        let deadline = clock.now.advanced(by: lifetime)
        var lastFailure: StudioClientError?
        var retryAt: [String: C.Instant] = [:]
        while clock.now < deadline {
            for service in services() where service.txt["studio"] == studioId {
                for address in AgentLookup.addresses(of: service) {
                    let key = "\(service.name) \(address)"
                    if let next = retryAt[key], clock.now < next { continue }
                    do {
                        return try await attempt(address)
                    } catch {
                        report(error, at: address, onFailure)
                        lastFailure = error
                        let connectFailed = if case .connectFailed = error { true } else { false }
                        retryAt[key] = clock.now.advanced(by: connectFailed ? connectFailedRetry : failedRetry)
                    }
                }
            }
            try await clock.sleep(for: pollInterval)
        }
        throw lastFailure ?? .handshakeTimeout
    }

    /// Tells `onFailure` of `error` unless only the connection failed.
    private static func report(_ error: StudioClientError, at address: HostPort, _ onFailure: (HostPort, StudioClientError) -> Void) {
        if case .connectFailed = error { return }
        onFailure(address, error)
    }
}
