import CamoWire
import Foundation
import Logging

/// Lists and fetches a paired agent's recordings over a settings-only session (protocol 1.4: no media flows).
public enum ClipsSession {
    /// Why the recordings could not be listed or fetched.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The agent speaks an older protocol, keeps no recordings, or refused (this studio is not paired, the
        /// recording is gone).
        case unavailable(String)
        /// The session ended first.
        case ended(String)
        /// The connection failed.
        case client(StudioClientError)
        /// The file could not be written.
        case file(String)

        public var description: String {
            switch self {
            case .unavailable(let why): return why
            case .ended(let why): return "the session ended: \(why)"
            case .client(let error): return "\(error)"
            case .file(let why): return why
            }
        }
    }

    /// How many pieces a fetch keeps asked for at once (each ``ClipFetch/maxLength`` bytes).
    public static let window = 4

    /// Every recording the agent keeps, newest first (page after page).
    /// - Throws: ``Failure`` when the agent cannot list them or the session ends first.
    public static func list(
        host: String, port: Int, configuration: StudioClientConfiguration, logger: Logger
    ) async throws(Failure) -> [WireClip] {
        let client = try await connect(host: host, port: port, configuration: configuration, logger: logger)
        defer { Task { await client.close(reason: "recordings listed") } }
        var events = client.events.makeAsyncIterator()
        var clips: [WireClip] = []
        var before: UInt64 = 0
        while true {
            do { try await client.requestClipList(before: before) } catch { throw .client(error) }
            let page: WireClipList = try await next(&events) { event in
                if case .clipList(let list) = event { return list }
                return nil
            }
            if let why = page.unavailable { throw .unavailable(why) }
            clips += page.clips
            guard page.more, let last = page.clips.last, last.id < before || before == 0 else { return clips }
            before = last.id
        }
    }

    /// Writes recording `id` to `path` (as `path.partial`, renamed when whole); `progress` gets the bytes so far and
    /// the total after each piece. Returns the file's size.
    /// - Throws: ``Failure`` when the agent refuses (no such recording, not paired), the session ends, or the file
    ///   cannot be written; the partial file is removed then.
    @discardableResult
    public static func fetch(
        id: UInt64, to path: String, host: String, port: Int, configuration: StudioClientConfiguration, logger: Logger,
        progress: (UInt64, UInt64) -> Void = { _, _ in }
    ) async throws(Failure) -> UInt64 {
        let client = try await connect(host: host, port: port, configuration: configuration, logger: logger)
        defer { Task { await client.close(reason: "recording fetched") } }
        let partial = path + ".partial"
        guard FileManager.default.createFile(atPath: partial, contents: nil), let file = FileHandle(forWritingAtPath: partial) else {
            throw .file("cannot write \(partial): check that the folder exists and is writable")
        }
        var finished = false
        defer {
            try? file.close()
            if !finished { try? FileManager.default.removeItem(atPath: partial) }
        }
        var events = client.events.makeAsyncIterator()
        let piece = ClipFetch.maxLength
        var asked: UInt64 = 0  // the end of what was asked for
        var received: UInt64 = 0
        var total: UInt64?
        func ask() async throws(Failure) {
            do { try await client.fetchClip(ClipFetch(id: id, offset: asked, length: piece)) } catch { throw .client(error) }
            asked += UInt64(piece)
        }
        try await ask()  // the first piece tells the size; then a window of them
        while total.map({ received < $0 }) ?? true {
            let data: ClipData = try await next(&events) { event in
                if case .clipData(let data) = event, data.id == id { return data }
                return nil
            }
            if let why = data.refusal { throw .unavailable(why) }
            guard data.offset == received else {
                throw .ended("the agent sent bytes from \(data.offset) where \(received) was next")
            }
            total = data.total
            if data.data.isEmpty && received < data.total {
                throw .ended("the agent sent no bytes at \(received) of \(data.total)")
            }
            do { try file.write(contentsOf: data.data) } catch { throw .file("cannot write \(partial): \(error)") }
            received += UInt64(data.data.count)
            progress(received, data.total)
            while asked < data.total && asked < received + UInt64(window) * UInt64(piece) { try await ask() }
        }
        do {
            try file.synchronize()
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: partial, toPath: path)
        } catch {
            throw .file("cannot finish \(path): \(error)")
        }
        finished = true
        return received
    }

    private static func connect(
        host: String, port: Int, configuration: StudioClientConfiguration, logger: Logger
    ) async throws(Failure) -> StudioClient {
        let client: StudioClient
        do {
            client = try await StudioClient.connectWithoutMedia(host: host, port: port, configuration: configuration, logger: logger)
        } catch {
            throw .client(error)
        }
        guard client.agent.versionMinor >= 4 else {
            await client.close(reason: "the agent has no recordings to list")
            throw .unavailable("the agent speaks protocol 1.\(client.agent.versionMinor), which cannot list recordings (1.4 added that); update camo-agent on it")
        }
        guard client.agent.capabilities.contains(.clips) else {
            await client.close(reason: "the agent keeps no recordings")
            throw .unavailable(
                "the agent keeps no recordings (it was started with --no-recordings, or the recording mode keeps none); "
                    + "choose a mode in its settings (selectedRecordingMode)")
        }
        return client
    }

    /// The next event `match` picks, skipping others; the session's end is a failure.
    private static func next<T>(
        _ events: inout StudioEventStream.AsyncIterator, _ match: (StudioEvent) -> T?
    ) async throws(Failure) -> T {
        while let event = await events.next() {
            if let value = match(event) { return value }
            if case .closed(let reason) = event { throw .ended("\(reason)") }
        }
        throw .ended("the connection closed")
    }
}
