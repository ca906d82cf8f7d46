import ArgumentParser
import CamoStudioKit
import Foundation
import Logging

/// `camo-studio record`: records a session into a directory and prints a one-line JSON summary.
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record video, audio and timing from an agent into a directory.",
        discussion: """
            Writes DIR/video.bgra (decoded frames, tightly packed BGRA), DIR/video.json (per frame: times of capture, \
            receipt and decoding), DIR/audio.wav (float32, 2 ch, 48 kHz), DIR/snapshot.jpg, for H.264 DIR/video.mp4 \
            (the stream as received, with the audio), and prints one line of JSON on stdout (its "transport" object: \
            latency p50/p95/p99, bitrate per second, skipped frames, keyframes).
            """)

    @Option(help: "The agent as HOST:PORT ([v6]:PORT for IPv6). With --agent: where that paired agent is, instead of mDNS.")
    var connect: String?

    @Option(help: "A paired agent, by id or name: found with mDNS (_camo._tcp) and reached with Noise KK.")
    var agent: String?

    @OptionGroup var state: StudioStateOptions

    @Option(help: "Seconds of slot time to record from the first frame.")
    var seconds: Double = 10

    @Option(help: "Audio sample frames per packet (64...48000).")
    var samples: Int = 1024

    @Option(help: "Preferred video size WxH.")
    var size: String = "1280x720"

    @Option(help: "Codec to ask for: bgra, jpeg or h264 (default: the agent decides: bgra on loopback and USB, h264 on the network when it has an encoder, else jpeg).")
    var codec: String?

    @Option(help: "JPEG quality 1...100 (0 = agent default).")
    var jpegQuality: Int = 0

    @Option(help: "The studio name sent to the agent.")
    var name: String = "camo-studio"

    @Option(help: "A file holding the studio's long-term key (64 hex digits); created if missing. Default: a new key per run.")
    var keyFile: String?

    @Flag(help: "Do not keep pixels; write a hash per frame into video.json instead.")
    var noVideoFile = false

    @Flag(help: "Do not decode or hash frames at all: count and time them only (for slow machines, e.g. a test VM). No snapshot.")
    var noPixels = false

    @Flag(help: "Do not reconnect when the session is lost before the recording is complete (the recording then fails).")
    var noReconnect = false

    @Option(help: "Seconds of silence from the agent while streaming that count as a dead link (then it reconnects).")
    var stallTimeout: Double = 2

    @Option(help: "The output directory.")
    var out: String

    @Flag(help: "Print the figures once a second on stderr while recording (frames, bitrate, the agent's target, latency, skips).")
    var stats = false

    @Option(help: .hidden) var damageH264Every: Int = 0

    @OptionGroup var logging: LoggingOptions

    private var parsedSize: (width: Int, height: Int)? {
        let parts = size.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...4096).contains(w), (1...4096).contains(h)
        else { return nil }
        return (w, h)
    }

    func validate() throws {
        guard connect != nil || agent != nil else { throw ValidationError("Say which agent: --agent NAME_OR_ID (paired), or --connect HOST:PORT") }
        if let connect, HostPort(parsing: connect) == nil { throw ValidationError("--connect must be HOST:PORT, got '\(connect)'") }
        if agent != nil, keyFile != nil { throw ValidationError("--agent uses the studio's own key from --state-dir; drop --key-file") }
        guard seconds > 0, seconds.isFinite else { throw ValidationError("--seconds must be positive") }
        guard (64...48_000).contains(samples) else { throw ValidationError("--samples must be 64...48000") }
        guard parsedSize != nil else { throw ValidationError("--size must be WxH within 4096x4096, got '\(size)'") }
        guard codec == nil || StudioCodecPreference(rawValue: codec ?? "") != nil, codec != "agentDecides" else {
            throw ValidationError("--codec must be bgra, jpeg or h264")
        }
        guard (0...100).contains(jpegQuality) else { throw ValidationError("--jpeg-quality must be 0...100") }
        guard stallTimeout >= 0.1, stallTimeout <= 3600 else { throw ValidationError("--stall-timeout must be 0.1...3600 seconds") }
        guard name.utf8.count <= 255 else { throw ValidationError("--name must be at most 255 bytes") }
    }

    func run() async throws {
        logging.bootstrap()
        let logger = Logger(label: "camo.studio")
        // validate() checked it.
        guard let size = parsedSize else { throw ExitCode.usage }
        let identity: StudioIdentity
        let address: HostPort
        let candidates: @Sendable () async -> [HostPort]
        var lookup: AgentCandidates?
        var handshake = StudioHandshake.unpaired
        if let agent {
            let studio = try state.open(logger: logger)
            let target = try await Self.resolve(agent: agent, connect: connect, studio: studio, logger: logger)
            identity = studio.identity
            address = target.address
            handshake = .paired(agentKey: Array(target.agent.publicKey))
            if connect == nil {
                // Found with mDNS: look again before each round of reconnecting, so a pulled cable falls back
                // to the network and a returning cable is preferred again.
                let agentLookup = AgentCandidates(agentId: target.agent.id, known: target.candidates, logger: logger)
                lookup = agentLookup
                candidates = { await agentLookup.candidates() }
            } else {
                candidates = { [address] }
            }
        } else {
            // validate() checked it.
            guard let connect, let parsed = HostPort(parsing: connect) else { throw ExitCode.usage }
            address = parsed
            candidates = { [parsed] }
            do {
                identity = try keyFile.map { try StudioIdentity.load(keyFile: $0) } ?? StudioIdentity.generated()
            } catch {
                FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
                throw ExitCode.usage
            }
        }
        let client = StudioClientConfiguration(
            identity: identity, studioName: name, audioSamplesRequired: samples,
            preferredWidth: size.width, preferredHeight: size.height,
            codec: codec.flatMap(StudioCodecPreference.init(rawValue:)) ?? .agentDecides, jpegQuality: jpegQuality)
        var clientConfiguration = client
        clientConfiguration.decodeVideo = !noPixels
        clientConfiguration.damageH264Every = max(0, damageH264Every)
        clientConfiguration.handshake = handshake
        var recorderConfiguration = RecorderConfiguration(
            address: address, seconds: seconds, outputDirectory: out, writeVideoFile: !noVideoFile && !noPixels,
            client: clientConfiguration)
        recorderConfiguration.reconnect = !noReconnect
        recorderConfiguration.stallTimeoutNanos = UInt64(stallTimeout * 1e9)
        recorderConfiguration.candidates = candidates
        if stats {
            recorderConfiguration.onStats = { progress in
                FileHandle.standardError.write(Data("camo-studio: \(progress.line)\n".utf8))
            }
        }
        let recorder = Recorder(configuration: recorderConfiguration, logger: logger)
        defer { lookup?.stop() }
        do {
            let summary = try await recorder.run()
            print(try summary.jsonLine())
        } catch {
            FileHandle.standardError.write(Data("camo-studio: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The paired agent `agent` and where to reach it (see `ResolvedAgent.resolve`), or why not, printed.
    static func resolve(agent: String, connect: String?, studio: StudioState, logger: Logger) async throws -> ResolvedAgent {
        do {
            return try await ResolvedAgent.resolve(agent, connect: connect.flatMap(HostPort.init(parsing:)), studio: studio, logger: logger)
        } catch .notPaired {
            FileHandle.standardError.write(Data("camo-studio: \(agent) is not a paired agent; pair first with `camo-studio pair` (paired agents: \(studio.pairedAgents.map(\.name).joined(separator: ", ")))\n".utf8))
        } catch .lookupFailed(let paired, let error) {
            FileHandle.standardError.write(Data("camo-studio: cannot look for \(paired.name) with mDNS: \(error)\(connectHint(error))\n".utf8))
        } catch .notFound(let paired, let seconds) {
            FileHandle.standardError.write(Data("camo-studio: agent \(paired.name) (\(paired.id)) was not found with mDNS within \(Int(seconds)) s; is it running on this network? Or give --connect HOST:PORT.\n".utf8))
        }
        throw ExitCode.failure
    }
}
