import Foundation
import Testing

/// scripts/run-agent's discovery step on a machine where neither the D-Bus system bus nor avahi-daemon runs: it
/// starts both and says so. Run in a network namespace of its own (only `lo`, so nothing reaches a real network)
/// and a PID namespace (everything it starts ends with it), with a private `/run`, so the test's avahi-daemon and this machine's bus are neither seen nor touched; the
/// install and build steps are left out and the agent is a stub that prints its arguments.
@Suite("scripts/run-agent starts avahi-daemon where none runs")
struct RunAgentScriptTests {
    @Test func startsTheBusAndTheDaemonAndSaysSo() throws {
        guard getuid() == 0 else {
            print("RunAgentScriptTests: skipped: unshare needs root (CI runs as root)")
            return
        }
        let unshare = try Deployment.tool("unshare", package: "util-linux")
        _ = try Deployment.tool("avahi-daemon", package: "avahi-daemon")
        _ = try Deployment.tool("dbus-daemon", package: "dbus")
        let scratch = NSTemporaryDirectory() + "camo-run-agent-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let original = try String(contentsOfFile: Deployment.packageRoot + "/scripts/run-agent", encoding: .utf8)
        var script = original
        for (line, replacement) in [
            ("scripts/install-deps --run", ": # install: not in this test"),
            ("swift build -c release --product camo-agent", ": # build: not in this test"),
            ("binary=\"$(swift build -c release --show-bin-path)/camo-agent\"", "binary=\"\(scratch)/camo-agent\""),
        ] {
            #expect(script.contains(line + "\n"), "scripts/run-agent has the line `\(line)`")
            script = script.replacingOccurrences(of: line + "\n", with: replacement + "\n")
        }
        try script.write(toFile: scratch + "/run-agent", atomically: true, encoding: .utf8)
        try "#!/bin/sh\necho \"agent: $*\"\n".write(toFile: scratch + "/camo-agent", atomically: true, encoding: .utf8)
        chmod(scratch + "/camo-agent", 0o755)
        let inside = """
            set -u
            mount -t tmpfs tmpfs /run
            ip link set lo up
            cd '\(Deployment.packageRoot)'
            bash '\(scratch)/run-agent' --port 0
            avahi-daemon --check && echo "check: avahi-daemon runs"
            avahi-daemon --kill >/dev/null 2>&1
            kill "$(cat /run/dbus/pid 2>/dev/null)" 2>/dev/null
            true
            """
        let result = try Deployment.run(unshare, ["--net", "--mount", "--pid", "--fork", "--mount-proc", "/bin/bash", "-c", inside])
        #expect(result.output.contains("run-agent: the D-Bus system bus was not running; started it"), "\(result.output)")
        #expect(result.output.contains("run-agent: avahi-daemon was not running; started it, so studios on this network can find the agent"), "\(result.output)")
        #expect(result.output.contains("agent: run --port 0"), "the agent runs after it, with the arguments: \(result.output)")
        #expect(result.output.contains("check: avahi-daemon runs"), "\(result.output)")
    }
}
