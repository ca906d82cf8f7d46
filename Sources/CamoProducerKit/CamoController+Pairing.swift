import CamoMedia
import CamoWire
import Foundation
import NIOCore
import NIOPosix

/// One pairing attempt: optionally a scanning stage, then the window with its listener.
struct PairingAttempt: Sendable {
    /// Looking for a QR code in the camera's frames.
    struct Scan: Sendable {
        var deadline: UInt64
        var decode: @Sendable (VideoFrame) -> [String]
        var framesSeen = 0
        var busy = false
        var seenTexts: Set<String> = []
    }

    var id: Int
    var scan: Scan?
    var window: PairingWindow?
    var listener: Channel?
    var port: Int?
    var timer: Task<Void, Never>?
    var invalidCodes: [String] = []
    var completions: [@Sendable (Result<PairedStudio, PairingFailure>) -> Void] = []
    /// The advertisement went out (so it must be withdrawn).
    var advertised = false

    func status(at now: UInt64) -> PairingStatus {
        if let window {
            return PairingStatus(
                attempt: id, phase: .waiting, studioId: window.payload.studioId, studioName: window.payload.studioName,
                port: port, remainingSeconds: Double(window.remaining(at: now)) / 1e9, invalidCodes: invalidCodes)
        }
        let remaining = scan.map { $0.deadline > now ? Double($0.deadline - now) / 1e9 : 0 }
        return PairingStatus(attempt: id, phase: .scanning, remainingSeconds: remaining, invalidCodes: invalidCodes)
    }
}

extension CamoController {
    /// How long scanning looks for a QR code before giving up.
    public static let scanDuration: UInt64 = 30_000_000_000
    /// Every this many frames one is scanned (6 scans a second at 30 fps).
    static let scanEveryFrames = 5

    // MARK: Paired devices

    /// The paired studios.
    public var pairedDevices: [PairedStudio] { pairedDeviceStore.all }

    /// Removes a paired studio and ends its live sessions at once.
    /// - Returns: false when no studio with that id was paired.
    @discardableResult
    public func removePairedDevice(_ id: String) throws -> Bool {
        guard try pairedDeviceStore.remove(id: id) else { return false }
        // Sessions still connecting check the store again when admitted (under this lock), so none slips by.
        let sessions = core.withLock { $0.sessions }.filter {
            $0.info.withState { $0.pairedStudioId } == id || $0.info.connection?.studioId == id
        }
        for session in sessions {
            session.end(WireError(code: .notPaired, reason: "This studio was unpaired on the agent; pair it again to connect."), isOrderly: false)
        }
        logger.notice("Unpaired a studio", metadata: ["studio": "\(id)", "sessionsEnded": "\(sessions.count)"])
        return true
    }

    /// Records that a paired studio opened a session: at most once a minute per studio, off the event loop
    /// (each write syncs the disk).
    func noteSeen(studioId: String) {
        let now = Date()
        if let last = pairedDeviceStore.studio(id: studioId)?.lastSeen, now.timeIntervalSince(last) < 60 { return }
        storageQueue.async { [self] in
            do {
                try pairedDeviceStore.markSeen(id: studioId, at: now)
            } catch {
                logger.warning("Could not record when the studio was last seen", metadata: ["error": "\(error)"])
            }
        }
    }

    // MARK: Pairing by payload

    /// Validates a QR payload, opens the pairing listener, publishes `_camopairing._tcp` and starts the 30 s
    /// window. `completion` runs once, on the controller's delegate queue, with the paired studio or why not.
    public func pairStudio(withQRCodeData data: String, completion: @escaping @Sendable (Result<PairedStudio, PairingFailure>) -> Void) {
        switch openPairing(payloadText: data, completion: completion) {
        case .success: break
        case .failure(let failure): delegateQueue.async { completion(.failure(failure)) }
        }
    }

    /// The async form of ``pairStudio(withQRCodeData:completion:)``.
    public func pairStudio(withQRCodeData data: String) async throws(PairingFailure) -> PairedStudio {
        let result = await withCheckedContinuation { continuation in
            pairStudio(withQRCodeData: data) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Opens a window for `payloadText` and answers at once with its status (the control socket's `pair`).
    /// The outcome arrives through ``pairingStatus`` (and `completion`, when given).
    public func openPairing(
        payloadText: String, completion: (@Sendable (Result<PairedStudio, PairingFailure>) -> Void)? = nil
    ) -> Result<PairingStatus, PairingFailure> {
        let payload: PairingPayload
        do {
            payload = try PairingPayload.parse(payloadText, now: configuration.wallClock())
        } catch {
            logger.notice("Refused a pairing code", metadata: ["reason": "\(error.reason.rawValue)", "detail": "\(error.detail)"])
            return .failure(.invalidCode(reason: error.reason.rawValue, detail: error.detail))
        }
        let now = clock.now.nanoseconds
        let opened = core.withLock { core -> Result<PairingStatus, PairingFailure> in
            guard core.running else { return .failure(.notRunning) }
            return core.pairing.begin { attempt in
                attempt.window = PairingWindow(
                    payload: payload, openedAt: now, duration: configuration.pairingWindowNanos,
                    maxConnections: configuration.maxPairingConnections)
                if let completion { attempt.completions.append(completion) }
            }.map { $0.status(at: now) }
        }
        if case .success(let status) = opened {
            startWindow(attempt: status.attempt, payload: payload)
        }
        return opened
    }

    /// Looks for a QR code in the frames given to ``enqueueVideo(_:)`` for up to 30 s, and opens the window
    /// with the first valid pairing code it sees. Codes that are not valid are reported in ``pairingStatus``
    /// and the log, and scanning goes on. `decode` returns the texts of the QR codes in a frame (the agent
    /// passes libzbar); it runs off the capture thread, at most one frame at a time.
    public func startScanning(
        decode: @escaping @Sendable (VideoFrame) -> [String],
        completion: (@Sendable (Result<PairedStudio, PairingFailure>) -> Void)? = nil
    ) -> Result<PairingStatus, PairingFailure> {
        let now = clock.now.nanoseconds
        let deadline = now + configuration.scanNanos
        let started = core.withLock { core -> Result<PairingStatus, PairingFailure> in
            guard core.running else { return .failure(.notRunning) }
            return core.pairing.begin { attempt in
                attempt.scan = PairingAttempt.Scan(deadline: deadline, decode: decode)
                if let completion { attempt.completions.append(completion) }
                let id = attempt.id
                attempt.timer = Task { [self] in
                    do { try await clock.sleep(until: deadline) } catch { return }
                    scanTimedOut(attempt: id)
                }
            }.map { $0.status(at: now) }
        }
        if case .success = started { logger.info("Scanning the camera for a pairing QR code", metadata: ["seconds": "\(configuration.scanNanos / 1_000_000_000)"]) }
        return started
    }

    /// The async form of ``startScanning(decode:completion:)``: returns the paired studio or throws why not.
    public func pairStudioByScanning(decode: @escaping @Sendable (VideoFrame) -> [String]) async throws(PairingFailure) -> PairedStudio {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<PairedStudio, PairingFailure>, Never>) in
            if case .failure(let failure) = startScanning(decode: decode, completion: { continuation.resume(returning: $0) }) {
                continuation.resume(returning: .failure(failure))
            }
        }
        return try result.get()
    }

    /// Ends the scan or window in progress with ``PairingFailure/cancelled`` at once. Returns false when
    /// nothing was in progress.
    @discardableResult
    public func cancelPairing() -> Bool {
        guard let id = core.withLock({ $0.pairing.current?.id }) else { return false }
        return finishPairing(attempt: id, .failure(.cancelled))
    }

    /// The attempt in progress, else how the last one ended; nil before the first.
    public var pairingStatus: PairingStatus? {
        let now = clock.now.nanoseconds
        return core.withLock { $0.pairing.status(at: now) }
    }

    /// Attempt `attempt`: in progress, or how it ended (the last 8 are kept); nil when unknown.
    public func pairingStatus(attempt: Int) -> PairingStatus? {
        let now = clock.now.nanoseconds
        return core.withLock { $0.pairing.status(attempt: attempt, at: now) }
    }

    // MARK: Window internals

    /// Binds the listener, publishes, starts the timer. Runs after the attempt is registered.
    private func startWindow(attempt id: Int, payload: PairingPayload) {
        guard let group = eventLoopGroup else {
            finishPairing(attempt: id, .failure(.notRunning))
            return
        }
        let deadline = core.withLock { $0.pairing.current?.window?.deadline } ?? clock.now.nanoseconds
        let timer = Task { [self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            windowTimedOut(attempt: id)
        }
        core.withLock { core in
            guard core.pairing.attempt(id) != nil else { return }
            core.pairing.current?.timer?.cancel()
            core.pairing.current?.timer = timer
        }
        logger.info(
            "Pairing window open", metadata: ["studio": "\(payload.studioName)", "studioId": "\(payload.studioId)",
                                              "seconds": "\(configuration.pairingWindowNanos / 1_000_000_000)"])
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 32)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let peer = channel.remoteAddress.map(Self.describe) ?? "unknown"
                    let address = channel.remoteAddress?.ipAddress ?? "unknown"
                    let handler = PairingHandler(controller: self, attempt: id, peer: peer, address: address, logger: logger)
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        bootstrap.bind(host: configuration.host, port: configuration.pairingPort).whenComplete { [self] result in
            switch result {
            case .failure(let error):
                finishPairing(attempt: id, .failure(.cannotListen("\(error)")))
            case .success(let channel):
                let port = channel.localAddress?.port ?? 0
                let keep = core.withLock { core -> Bool in
                    guard core.pairing.attempt(id)?.window?.isOpen == true else { return false }
                    core.pairing.current?.listener = channel
                    core.pairing.current?.port = port
                    core.pairing.current?.advertised = true
                    return true
                }
                guard keep else {
                    channel.close(promise: nil)
                    return
                }
                logger.info("Pairing listener ready", metadata: ["port": "\(port)"])
                // On the advertiser's queue, never the event loop (D-Bus round trips); published only if the
                // window is still open when its turn comes, and the withdrawal queues behind it.
                advertiserQueue.async { [self] in
                    guard core.withLock({ $0.pairing.attempt(id)?.window?.isOpen == true }) else { return }
                    advertiser?.pairingWindowOpened(
                        port: port, txt: AdvertisedRecords.pairing(identity: configuration.identity, studioId: payload.studioId))
                }
            }
        }
    }

    private func windowTimedOut(attempt id: Int) {
        let now = clock.now.nanoseconds
        let expired = core.withLock { core -> Bool in
            guard var window = core.pairing.attempt(id)?.window else { return false }
            // The timer may wake a hair early on some clocks; only the deadline itself closes the window.
            guard window.expire(at: now) else { return false }
            core.pairing.current?.window = window
            return true
        }
        if expired {
            finishPairing(attempt: id, .failure(.timedOut(seconds: Int(configuration.pairingWindowNanos / 1_000_000_000))), alreadyDecided: true)
        } else if core.withLock({ $0.pairing.attempt(id)?.window.map { window in window.isOpen && !window.isStoring } == true }) {
            // Woke before the deadline: sleep again.
            let deadline = core.withLock { $0.pairing.current?.window?.deadline } ?? now
            let timer = Task { [self] in
                do { try await clock.sleep(until: deadline) } catch { return }
                windowTimedOut(attempt: id)
            }
            core.withLock { core in if core.pairing.attempt(id) != nil { core.pairing.current?.timer = timer } else { timer.cancel() } }
        }
    }

    /// Ends attempt `id` with `result`: closes the listener, withdraws the advertisement, runs completions.
    /// The first ending wins; returns false when the attempt had already ended.
    @discardableResult
    func finishPairing(attempt id: Int, _ result: Result<PairedStudio, PairingFailure>, alreadyDecided: Bool = false) -> Bool {
        let now = clock.now.nanoseconds
        let ended = core.withLock { $0.pairing.finish(attempt: id, result, at: now, alreadyDecided: alreadyDecided) }
        guard let ended else { return false }
        ended.timer?.cancel()
        ended.listener?.close(promise: nil)
        if ended.advertised { advertiserQueue.async { [self] in advertiser?.pairingWindowClosed() } }
        switch result {
        case .success(let studio):
            logger.notice("Paired with a studio", metadata: ["studio": "\(studio.name)", "studioId": "\(studio.id)"])
        case .failure(let failure):
            logger.notice("Pairing ended without a studio", metadata: ["reason": "\(failure.code)", "detail": "\(failure.description)"])
        }
        for completion in ended.completions {
            delegateQueue.async { completion(result) }
        }
        return true
    }

    // MARK: For PairingHandler

    /// A pairing connection arrived on attempt `id`: the PSK and the agent key to use, or the error to send.
    func pairingConnectionArrived(attempt id: Int, from address: String) -> Result<[UInt8], WireError> {
        let now = clock.now.nanoseconds
        return core.withLock { core in
            guard var window = core.pairing.attempt(id)?.window else {
                return .failure(WireError(code: .notPaired, reason: "The pairing window has closed. Start pairing on the agent again."))
            }
            if let refusal = window.connectionArrived(at: now, from: address) {
                core.pairing.current?.window = window
                return .failure(refusal)
            }
            core.pairing.current?.window = window
            return .success(window.payload.secret)
        }
    }

    /// A pairing connection on attempt `id` ended.
    func pairingConnectionEnded(attempt id: Int, from address: String, failed: Bool) {
        core.withLock { core in
            guard var window = core.pairing.attempt(id)?.window else { return }
            window.connectionEnded(from: address, failed: failed)
            core.pairing.current?.window = window
        }
    }

    /// A studio finished the XXpsk3 handshake and said who it is: verify, store, close the window.
    /// - Returns: the stored studio, or the error to send it (the window stays open for others).
    func completePairing(attempt id: Int, studioId: String, studioName: String, publicKey: [UInt8]) -> Result<PairedStudio, WireError> {
        let now = clock.now.nanoseconds
        let verdict = core.withLock { core -> Result<PairedStudio, WireError> in
            guard var window = core.pairing.attempt(id)?.window else {
                return .failure(WireError(code: .notPaired, reason: "The pairing window has closed. Start pairing on the agent again."))
            }
            let verdict = window.verify(studioId: studioId, studioName: studioName, publicKey: publicKey, at: now, date: Date())
            if case .success = verdict {
                // Verified before the deadline: the window now waits for the store, whatever the clock says.
                window.beginStoring()
                core.pairing.current?.window = window
            }
            return verdict
        }
        guard case .success(let studio) = verdict else { return verdict }
        // Written outside the core lock: a disk sync must never hold up capture.
        let stored: Result<PairedStudio, PairingFailure>
        do {
            try pairedDeviceStore.add(studio)
            stored = .success(studio)
        } catch {
            stored = .failure(.cannotStore("\(error)"))
        }
        core.withLock { core in
            guard var window = core.pairing.attempt(id)?.window else { return }
            window.finishStoring(stored)
            core.pairing.current?.window = window
        }
        finishPairing(attempt: id, stored, alreadyDecided: true)
        switch stored {
        case .success(let studio): return .success(studio)
        case .failure(let failure): return .failure(WireError(code: .internalError, reason: failure.description))
        }
    }

    /// The agent's key and hello for pairing connections.
    var pairingIdentity: AgentIdentity { configuration.identity }

    // MARK: Scanning internals

    /// Whether a QR scan is looking at the camera's frames now: a source that skips frames nobody wants (no
    /// studio connected) must still offer them to ``enqueueVideo(_:)`` meanwhile.
    public var isScanningForPairingCode: Bool {
        core.withLock { $0.pairing.current?.scan != nil }
    }

    /// Called under the core lock from enqueueVideo: returns the decoder when this frame should be scanned.
    func takeFrameForScanning(_ core: inout Core) -> (attempt: Int, decode: @Sendable (VideoFrame) -> [String])? {
        guard var attempt = core.pairing.current, var scan = attempt.scan, attempt.window == nil else { return nil }
        scan.framesSeen += 1
        defer {
            attempt.scan = scan
            core.pairing.current = attempt
        }
        guard !scan.busy, scan.framesSeen % Self.scanEveryFrames == 1 else { return nil }
        scan.busy = true
        return (attempt.id, scan.decode)
    }

    /// Decodes one frame off the capture thread and acts on what it finds.
    func scanFrame(_ frame: VideoFrame, with scan: (attempt: Int, decode: @Sendable (VideoFrame) -> [String])) {
        Task.detached { [self] in
            let texts = scan.decode(frame)
            scanned(texts, attempt: scan.attempt)
        }
    }

    private func scanned(_ texts: [String], attempt id: Int) {
        let wallNow = configuration.wallClock()
        var found: PairingPayload?
        var refused: [(text: String, error: PairingPayloadError)] = []
        core.withLock { core in
            guard var scan = core.pairing.attempt(id)?.scan else { return }
            scan.busy = false
            for text in texts {
                do throws(PairingPayloadError) {
                    found = try PairingPayload.parse(text, now: wallNow)
                    break
                } catch {
                    guard !scan.seenTexts.contains(text) else { continue }
                    if scan.seenTexts.count < 64 { scan.seenTexts.insert(text) }
                    refused.append((text, error))
                    core.pairing.current?.invalidCodes.append("\(error.reason.rawValue): \(error.detail)")
                    if let count = core.pairing.current?.invalidCodes.count, count > 10 { core.pairing.current?.invalidCodes.removeFirst(count - 10) }
                }
            }
            core.pairing.current?.scan = scan
        }
        for (text, error) in refused {
            logger.warning(
                "Saw a QR code that is not a valid pairing code", metadata: ["reason": "\(error.reason.rawValue)", "detail": "\(error.detail)", "code": "\(Self.printable(text, limit: 80))"])
        }
        guard let payload = found else { return }
        let now = clock.now.nanoseconds
        let opened = core.withLock { core -> Bool in
            guard let attempt = core.pairing.attempt(id), attempt.scan != nil, attempt.window == nil else { return false }
            core.pairing.current?.scan = nil
            core.pairing.current?.timer?.cancel()
            core.pairing.current?.timer = nil
            core.pairing.current?.window = PairingWindow(
                payload: payload, openedAt: now, duration: configuration.pairingWindowNanos,
                maxConnections: configuration.maxPairingConnections)
            return true
        }
        guard opened else { return }
        logger.info("Scanned a valid pairing code", metadata: ["studio": "\(payload.studioName)"])
        startWindow(attempt: id, payload: payload)
    }

    /// Untrusted text for a log line: control characters (newlines, escape sequences) shown as `?`, cut to `limit`.
    static func printable(_ text: String, limit: Int) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(limit).map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }

    private func scanTimedOut(attempt id: Int) {
        let (stillScanning, frames, invalid) = core.withLock { core -> (Bool, Int, Int) in
            guard let attempt = core.pairing.attempt(id), let scan = attempt.scan, attempt.window == nil else { return (false, 0, 0) }
            return (true, scan.framesSeen, attempt.invalidCodes.count)
        }
        guard stillScanning else { return }
        let failure: PairingFailure = frames == 0
            ? .noFrames : .noCodeSeen(seconds: Int(configuration.scanNanos / 1_000_000_000), invalidCodes: invalid)
        finishPairing(attempt: id, .failure(failure))
    }
}
