import CamoStudioKit
import Foundation
import Testing

// The USB link over a real USB link in the VM: dummy_hcd gives both ends of a USB cable in one kernel, so
// `camo-agent usb up` makes its CDC-NCM gadget (the webcam host's end, camousb0) and the kernel's cdc_ncm driver
// binds it as a USB host would (the studio's end, camo + 6 hex digits). Our udev rules name and address both ends.
// The agent runs in the network namespace "camoagent" with the gadget's interface moved into it (plus a veth pair
// standing for any other network), the studio in the VM's own namespace, where systemd-udevd handles the studio's
// end on every plug-in, as on a studio computer.

@Suite(
    "USB link: camo-agent usb over dummy_hcd, studio on the cable without pairing (VM)", .serialized,
    .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
struct USBLinkTests {
    @Test("usb up makes the gadget, udev names and addresses both ends; up twice, down twice, a missing or unknown UDC are refused and leave nothing")
    func gadgetUpAndDown() throws {
        try USBLab.with(dummyHCD: false) {
            // No UDC at all (dummy_hcd not loaded): refused before anything is made.
            let noUDC = try usb(["up"])
            #expect(noUDC.status != 0 && noUDC.stderr.contains("no USB device controller"), "\(noUDC)")
            #expect(!FileManager.default.fileExists(atPath: USBLab.gadget), "nothing may be made without a UDC")
            let downNothing = try usb(["down"])
            #expect(downNothing.status != 0 && downNothing.stderr.contains("not up"), "\(downNothing)")
            print("HW usb refusals: no UDC: \(noUDC.stderr.trimmingCharacters(in: .whitespacesAndNewlines)) | down: \(downNothing.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")

            try USBLab.loadDummyHCD()
            let unknown = try usb(["up", "--udc", "nope.0"])
            #expect(unknown.status != 0 && unknown.stderr.contains("nope.0") && unknown.stderr.contains("dummy_udc.0"), "\(unknown)")
            #expect(!FileManager.default.fileExists(atPath: USBLab.gadget), "nothing may be made for an unknown UDC")

            let up = try usb(["up"])
            try #require(up.status == 0, "usb up: \(up)")
            print("HW usb up: \(up.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")
            let status = try USBLab.status()
            #expect(status["present"] as? Bool == true && status["udc"] as? String == "dummy_udc.0", "\(status)")
            let agentIPv4 = try #require(status["agentIPv4"] as? String), studioIPv4 = try #require(status["studioIPv4"] as? String)

            // The studio's end appears, is named by 70-camo-usb-studio.rules and gets its address from camo-usb-link.
            let studioEnd = try USBLab.waitForStudioEnd(address: studioIPv4)
            #expect(studioEnd.hasPrefix("camo") && studioEnd.count == 10, "the studio's end is called \(studioEnd)")
            #expect(Hardware.wait(seconds: 10) { USBLab.addresses(of: "camousb0").contains(agentIPv4) },
                    "the gadget's end should be camousb0 with \(agentIPv4): \(USBLab.links())")
            let studioTest = try UdevBench.sh("udevadm test --action=add /sys/class/net/\(studioEnd) 2>&1")
            #expect(studioTest.output.contains("70-camo-usb-studio.rules") && studioTest.output.contains("camo-usb-link configure \(studioEnd)"),
                    "udevadm test should show our studio rule applied:\n\(tail(studioTest.output))")
            let gadgetTest = try UdevBench.sh("udevadm test --action=add /sys/class/net/camousb0 2>&1")
            #expect(gadgetTest.output.contains("70-camo-usb-gadget.rules") && gadgetTest.output.contains("camo-usb-link configure camousb0"),
                    "udevadm test should show our gadget rule applied:\n\(tail(gadgetTest.output))")
            print("HW usb: gadget end camousb0 \(agentIPv4), studio end \(studioEnd) \(studioIPv4); udevadm test lines: "
                  + studioTest.output.split(separator: "\n").filter { $0.contains("70-camo-usb") }.prefix(4).joined(separator: " | "))

            // Up twice: refused, and the gadget is exactly as it was.
            let before = try USBLab.tree()
            let twice = try usb(["up"])
            #expect(twice.status != 0 && twice.stderr.contains("already up") && twice.stderr.contains("dummy_udc.0"), "\(twice)")
            #expect(try USBLab.tree() == before, "a refused second up must change nothing")

            let down = try usb(["down"])
            #expect(down.status == 0, "usb down: \(down)")
            #expect(!FileManager.default.fileExists(atPath: USBLab.gadget), "the gadget directory must be gone")
            #expect(Hardware.wait(seconds: 10) { !USBLab.links().contains { $0.hasPrefix("camo") } },
                    "no camo interface may remain: \(USBLab.links())")
            let again = try usb(["down"])
            #expect(again.status != 0 && again.stderr.contains("not up"), "\(again)")
        }
    }

    @Test("An unpaired studio records 10 s of 640x360 bgra over the cable; refused over another interface; the cable pulled and back 5 times reconnects within 3 s each time")
    func streamOverTheCable() throws {
        try USBLab.with(dummyHCD: true) {
            let up = try usb(["up"])
            try #require(up.status == 0, "usb up: \(up)")
            let status = try USBLab.status()
            let agentIPv4 = try #require(status["agentIPv4"] as? String), studioIPv4 = try #require(status["studioIPv4"] as? String)
            _ = try USBLab.waitForStudioEnd(address: studioIPv4)
            try USBLab.isolateAgent()
            let scratch = try HardwareScratch("usb-link")
            let port = 47_811
            // --allow-unpaired only opens loopback (for the benchmark's reference run); the cable needs nothing. --no-events:
            // the guest runs under emulation, and the event detectors' CPU is not what this test measures.
            let agent = try HardwareAgent(scratch, camera: "test", microphone: "test", arguments: ["--no-mdns", "--no-events"], label: "usb-agent",
                                          waitForCamera: false, allowUnpaired: true, port: port, netns: USBLab.namespace)
            defer { agent.stop() }

            // 10 s over USB, never paired, codec left to the agent.
            let cpuBefore = cpuSeconds(pid: agent.pid)
            let started = Hardware.monotonicNow()
            let overUSB = try HardwareStudio(scratch, port: port, label: "studio-usb", seconds: 10, codec: nil, samples: 1_024, host: agentIPv4)
            let (usbSummary, usbLine) = try overUSB.summary()
            let usbSeconds = Double(Hardware.monotonicNow() - started) / 1e9
            let usbAgentCPU = (cpuSeconds(pid: agent.pid) ?? 0) - (cpuBefore ?? 0)
            print("HW usb record: \(usbLine)")
            #expect(usbSummary.codec == "bgra", "over the cable the agent sends raw BGRA by default: \(usbLine)")
            #expect(usbSummary.width == 640 && usbSummary.height == 360, "\(usbLine)")
            // Every slot is accounted for: sent, or dropped and counted by the studio (a slow link cannot hide).
            #expect(abs(usbSummary.frames + usbSummary.dropped - 300) <= 3, "300 ± 3 slots over the cable, sent or dropped: \(usbLine)")
            #expect(usbSummary.smallestPacket == 1_024 && usbSummary.largestPacket == 1_024
                    && usbSummary.sampleFrames == usbSummary.audioPackets * 1_024 && usbSummary.audioPackets >= 466,
                    "audio packets of exactly 1024 frames, at least 10 s of them (469): \(usbLine)")
            // Exact: consecutive sequence numbers, each packet's first sample 1024 frames after the one before.
            let packets = try overUSB.audioIndex().packets
            let steps = zip(packets, packets.dropFirst()).filter { a, b in
                b.sequence != a.sequence &+ 1 || abs(Double(b.firstSampleTime) - Double(a.firstSampleTime) - 1_024 / 48_000 * 1e9) > 1e9 / 48_000
            }
            #expect(steps.isEmpty, "audio over the cable must be continuous: \(steps.count) breaks, first \(String(describing: steps.first))")
            #expect(agent.log.contains("link=usb (camousb0)") || agent.log.contains("camousb0"), "the agent should log the link:\n\(tail(agent.log))")

            // The same studio over another interface (the veth pair), never paired: refused.
            let refused = try runCommand(try Hardware.binary("camo-studio"), [
                "record", "--connect", "\(USBLab.vethAgent):\(port)", "--out", scratch.path + "/refused", "--seconds", "2", "--no-pixels",
                "--no-reconnect",
            ], timeout: 60)
            #expect(refused.status != 0 && refused.stderr.contains("only over the USB cable"), "an unpaired studio over the network must be refused: \(refused)")
            #expect(agent.log.contains("Refused a studio"), "the refusal must be logged:\n\(tail(agent.log))")

            // The reference: the same 10 s over loopback inside the agent's namespace.
            let cpuBeforeLoop = cpuSeconds(pid: agent.pid)
            let startedLoop = Hardware.monotonicNow()
            var overLoopback = try HardwareStudio(scratch, port: port, label: "studio-lo", seconds: 10, codec: "bgra", samples: 1_024,
                                                  netns: USBLab.namespace)
            let loopSummary: RecordingSummary, loopLine: String
            do {
                (loopSummary, loopLine) = try overLoopback.summary()
            } catch {
                // Once in a clean-clone run (November 2026) this reference studio's connection was reset at its start,
                // right after the refused attempt over the veth: said here in full, and measured once more, since what
                // it is for is the reference figure.
                print("HW usb reference over loopback: the first attempt failed (\(error)); agent log:\n\(tail(agent.log))")
                overLoopback = try HardwareStudio(scratch, port: port, label: "studio-lo2", seconds: 10, codec: "bgra", samples: 1_024,
                                                  netns: USBLab.namespace)
                (loopSummary, loopLine) = try overLoopback.summary()
            }
            let loopSeconds = Double(Hardware.monotonicNow() - startedLoop) / 1e9
            let loopAgentCPU = (cpuSeconds(pid: agent.pid) ?? 0) - (cpuBeforeLoop ?? 0)
            print("HW usb reference over loopback: \(loopLine)")
            let frameBytes = 640.0 * 360 * 4
            let usbRate = Double(usbSummary.frames) * frameBytes * 8 / usbSeconds / 1e6
            let loopRate = Double(loopSummary.frames) * frameBytes * 8 / loopSeconds / 1e6
            // How many of the 300 frames arrive depends on what the guest can move, which follows the host it runs
            // on: the reference is the same 10 s over loopback in the same run. Where loopback keeps up (≥ 297
            // frames), the cable must too: 300 ± 3 frames, at most 3 dropped. This held on the hosts of earlier rounds
            // once vm-run hid ERMS/FSRM from the guest CPU (TCG runs `rep movsb` slowly, and every copy of a frame in
            // the guest went through it). On a host about half as fast (CI, November 2026) the guest moves ~100 Mb/s
            // of bgra over loopback (~190 frames of 300, the agent and the studio filling both emulated CPUs) and
            // ~60 Mb/s over the cable, where both ends of the cable (f_ncm and cdc_ncm) run in the same emulated
            // kernel: there the cable must carry at least 0.3x loopback's frames (measured 0.49-0.81 in five runs of
            // that kind; a stranded link carries next to nothing for seconds at a time).
            // The synthetic source shares those CPUs: repeats (slots without a new source frame) are bounded by 3
            // where loopback keeps up and by 5 % of the slots where it does not.
            if loopSummary.frames >= 297 {
                #expect(abs(usbSummary.frames - 300) <= 3 && usbSummary.dropped <= 3,
                        "loopback kept up, so 300 ± 3 frames must arrive over the cable too: \(usbLine)")
                #expect(usbSummary.repeated <= 3, "at most 3 repeats: \(usbLine)")
            } else {
                #expect(Double(usbSummary.frames) >= 0.3 * Double(loopSummary.frames),
                        "the cable carried \(usbSummary.frames) frames, want ≥ 0.3x loopback's \(loopSummary.frames): \(usbLine)")
                // Repeats over slots where the synthetic source itself fell behind (its frame numbers jump when the
                // guest starves it: 165 skipped of 300 in one CI run, with 20 repeats) are the source's, as for vivid
                // (repeatsBeyondCameraSkips); the agent's own are bounded by 5 % of the slots.
                let own = (try? overUSB.index()).map { repeatsBeyondCameraSkips($0) } ?? usbSummary.repeated
                print("HW usb repeats: \(usbSummary.repeated), \(own) not explained by the source's \(usbSummary.sourceGaps) skipped frames")
                #expect(own <= 15, "at most 15 repeats (5 % of the slots) that the source's own skips do not explain, on a guest that cannot keep up: \(usbLine)")
            }
            print(String(format: "BENCH usb link in the VM (dummy_hcd is a software link; TCG): bgra 640x360 over USB %.1f Mb/s, agent CPU %.1f %%, studio CPU %.1f %%; over loopback %.1f Mb/s, agent CPU %.1f %%, studio CPU %.1f %%; throughput ratio usb/loopback %.2f, agent CPU ratio %.2f",
                         usbRate, usbAgentCPU / usbSeconds * 100, (overUSB.cpuShare ?? 0) * 100,
                         loopRate, loopAgentCPU / loopSeconds * 100, (overLoopback.cpuShare ?? 0) * 100,
                         loopRate > 0 ? usbRate / loopRate : 0, loopAgentCPU > 0 ? (usbAgentCPU / usbSeconds) / (loopAgentCPU / loopSeconds) : 0))

            // The cable pulled mid-session (the UDC unbound for 4 s), then back, five times in one session of the default
            // bgra. How long the studio took each time is read from its recording: the slot time (the agent's
            // CLOCK_MONOTONIC, the same clock in the whole VM) of the first frame after the UDC was bound again. Under
            // a full 221 Mb/s of bgra the kernel's f_ncm often keeps a half-filled NTB across the reconnect with its
            // flush timer cancelled; before the agent nudged the link (GadgetLinkWatch), 3 or 4 of every 6 pulls sent
            // next to nothing for 3 s to more than 20 s (Docs/USB.md, section 8).
            let pulls = 5
            let pulled = try HardwareStudio(scratch, port: port, label: "studio-pull", seconds: 60, codec: "bgra", samples: 1_024, host: agentIPv4,
                                            arguments: ["--log-level", "debug"])
            #expect(Hardware.wait(seconds: 30) { (try? USBLab.usbSessions(agent).count) ?? 0 >= 1 }, "the studio did not connect over USB")
            Thread.sleep(forTimeInterval: 3)
            let closedBefore = agent.log.components(separatedBy: "Session closed").count - 1
            let reconnects = { pulled.stderr.components(separatedBy: "reconnected to").count - 1 }
            var cycles: [(unbound: UInt64, rebound: UInt64)] = []
            for _ in 0..<pulls where pulled.process.isRunning {
                let reconnectsBefore = reconnects()
                try USBLab.unbind()
                let unboundAt = Hardware.monotonicNow()
                Thread.sleep(forTimeInterval: 4)
                #expect(agent.isRunning, "the agent must keep running with the cable pulled")
                try USBLab.bind()
                cycles.append((unboundAt, Hardware.monotonicNow()))
                // Back over the cable (or given up), then 2 s of streaming before the next pull.
                _ = Hardware.wait(seconds: 25) { reconnects() > reconnectsBefore || !pulled.process.isRunning }
                Thread.sleep(forTimeInterval: 2)
            }
            let (pulledSummary, pulledLine) = try pulled.summary()
            print("HW usb cable pulled \(cycles.count) times, studio summary: \(pulledLine)")
            let studioLog = pulled.stderr.split(separator: "\n").filter { $0.contains("reconnect") || $0.contains("lost") }
            print("HW usb cable pulled, studio: \(studioLog.prefix(2).joined(separator: " | ")) … \(studioLog.suffix(3).joined(separator: " | "))")
            #expect(cycles.count == pulls, "the studio's 60 s ended after \(cycles.count) of \(pulls) pulls")
            let frames = try pulled.index().frames
            var backAfter: [Double?] = []
            for (number, cycle) in cycles.enumerated() {
                let nextUnbind = number + 1 < cycles.count ? cycles[number + 1].unbound : UInt64.max
                let firstBack = frames.first { $0.slotTime > cycle.rebound && $0.slotTime < nextUnbind }
                backAfter.append(firstBack.map { Double($0.slotTime - cycle.rebound) / 1e9 })
            }
            let shown = backAfter.map { $0.map { String(format: "%.2f s", $0) } ?? "never" }.joined(separator: ", ")
            print("HW usb cable pulled: \(frames.filter { $0.slotTime < (cycles.first?.unbound ?? 0) }.count) frames before the first pull; first frame back after each bind: \(shown)")
            #expect(backAfter.allSatisfy { $0 != nil && $0! <= 3 }, "the studio must reconnect over USB within 3 s of the cable's return, every time (\(shown))")
            #expect(pulledSummary.codec == "bgra" && pulledSummary.reconnects >= cycles.count
                    && pulledSummary.addresses.allSatisfy { $0.hasPrefix(agentIPv4) },
                    "every reconnect must be counted in the summary, over USB: \(pulledLine)")
            #expect(agent.isRunning, "the agent must still run")
            #expect(Hardware.wait(seconds: 15) { agent.log.components(separatedBy: "Session closed").count - 1 >= closedBefore + cycles.count },
                    "the agent must end the session of each pulled cable:\n\(tail(agent.log))")
            #expect(!agent.log.contains("Could not nudge"), "the agent must be able to nudge its link:\n\(tail(agent.log))")
            let nudges = agent.log.split(separator: "\n").filter { $0.contains("nudged it") }
            print("HW usb cable pulled, agent nudged a stranded link \(nudges.count) times: \(nudges.suffix(2).joined(separator: " | "))")
            let endings = agent.log.split(separator: "\n").filter { $0.contains("Session closed") || $0.contains("Session ended") || $0.contains("Connection error") }
            print("HW usb cable pulled, agent: \(endings.suffix(3).joined(separator: " | "))")
        }
    }

    private func usb(_ arguments: [String]) throws -> CommandResult {
        try runCommand(try Hardware.binary("camo-agent"), ["usb"] + arguments, timeout: 60)
    }
}

/// The USB lab: modules, configfs, our udev rules installed with systemd-udevd running, and cleanup.
enum USBLab {
    static let gadget = "/sys/kernel/config/usb_gadget/camo-agent"
    static let namespace = "camoagent"
    static let vethAgent = "10.77.0.1"
    static let vethStudio = "10.77.0.2"

    static func with(dummyHCD: Bool, _ body: () throws -> Void) throws {
        cleanup()
        for module in ["libcomposite", "usb_f_ncm", "cdc_ncm", "veth"] {
            let probe = try UdevBench.sh("modprobe \(module) 2>&1")
            try #require(probe.status == 0, "modprobe \(module): \(probe.output)")
        }
        _ = try UdevBench.sh("mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config")
        let link = UdevBench.packageRoot + "/udev/camo-usb-link"
        for rules in ["70-camo-usb-gadget.rules", "70-camo-usb-studio.rules"] {
            let text = try String(contentsOfFile: UdevBench.packageRoot + "/udev/" + rules, encoding: .utf8)
                .replacingOccurrences(of: "@LIBEXEC@/camo-usb-link", with: link)
            try FileManager.default.createDirectory(atPath: "/etc/udev/rules.d", withIntermediateDirectories: true)
            try text.write(toFile: "/etc/udev/rules.d/" + rules, atomically: true, encoding: .utf8)
        }
        try UdevBench.startUdevd()
        defer { cleanup() }
        if dummyHCD { try loadDummyHCD() }
        try body()
    }

    static func loadDummyHCD() throws {
        let probe = try UdevBench.sh("modprobe dummy_hcd 2>&1")
        try #require(probe.status == 0, "modprobe dummy_hcd: \(probe.output)")
        try #require(Hardware.wait(seconds: 10) { FileManager.default.fileExists(atPath: "/sys/class/udc/dummy_udc.0") }, "no dummy_udc.0")
    }

    static func cleanup() {
        _ = try? UdevBench.sh("ip netns del \(namespace) 2>/dev/null; ip link del vstudio 2>/dev/null")
        if let agent = try? Hardware.binary("camo-agent") { _ = try? runCommand(agent, ["usb", "down"]) }
        UdevBench.stopUdevd()
        _ = try? UdevBench.sh("rm -f /etc/udev/rules.d/70-camo-usb-gadget.rules /etc/udev/rules.d/70-camo-usb-studio.rules; rmmod dummy_hcd 2>/dev/null")
    }

    /// `camo-agent usb status --json`.
    static func status() throws -> [String: Any] {
        let result = try runCommand(try Hardware.binary("camo-agent"), ["usb", "status", "--json"])
        try #require(result.status == 0, "usb status: \(result)")
        return try parseJSON(result.stdout) as? [String: Any] ?? [:]
    }

    /// The interface (in this namespace) that has `address`: the studio's end, once udev named and configured it.
    static func waitForStudioEnd(address: String) throws -> String {
        var found: String?
        _ = Hardware.wait(seconds: 15, every: 0.1) {
            found = links().first { addresses(of: $0).contains(address) }
            return found != nil
        }
        return try #require(found, "no interface got \(address) from our udev rule: \(links()); \((try? UdevBench.sh("ip -br addr; journalctl -n 0 2>/dev/null"))?.output ?? "")")
    }

    static func links() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/net")) ?? []).sorted()
    }

    static func addresses(of interface: String) -> [String] {
        let out = (try? UdevBench.sh("ip -4 -br addr show dev \(interface) 2>/dev/null"))?.output ?? ""
        return out.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter { $0.contains("/") }.map { String($0.split(separator: "/")[0]) }
    }

    /// A lexicographic listing of the gadget directory (names and link targets), to compare before and after.
    static func tree() throws -> String {
        try UdevBench.sh("cd \(gadget) && find . -printf '%p %y %l\\n' | sort").output
    }

    /// Moves the gadget's end into the agent's namespace (configured again there: a move drops addresses) and
    /// adds a veth pair standing for any other network.
    static func isolateAgent() throws {
        let link = UdevBench.packageRoot + "/udev/camo-usb-link"
        let script = """
            set -e
            ip netns add \(namespace)
            ip -n \(namespace) link set lo up
            ip link set camousb0 netns \(namespace)
            ip netns exec \(namespace) \(link) configure camousb0
            ip link add vstudio type veth peer name vagent netns \(namespace)
            ip addr add \(vethStudio)/24 dev vstudio; ip link set vstudio up
            ip -n \(namespace) addr add \(vethAgent)/24 dev vagent; ip -n \(namespace) link set vagent up
            """
        let result = try UdevBench.sh("(\(script)) 2>&1")
        try #require(result.status == 0, "setting up the namespaces failed:\n\(result.output)")
    }

    static func unbind() throws {
        let result = try UdevBench.sh("echo '' > \(gadget)/UDC 2>&1")
        try #require(result.status == 0, "unbinding the UDC: \(result.output)")
    }

    static func bind() throws {
        let result = try UdevBench.sh("echo dummy_udc.0 > \(gadget)/UDC 2>&1")
        try #require(result.status == 0, "binding the UDC: \(result.output)")
    }

    /// The start times of the agent's sessions over USB (`camo-agent status --json`, run in its namespace).
    static func usbSessions(_ agent: HardwareAgent) throws -> [Date] {
        let process = Process()
        let out = Pipe()
        try Hardware.prepare(process, binary: Hardware.binary("camo-agent"), arguments: ["status", "--json", "--state-dir", agent.stateDir], netns: namespace)
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let object = try parseJSON(String(decoding: data, as: UTF8.self)) as? [String: Any] ?? [:]
        let connections = object["connections"] as? [[String: Any]] ?? []
        let formatter = ISO8601DateFormatter()
        return connections.filter { ($0["link"] as? String ?? "").hasPrefix("usb") }.compactMap { ($0["since"] as? String).flatMap(formatter.date) }
    }
}
