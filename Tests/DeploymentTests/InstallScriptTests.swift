import Foundation
import Testing

/// udev/install.sh in staging mode (--root): no users, no reloads, only files.
@Suite("install.sh --root")
struct InstallScriptTests {
    private let bash = "/bin/bash"
    private let script = Deployment.udevFile("install.sh")

    private let staged = [
        "/usr/local/bin/camo-agent": 0o755,
        "/etc/udev/rules.d/60-camo-agent.rules": 0o644,
        "/etc/systemd/system/camo-agent.service": 0o644,
        "/etc/systemd/system/camo-agent-rescan@.service": 0o644,
        "/etc/systemd/system/camo-agent-usb.service": 0o644,
        "/etc/udev/rules.d/70-camo-usb-gadget.rules": 0o644,
        "/usr/local/lib/camo-agent/camo-usb-link": 0o755,
        "/etc/camo-agent/config.json.example": 0o644,
    ]
    private let wantsLink = "/etc/systemd/system/multi-user.target.wants/camo-agent.service"
    private let usbWantsLink = "/etc/systemd/system/multi-user.target.wants/camo-agent-usb.service"

    @Test("stages the binary, the rules and the units with the right modes, and enables the service")
    func stagesEverything() throws {
        let work = try Deployment.scratch("install")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let stub = work + "/build/camo-agent"
        try Deployment.writeStub(at: stub)
        let root = work + "/root"

        let result = try Deployment.run(bash, [script, "--root", root, "--binary", stub])
        #expect(result.status == 0, "install.sh failed:\n\(result.output)")
        for (path, mode) in staged {
            #expect(FileManager.default.fileExists(atPath: root + path), "\(path) missing; output:\n\(result.output)")
            #expect(try Deployment.mode(root + path) == mode, "\(path) should have mode \(String(mode, radix: 8))")
            #expect(result.output.contains("installed \(root)\(path)"), "install.sh should say it installed \(path)")
        }
        #expect(FileManager.default.contentsEqual(atPath: stub, andPath: root + "/usr/local/bin/camo-agent"))
        #expect(try Deployment.read(root + "/etc/udev/rules.d/60-camo-agent.rules")
            == Deployment.read(Deployment.udevFile("60-camo-agent.rules")))
        let service = try Deployment.read(root + "/etc/systemd/system/camo-agent.service")
        #expect(Deployment.values(of: "ExecStart", in: service) == ["/usr/local/bin/camo-agent run --state-dir /var/lib/camo-agent"])
        let rescan = try Deployment.read(root + "/etc/systemd/system/camo-agent-rescan@.service")
        #expect(Deployment.values(of: "ExecStart", in: rescan) == ["/usr/local/bin/camo-agent rescan --runtime-dir /run/camo-agent"])
        #expect(try Deployment.read(root + "/etc/camo-agent/config.json.example") == Deployment.read(Deployment.udevFile("config.json.example")))
        #expect(!FileManager.default.fileExists(atPath: root + "/etc/camo-agent/config.json"), "the settings stay the defaults until the admin copies the example")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + wantsLink) == "/etc/systemd/system/camo-agent.service")
        let usb = try Deployment.read(root + "/etc/systemd/system/camo-agent-usb.service")
        #expect(Deployment.values(of: "ExecStart", in: usb) == ["/usr/local/bin/camo-agent usb up"])
        #expect(Deployment.values(of: "ExecStop", in: usb) == ["/usr/local/bin/camo-agent usb down"])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + usbWantsLink) == "/etc/systemd/system/camo-agent-usb.service")
        let gadgetRules = try Deployment.read(root + "/etc/udev/rules.d/70-camo-usb-gadget.rules")
        #expect(gadgetRules.contains("RUN+=\"/usr/local/lib/camo-agent/camo-usb-link configure $name\"") && !gadgetRules.contains("@LIBEXEC@"),
                "the rule must run the installed camo-usb-link:\n\(gadgetRules)")
        #expect(!FileManager.default.fileExists(atPath: root + "/etc/udev/rules.d/70-camo-usb-studio.rules"), "the studio rule is for studios (--studio)")
    }

    @Test("--studio stages the studio-side USB rule, camo-usb-link, camo-studio, its user unit and desktop entry, with the paths filled in; no agent, no system unit")
    func stagesTheStudioRule() throws {
        let work = try Deployment.scratch("install-studio")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let root = work + "/root"
        let stub = work + "/camo-studio"
        try Deployment.writeStub(at: stub)
        let result = try Deployment.run(bash, [script, "--studio", "--studio-binary", stub, "--root", root, "--prefix", "/opt/camo"])
        #expect(result.status == 0, "install.sh --studio failed:\n\(result.output)")
        #expect(try Deployment.mode(root + "/opt/camo/lib/camo-agent/camo-usb-link") == 0o755)
        let rules = try Deployment.read(root + "/etc/udev/rules.d/70-camo-usb-studio.rules")
        #expect(rules.contains("PROGRAM=\"/opt/camo/lib/camo-agent/camo-usb-link name $attr{address}\"") && !rules.contains("@LIBEXEC@"), "\(rules)")
        #expect(try Deployment.mode(root + "/opt/camo/bin/camo-studio") == 0o755)
        let unit = try Deployment.read(root + "/etc/systemd/user/camo-studio-camera@.service")
        #expect(unit.contains("ExecStart=/opt/camo/bin/camo-studio camera --agent %i") && !unit.contains("/usr/local"), "\(unit)")
        let desktop = try Deployment.read(root + "/opt/camo/share/applications/camo-studio-camera.desktop")
        #expect(desktop.contains("Exec=/opt/camo/bin/camo-studio camera") && desktop.contains("Exec=/opt/camo/bin/camo-studio status")
                && !desktop.contains("/usr/local"), "\(desktop)")
        #expect(result.output.contains("systemctl --user enable --now camo-studio-camera@AGENT"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: root + "/opt/camo/bin/camo-agent"), "a studio gets no agent")
        #expect(!FileManager.default.fileExists(atPath: root + "/etc/systemd/system"), "a studio gets no system units")
        let uninstall = try Deployment.run(bash, [script, "--uninstall", "--root", root, "--prefix", "/opt/camo"])
        #expect(uninstall.status == 0 && !FileManager.default.fileExists(atPath: root + "/etc/udev/rules.d/70-camo-usb-studio.rules")
                && !FileManager.default.fileExists(atPath: root + "/opt") && !FileManager.default.fileExists(atPath: root + "/etc/systemd"),
                "\(uninstall.output)")
    }

    @Test("--studio without a built camo-studio still installs the unit and entry, and says where the binary belongs")
    func studioWithoutBinary() throws {
        let work = try Deployment.scratch("install-studio-nobin")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let root = work + "/root"
        let result = try Deployment.run(bash, [script, "--studio", "--studio-binary", work + "/missing", "--root", root])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("no camo-studio executable at \(work)/missing") && result.output.contains("/usr/local/bin/camo-studio"), "\(result.output)")
        #expect(FileManager.default.fileExists(atPath: root + "/etc/systemd/user/camo-studio-camera@.service"))
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/local/bin/camo-studio"))
    }

    @Test("--prefix moves the binary and both units follow it; --no-enable leaves the service disabled")
    func prefixAndNoEnable() throws {
        let work = try Deployment.scratch("prefix")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let stub = work + "/camo-agent"
        try Deployment.writeStub(at: stub)
        let root = work + "/root"

        let result = try Deployment.run(bash, [script, "--root", root, "--binary", stub, "--prefix", "/opt/camo", "--no-enable"])
        #expect(result.status == 0, "install.sh failed:\n\(result.output)")
        #expect(try Deployment.mode(root + "/opt/camo/bin/camo-agent") == 0o755)
        #expect(!FileManager.default.fileExists(atPath: root + "/usr/local/bin/camo-agent"))
        for unit in ["camo-agent.service", "camo-agent-rescan@.service"] {
            let text = try Deployment.read(root + "/etc/systemd/system/" + unit)
            let exec = Deployment.values(of: "ExecStart", in: text)
            #expect(exec.count == 1 && exec[0].hasPrefix("/opt/camo/bin/camo-agent "), "\(unit): ExecStart=\(exec)")
        }
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: root + wantsLink)) == nil)
    }

    @Test("--uninstall --root removes what install put there and nothing else")
    func uninstallRemovesIt() throws {
        let work = try Deployment.scratch("uninstall")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let stub = work + "/camo-agent"
        try Deployment.writeStub(at: stub)
        let root = work + "/root"
        try FileManager.default.createDirectory(atPath: root + "/etc", withIntermediateDirectories: true)
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: root + "/etc/unrelated"))

        let install = try Deployment.run(bash, [script, "--root", root, "--binary", stub])
        try #require(install.status == 0, "install.sh failed:\n\(install.output)")
        let uninstall = try Deployment.run(bash, [script, "--uninstall", "--root", root])
        #expect(uninstall.status == 0, "install.sh --uninstall failed:\n\(uninstall.output)")
        for path in Array(staged.keys) + [wantsLink, usbWantsLink] {
            #expect(!FileManager.default.fileExists(atPath: root + path), "\(path) is still there")
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: root + path)) == nil, "\(path) link is still there")
            #expect(uninstall.output.contains("removed \(root)\(path)"), "--uninstall should say it removed \(path)")
        }
        #expect(try Deployment.read(root + "/etc/unrelated") == "keep me\n")
        #expect(!FileManager.default.fileExists(atPath: root + "/usr"), "empty staging folders should go too")
        #expect(!FileManager.default.fileExists(atPath: root + "/etc/camo-agent"), "an empty /etc/camo-agent goes too")

        let again = try Deployment.run(bash, [script, "--uninstall", "--root", root])
        #expect(again.status == 0, "a second --uninstall should be harmless:\n\(again.output)")
    }

    @Test("a missing binary or a bad option is a clear error")
    func clearErrors() throws {
        let work = try Deployment.scratch("errors")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let missing = try Deployment.run(bash, [script, "--root", work + "/root", "--binary", work + "/nope"])
        #expect(missing.status != 0)
        #expect(missing.output.contains("no camo-agent executable at \(work)/nope"), "output:\n\(missing.output)")
        #expect(missing.output.contains("swift build -c release"), "output:\n\(missing.output)")
        #expect(!FileManager.default.fileExists(atPath: work + "/root/etc"), "nothing may be staged after an error")

        let bad = try Deployment.run(bash, [script, "--root", work + "/root", "--frobnicate"])
        #expect(bad.status != 0)
        #expect(bad.output.contains("unknown option --frobnicate"), "output:\n\(bad.output)")
    }

    @Test("--uninstall keeps the admin's config.json")
    func uninstallKeepsTheConfiguration() throws {
        let work = try Deployment.scratch("keep-config")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let stub = work + "/camo-agent"
        try Deployment.writeStub(at: stub)
        let root = work + "/root"
        let install = try Deployment.run(bash, [script, "--root", root, "--binary", stub])
        try #require(install.status == 0, "install.sh failed:\n\(install.output)")
        let config = root + "/etc/camo-agent/config.json"
        try Data("{\"port\": 47900}\n".utf8).write(to: URL(fileURLWithPath: config))
        let uninstall = try Deployment.run(bash, [script, "--uninstall", "--root", root])
        #expect(uninstall.status == 0, "install.sh --uninstall failed:\n\(uninstall.output)")
        #expect(try Deployment.read(config) == "{\"port\": 47900}\n")
        #expect(!FileManager.default.fileExists(atPath: root + "/etc/camo-agent/config.json.example"))
        #expect(uninstall.output.contains("kept \(config)"), "\(uninstall.output)")
        // Installing again leaves it alone too.
        let again = try Deployment.run(bash, [script, "--root", root, "--binary", stub])
        #expect(again.status == 0, "\(again.output)")
        #expect(try Deployment.read(config) == "{\"port\": 47900}\n")
    }
}
