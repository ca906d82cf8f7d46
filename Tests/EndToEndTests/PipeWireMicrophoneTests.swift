import CamoMedia
import CamoStudioKit
import CamoTestSupport
import CamoVirtualDevices
import Foundation
import Logging
import Synchronization
import Testing

/// camo-studio's virtual microphone as a PipeWire source, against a real pipewire and wireplumber: recorded by
/// pw-record (PipeWire's own recorder), listed by pw-cli, and through the daemon going away and coming back.
@Suite(
    "PipeWire microphone: a source named after the agent, recorded by pw-record", .serialized,
    .enabled(if: PrivatePipeWire.missing.isEmpty,
             "needs pipewire, wireplumber, pw-record, pw-cli and dbus-daemon: scripts/install-deps --test installs them"))
struct PipeWireMicrophoneTests {
    /// 10 ms packets of a 1 kHz sine at -12 dBFS on the left and 2 kHz on the right, sent at their pace from a
    /// thread until `stop`, stamped with the monotonic clock as an agent stamps its capture.
    final class ToneSender: Sendable {
        private let stopped = Mutex(false)
        private let done = DispatchSemaphore(value: 0)

        init(into microphone: VirtualMicrophone) {
            let thread = Thread { [self] in
                let start = SystemMonotonicClock().now.nanoseconds
                var frame = 0
                var sequence: UInt32 = 0
                while !self.stopped.withLock({ $0 }) {
                    let due = start + UInt64(frame) * 1_000_000_000 / 48_000
                    let now = SystemMonotonicClock().now.nanoseconds
                    if due > now { Thread.sleep(forTimeInterval: Double(due - now) / 1e9) }
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(480 * 8)
                    for k in 0..<480 {
                        let t = Double(frame + k) / 48_000
                        for value in [Float(0.25 * sin(2 * .pi * 1_000 * t)), Float(0.25 * sin(2 * .pi * 2_000 * t))] {
                            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
                        }
                    }
                    microphone.receive(ReceivedAudioPacket(sequence: sequence, firstSampleTime: due, sampleFrames: 480, data: bytes))
                    sequence &+= 1
                    frame += 480
                }
                self.done.signal()
            }
            thread.start()
        }

        func stop() {
            stopped.withLock { $0 = true }
            done.wait()
        }
    }

    /// pw-record reading `node` for `seconds` into a float WAV.
    static func record(_ pipeWire: PrivatePipeWire, node: String, seconds: Double, to path: String) throws -> String {
        let recorder = try pipeWire.spawn("/usr/bin/pw-record", ["--target", node, "--rate", "48000", "--channels", "2", "--format", "f32", path],
                                          log: "pw-record")
        Thread.sleep(forTimeInterval: seconds)
        recorder.interrupt()
        recorder.waitUntilExit()
        return pipeWire.log("pw-record")
    }

    /// The longest run of silence (both channels within 0.02) after the sound began, and the left channel's pitch
    /// from its rising zero crossings.
    static func judge(_ tone: ToneCheck) -> (longestSilence: Int, pitch: Double, frames: Int) {
        var longest = 0, run = 0, began = false
        var crossings: [Int] = []
        for i in 0..<tone.sampleFrames {
            let l = tone.left[i], r = tone.right[i]
            if !began { began = abs(l) > 0.1; continue }
            if abs(l) < 0.02 && abs(r) < 0.02 { run += 1; longest = max(longest, run) } else { run = 0 }
            if i > 0 && tone.left[i - 1] < 0 && l >= 0 { crossings.append(i) }
        }
        let pitch = crossings.count > 2 ? 48_000 * Double(crossings.count - 1) / Double(crossings.last! - crossings.first!) : 0
        return (longest, pitch, tone.sampleFrames)
    }

    @Test("The source is listed as Camo: e2e (Audio/Source); pw-record gets the agent's 1 kHz tone from it with no gap longer than a packet; renamed, pw-dump shows the new description")
    func recordedByPWRecord() throws {
        let scratch = try Scratch("pipewire")
        let pipeWire = try PrivatePipeWire(directory: scratch.path)
        defer { pipeWire.stop() }
        let microphone = try VirtualMicrophone(pipeWireNode: "camo-e2e", description: "Camo: e2e", remote: pipeWire.socket, packetFrames: 480,
                                               logger: Logger(label: "test"))
        microphone.start()
        defer { microphone.stop() }
        let sender = ToneSender(into: microphone)
        defer { sender.stop() }

        let nodes = try pipeWire.tool("pw-cli", ["ls", "Node"]).stdout
        #expect(nodes.contains("node.name = \"camo-e2e\"") && nodes.contains("node.description = \"Camo: e2e\"")
                    && nodes.contains("media.class = \"Audio/Source\""), "pw-cli ls Node: \(nodes)")
        Thread.sleep(forTimeInterval: 0.5)
        let wav = scratch.path + "/recorded.wav"
        let said = try Self.record(pipeWire, node: "camo-e2e", seconds: 3, to: wav)
        let tone = try ToneCheck(wavPath: wav)
        let (longest, pitch, frames) = Self.judge(tone)
        let statistics = microphone.statistics
        print("PipeWire microphone: pw-record got \(frames) frames; left \(String(format: "%.2f", pitch)) Hz; longest silence \(longest) frames; the microphone: \(statistics.counters), buffer \(statistics.targetMilliseconds) ms, \(statistics.xruns) late periods, error \(statistics.lastError ?? "none")")
        #expect(frames >= 48_000 * 2, "pw-record got \(frames) frames in 3 s; it said: \(said)")
        #expect(abs(pitch - 1_000) < 5, "pitch \(pitch) Hz")
        #expect(longest < 480, "a gap of \(longest) frames")
        #expect(statistics.device == "pipewire:camo-e2e")

        // Renamed while it plays (camo-studio does it once the agent says its own name): the node's own properties
        // (pw-dump; what pavucontrol and the desktop's sound settings show) have the new description, the same name.
        microphone.describe(as: "Camo: Kitchen Cam")
        var description: String?
        let deadline = Date(timeIntervalSinceNow: 5)
        while Date() < deadline {
            description = try pipeWire.nodeDescription("camo-e2e")
            if description == "Camo: Kitchen Cam" { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(description == "Camo: Kitchen Cam", "the node camo-e2e's description after describe(as:): \(description ?? "no such node")")
    }

    @Test("No PipeWire daemon: a sentence that names the source and what to do")
    func noDaemon() throws {
        let scratch = try Scratch("pipewire-none")
        do {
            _ = try VirtualMicrophone(pipeWireNode: "camo-none", description: "Camo: none", remote: scratch.path + "/no-such-socket",
                                      packetFrames: 480, logger: Logger(label: "test"))
            Issue.record("a source was made with no daemon")
        } catch {
            print("PipeWire microphone: no daemon: \(error)")
            #expect(error.description.contains("camo-none") && error.description.contains("cannot connect to the PipeWire daemon")
                        && error.description.contains("--microphone"), "\(error)")
        }
    }

    @Test("The daemon killed: the failure is reported; the daemon back: the source is made again and records")
    func daemonComesBack() throws {
        let scratch = try Scratch("pipewire-restart")
        let pipeWire = try PrivatePipeWire(directory: scratch.path)
        defer { pipeWire.stop() }
        let microphone = try VirtualMicrophone(pipeWireNode: "camo-back", description: "Camo: back", remote: pipeWire.socket, packetFrames: 480,
                                               logger: Logger(label: "test"))
        microphone.start()
        defer { microphone.stop() }
        let sender = ToneSender(into: microphone)
        defer { sender.stop() }
        pipeWire.killDaemons()
        try waitFor("the microphone to report the daemon's loss", seconds: 10) { microphone.statistics.lastError?.contains("PipeWire") == true }
        print("PipeWire microphone: after the kill: \(microphone.statistics.lastError ?? "")")
        try pipeWire.startDaemons()
        try waitFor("the source to be made again", seconds: 15) {
            try pipeWire.tool("pw-cli", ["ls", "Node"]).stdout.contains("node.name = \"camo-back\"") && microphone.statistics.lastError == nil
        }
        Thread.sleep(forTimeInterval: 0.5)
        let wav = scratch.path + "/again.wav"
        let said = try Self.record(pipeWire, node: "camo-back", seconds: 2, to: wav)
        let (longest, pitch, frames) = Self.judge(try ToneCheck(wavPath: wav))
        print("PipeWire microphone: after the restart pw-record got \(frames) frames; left \(String(format: "%.2f", pitch)) Hz; longest silence \(longest)")
        #expect(frames >= 48_000, "pw-record got \(frames) frames; it said: \(said)")
        #expect(abs(pitch - 1_000) < 5 && longest < 480, "pitch \(pitch) Hz, gap \(longest) frames")
    }
}
