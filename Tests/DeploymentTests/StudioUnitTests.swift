import Foundation
import Testing

/// The studio's user unit (camo-studio-camera@.service) and desktop entry in udev/, checked with systemd's and
/// desktop-file-utils' own tools.
@Suite("studio user unit and desktop entry")
struct StudioUnitTests {
    static let unit = "camo-studio-camera@.service"
    static let desktopEntry = "camo-studio-camera.desktop"

    /// Whether `name` is installed where ``Deployment/tool(_:package:)`` looks (desktop-file-utils is optional:
    /// the key checks run without it).
    static func installed(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        return folders.contains { FileManager.default.isExecutableFile(atPath: $0 + "/" + name) }
    }

    @Test("systemd-analyze --user verify accepts an instance of the camera unit without a warning")
    func verifyAcceptsTheUserUnit() throws {
        let analyze = try Deployment.tool("systemd-analyze", package: "systemd")
        let folder = try Deployment.scratch("studio-unit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let stub = folder + "/bin/camo-studio"
        try Deployment.writeStub(at: stub)
        let text = try Deployment.read(Deployment.udevFile(Self.unit))
        #expect(text.contains("ExecStart=/usr/local/bin/camo-studio "), "the unit should start /usr/local/bin/camo-studio")
        // An instance, as `systemctl --user enable --now camo-studio-camera@desk` makes it.
        let instance = folder + "/camo-studio-camera@desk.service"
        try text.replacingOccurrences(of: "/usr/local/bin/camo-studio ", with: stub + " ")
            .write(toFile: instance, atomically: true, encoding: .utf8)
        // A user manager needs a runtime directory of its own; the test gives it a scratch one.
        let runtime = folder + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let result = try Deployment.run("/usr/bin/env", ["XDG_RUNTIME_DIR=" + runtime, analyze, "--user", "verify", instance])
        #expect(result.status == 0, "systemd-analyze --user verify failed:\n\(result.output)")
        let aboutUs = result.output.split(separator: "\n").filter { $0.contains("camo-studio") }
        #expect(aboutUs.isEmpty, "systemd-analyze verify warns about the unit:\n\(aboutUs.joined(separator: "\n"))")
    }

    @Test("the unit runs camo-studio camera --agent INSTANCE, restarts on failure, and is wanted by the user's session")
    func theUnitSaysWhatItRuns() throws {
        let service = try Deployment.read(Deployment.udevFile(Self.unit))
        #expect(Deployment.values(of: "ExecStart", in: service) == ["/usr/local/bin/camo-studio camera --agent %i"])
        #expect(Deployment.values(of: "Restart", in: service) == ["on-failure"])
        #expect(Deployment.values(of: "RestartPreventExitStatus", in: service) == ["2"], "a usage error is not retried")
        // A user unit: default.target (the user's session), never multi-user.target; and no User=, which a
        // user manager cannot switch to.
        #expect(Deployment.values(of: "WantedBy", in: service) == ["default.target"])
        #expect(Deployment.values(of: "User", in: service).isEmpty)
        let burst = try #require(Deployment.values(of: "StartLimitBurst", in: service).first.flatMap { Int($0) })
        let interval = try #require(Deployment.values(of: "StartLimitIntervalSec", in: service).first.flatMap { Int($0) })
        let delay = try #require(Deployment.values(of: "RestartSec", in: service).first.flatMap { Int($0.dropLast()) })
        #expect(burst * delay < interval, "a camera that keeps failing must reach the start limit and stop")
    }

    @Test("the desktop entry runs camo-studio from where the unit does, in a terminal")
    func desktopEntryKeys() throws {
        let entry = try Deployment.read(Deployment.udevFile(Self.desktopEntry))
        #expect(entry.hasPrefix("[Desktop Entry]\n"))
        #expect(Deployment.values(of: "Type", in: entry) == ["Application"])
        #expect(Deployment.values(of: "Terminal", in: entry) == ["true"], "camera prints its figures and stops on Ctrl-C")
        let execs = Deployment.values(of: "Exec", in: entry)
        #expect(execs == ["/usr/local/bin/camo-studio camera", "/usr/local/bin/camo-studio status"])
        #expect(Deployment.values(of: "Name", in: entry).count == 2, "the entry and its status action are named")
    }

    @Test("desktop-file-validate accepts the desktop entry",
          .enabled(if: StudioUnitTests.installed("desktop-file-validate"), "desktop-file-validate is not installed (apt-get install desktop-file-utils)"))
    func desktopFileValidateAccepts() throws {
        let validate = try Deployment.tool("desktop-file-validate", package: "desktop-file-utils")
        let result = try Deployment.run(validate, [Deployment.udevFile(Self.desktopEntry)])
        #expect(result.status == 0 && result.output.isEmpty, "desktop-file-validate:\n\(result.output)")
    }
}
