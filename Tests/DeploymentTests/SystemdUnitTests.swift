import Foundation
import Testing

/// The systemd units in udev/, checked with systemd's own tools.
@Suite("systemd units")
struct SystemdUnitTests {
    /// Copies both units into a scratch folder with ExecStart pointing at an executable stub that exists (verify
    /// insists the command is there), keeping everything else as shipped.
    private func stagedUnits() throws -> (folder: String, stub: String) {
        let folder = try Deployment.scratch("units")
        let stub = folder + "/bin/camo-agent"
        try Deployment.writeStub(at: stub)
        for unit in ["camo-agent.service", "camo-agent-rescan@.service", "camo-agent-usb.service"] {
            let text = try Deployment.read(Deployment.udevFile(unit))
            #expect(text.contains("ExecStart=/usr/local/bin/camo-agent "), "\(unit) should start /usr/local/bin/camo-agent")
            try text.replacingOccurrences(of: "/usr/local/bin/camo-agent ", with: stub + " ")
                .write(toFile: folder + "/" + unit, atomically: true, encoding: .utf8)
        }
        return (folder, stub)
    }

    @Test("systemd-analyze verify accepts the units without a warning")
    func verifyAcceptsTheUnits() throws {
        let analyze = try Deployment.tool("systemd-analyze", package: "systemd")
        let (folder, _) = try stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The template is verified through an instance named the way udev names it (the escaped sysfs path).
        let result = try Deployment.run(analyze, [
            "verify", folder + "/camo-agent.service", folder + "/camo-agent-usb.service",
            folder + "/camo-agent-rescan@sys-devices-platform-vivid.0-video4linux-video0.service",
        ])
        #expect(result.status == 0, "systemd-analyze verify failed:\n\(result.output)")
        let aboutUs = result.output.split(separator: "\n").filter { $0.contains("camo-agent") }
        #expect(aboutUs.isEmpty, "systemd-analyze verify warns about our units:\n\(aboutUs.joined(separator: "\n"))")
    }

    @Test("the service is sandboxed: systemd-analyze security rates it at most 2.0")
    func theServiceIsSandboxed() throws {
        let analyze = try Deployment.tool("systemd-analyze", package: "systemd")
        let (folder, _) = try stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Deployment.run(analyze, ["security", "--offline=yes", "--no-pager", folder + "/camo-agent.service"])
        #expect(result.status == 0, "systemd-analyze security failed:\n\(result.output)")
        let line = try #require(
            result.output.split(separator: "\n").first { $0.contains("Overall exposure level for camo-agent.service") },
            "no exposure level in:\n\(result.output)")
        let number = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        let exposure = try #require(number, "cannot read the exposure level from: \(line)")
        #expect(exposure <= 2.0, "exposure \(exposure) > 2.0: the sandbox got weaker\n\(result.output)")
    }

    @Test("the units run the agent as its own user, with its state directory and the device and network access it needs")
    func theUnitsSayWhatTheAgentNeeds() throws {
        let service = try Deployment.read(Deployment.udevFile("camo-agent.service"))
        #expect(Deployment.values(of: "ExecStart", in: service) == ["/usr/local/bin/camo-agent run --state-dir /var/lib/camo-agent"])
        #expect(Deployment.values(of: "User", in: service) == ["camo-agent"])
        #expect(Deployment.values(of: "StateDirectory", in: service) == ["camo-agent"])
        #expect(Deployment.values(of: "Restart", in: service) == ["on-failure"])
        #expect(Deployment.values(of: "DevicePolicy", in: service) == ["closed"])
        #expect(Set(Deployment.values(of: "DeviceAllow", in: service)) == ["char-video4linux rw", "char-alsa rw"])
        let families = Set(Deployment.values(of: "RestrictAddressFamilies", in: service).flatMap { $0.split(separator: " ").map(String.init) })
        #expect(families == ["AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"])
        #expect(Deployment.values(of: "PrivateDevices", in: service).allSatisfy { $0 == "no" }, "the agent needs /dev/video* and /dev/snd/*")
        #expect(Deployment.values(of: "PrivateNetwork", in: service).allSatisfy { $0 == "no" }, "studios connect over the network")

        let rescan = try Deployment.read(Deployment.udevFile("camo-agent-rescan@.service"))
        // Not the agent's unit, so no $RUNTIME_DIRECTORY: it names the agent's runtime directory itself.
        #expect(Deployment.values(of: "ExecStart", in: rescan) == ["/usr/local/bin/camo-agent rescan --runtime-dir /run/camo-agent"])
        #expect(Deployment.values(of: "Type", in: rescan) == ["oneshot"])
        #expect(Deployment.values(of: "User", in: rescan) == ["camo-agent"], "the control socket is owner-only")
        #expect(Deployment.values(of: "Requisite", in: rescan) == ["camo-agent.service"])

        let rules = try Deployment.read(Deployment.udevFile("60-camo-agent.rules"))
        #expect(rules.contains("ENV{SYSTEMD_WANTS}+=\"camo-agent-rescan@.service\""))
        #expect(rules.contains("TAG+=\"systemd\""))
        #expect(!rules.contains("GROUP="), "the rules must not take nodes away from the video and audio groups")
        #expect(!rules.contains("MODE="), "the rules must not change the nodes' modes")
    }

    @Test("the service is Type=notify with a watchdog, and has its runtime, state and configuration directories")
    func notifyWatchdogAndDirectories() throws {
        let service = try Deployment.read(Deployment.udevFile("camo-agent.service"))
        #expect(Deployment.values(of: "Type", in: service) == ["notify"])
        #expect(Deployment.values(of: "NotifyAccess", in: service) == ["main"], "only the agent itself may say READY=1")
        #expect(Deployment.values(of: "WatchdogSec", in: service) == ["10s"])
        #expect(Deployment.values(of: "Restart", in: service) == ["on-failure"], "a watchdog timeout must restart the agent")
        #expect(Deployment.values(of: "RestartPreventExitStatus", in: service) == ["64"], "a refused configuration is not retried")
        let stop = try #require(Deployment.values(of: "TimeoutStopSec", in: service).first.flatMap { Int($0.dropLast()) },
                                "TimeoutStopSec=<n>s")
        #expect((5...30).contains(stop), "the agent exits within 2 s of SIGTERM: TimeoutStopSec=\(stop)s")
        // The control socket lives in /run/camo-agent; keys and paired studios stay in /var/lib/camo-agent.
        #expect(Deployment.values(of: "RuntimeDirectory", in: service) == ["camo-agent"])
        #expect(Deployment.values(of: "RuntimeDirectoryMode", in: service) == ["0700"], "the control socket is owner-only")
        #expect(Deployment.values(of: "StateDirectory", in: service) == ["camo-agent"])
        #expect(Deployment.values(of: "StateDirectoryMode", in: service) == ["0700"])
        #expect(Deployment.values(of: "ConfigurationDirectory", in: service) == ["camo-agent"])
        #expect(Deployment.values(of: "ExecStart", in: service).allSatisfy { !$0.contains("--runtime-dir") },
                "the agent takes its runtime directory from $RUNTIME_DIRECTORY")
    }

    @Test("the microphone thread may be real-time, and only within limits")
    func realtimeIsAllowedAndBounded() throws {
        let service = try Deployment.read(Deployment.udevFile("camo-agent.service"))
        // MicrophoneSource asks for SCHED_FIFO priority 10 (pthread_setschedparam, i.e. sched_setscheduler).
        #expect(Deployment.values(of: "RestrictRealtime", in: service) == ["no"])
        #expect(Deployment.values(of: "LimitRTPRIO", in: service) == ["10"], "priority 10 and no higher")
        #expect(Deployment.values(of: "LimitRTTIME", in: service) == ["200ms"], "a runaway real-time thread must be stopped")
        let filters = Deployment.values(of: "SystemCallFilter", in: service)
        let resources = try #require(filters.firstIndex(of: "~@privileged @resources"), "\(filters)")
        let allowed = try #require(filters.firstIndex(of: "sched_setscheduler"), "sched_setscheduler must be allowed again: \(filters)")
        #expect(allowed > resources, "the allowance must come after @resources is taken away: \(filters)")
        #expect(filters.count == 3, "nothing else of @resources comes back: \(filters)")
        #expect(Deployment.values(of: "CapabilityBoundingSet", in: service) == [""], "no CAP_SYS_NICE: the rlimit is the permission")

        // systemd agrees: the only @resources call allowed is sched_setscheduler.
        let analyze = try Deployment.tool("systemd-analyze", package: "systemd")
        let (folder, _) = try stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Deployment.run(analyze, ["security", "--offline=yes", "--no-pager", folder + "/camo-agent.service"])
        let line = try #require(result.output.split(separator: "\n").first { $0.contains("SystemCallFilter=~@resources") }, "\(result.output)")
        #expect(line.contains("sched_setscheduler"), "\(line)")
    }

    @Test("the sample configuration is JSON whose keys are run's options")
    func theSampleConfigurationNamesRealOptions() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Deployment.udevFile("config.json.example")))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "not a JSON object")
        let run = try Deployment.read(Deployment.packageRoot + "/Sources/camo-agent/Run.swift")
        // Run's properties (every option and flag is one), plus --state-dir and --runtime-dir from the option groups.
        let declared = Set(run.matches(of: try Regex(#"\bvar (\w+)\s*[:=]"#)).compactMap { $0.output[1].substring.map(String.init) })
            .union(["stateDir", "runtimeDir"])
        for key in object.keys {
            #expect(declared.contains(key), "config.json.example has \(key), which is not an option of camo-agent run (\(declared.sorted()))")
        }
        #expect(object["port"] as? Int == 47_800)
        #expect((object["pairingPort"] as? Int).map { $0 != 0 } == true, "the example fixes the pairing port, for firewalls")
    }
}
