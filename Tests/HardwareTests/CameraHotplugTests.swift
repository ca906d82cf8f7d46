import CamoStudioKit
import Foundation
import Testing

extension CameraHardware {
    /// Unplugging the camera never ends a studio session: the studio gets a paced "no signal" picture while the camera
    /// is away, and real frames again soon after it is back.
    @Suite(
        "Hot-plug: unplug and replug during a session", .serialized,
        .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
    struct Hotplug {
        @Test("60 s session, 5 unplug/replug cycles: no dropped slot, real frames back within 2 s of each replug")
        func unplugReplugDuringSession() throws {
            try Vivid.with(Hardware.webcam) {
                let scratch = try HardwareScratch("hotplug")
                let agent = try HardwareAgent(scratch)
                defer { agent.stop() }
                let seconds = 60.0
                let studio = try HardwareStudio(scratch, port: agent.port, seconds: seconds, codec: "jpeg")
                try #require(agent.waitForLog("Studio connected"), "the studio did not connect:\n\(tail(agent.log))")
                Thread.sleep(forTimeInterval: 3)

                // 5 × (unplug, 3 s away, replug, 6 s streaming): 45 s inside the 60 s session.
                var cycles: [(unplug: UInt64, replug: UInt64)] = []
                for _ in 0..<5 {
                    try Vivid.unplug()
                    let unplug = Hardware.monotonicNow()
                    Thread.sleep(forTimeInterval: 3)
                    try Vivid.replug()
                    cycles.append((unplug, Hardware.monotonicNow()))
                    Thread.sleep(forTimeInterval: 6)
                }
                let result: (summary: RecordingSummary, line: String)
                do {
                    result = try studio.summary()
                } catch {
                    Issue.record("the studio session did not survive the replugs: \(error)\nagent log:\n\(tail(agent.log))")
                    return
                }
                let summary = result.summary
                print("HW hotplug: \(result.line)")
                let context = "summary \(result.line)\nagent log:\n\(tail(agent.log, 2500))"

                // The session covered its 60 s without a gap in the pacer's slots.
                #expect(abs(Double(summary.frames) - 30 * seconds) <= 30 * seconds * 0.03, "frames: \(context)")
                #expect(abs(summary.fps - 30) <= 0.5, "fps: \(context)")
                #expect(summary.dropped == 0, "dropped: \(context)")
                #expect(summary.noSignal > 0, "no 'no signal' frame while the camera was unplugged: \(context)")
                #expect(summary.sourceDuplicates == 0, "sourceDuplicates: \(context)")

                // Per cycle: no-signal frames while unplugged; the first real frame after the replug within 2 s.
                let frames = try studio.index().frames
                for (number, cycle) in cycles.enumerated() {
                    let away = frames.filter { $0.slotTime > cycle.unplug && $0.slotTime < cycle.replug }
                    #expect(away.contains { $0.noSignal }, "cycle \(number + 1): no 'no signal' frame while unplugged (\(away.count) frames)")
                    #expect(!away.contains { !$0.noSignal && !$0.repeat && $0.captureTime > cycle.unplug + 500_000_000 },
                            "cycle \(number + 1): a new camera frame while the camera was unplugged")
                    let back = frames.first { $0.slotTime >= cycle.replug && !$0.noSignal && !$0.repeat }
                    let delay = back.map { Double($0.slotTime - cycle.replug) / 1e9 }
                    print("HW hotplug cycle \(number + 1): \(away.filter(\.noSignal).count) no-signal frames; real frames back after \(delay.map { String(format: "%.2f s", $0) } ?? "never")")
                    #expect(delay.map { $0 <= 2 } == true, "cycle \(number + 1): real frames back after \(delay.map { "\($0) s" } ?? "never") (limit 2 s)")
                }

                // The agent is alive and answers; the replugged camera got its old name (the agent closed the old node).
                #expect(agent.isRunning, "the agent died: \(context)")
                let status = try agentCommand(["status", "--json", "--state-dir", agent.stateDir])
                #expect(status.status == 0, "camo-agent status: \(status)")
                #expect(FileManager.default.fileExists(atPath: "/dev/video0"), "/dev/video0 did not come back")
                let stale = (try? FileManager.default.contentsOfDirectory(atPath: "/dev"))?.filter { $0.hasPrefix("video") && $0 != "video0" } ?? []
                #expect(stale.isEmpty, "replugged nodes got new names \(stale): an old node was still open")
                #expect(agent.log.contains("Camera back"), "\(context)")
                let stop = agent.stop()
                #expect(stop?.status == 0 && stop?.signaled == false, "the agent did not stop cleanly: \(stop.map(String.init(describing:)) ?? "")")
            }
        }
    }
}
