import CamoUSB
import Foundation
import Testing

/// udev/camo-usb-link (run by both udev rules) applies the same address rule as USBLinkIdentity.
@Suite("camo-usb-link agrees with USBLinkIdentity")
struct LinkScriptTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("udev/camo-usb-link").path

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [Self.script] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("the address and the studio-side name of both ends, for 40 machine ids")
    func sameAddresses() throws {
        for n in 0..<40 {
            let identity = USBLinkIdentity(machineId: "machine-\(n)-\(n * 7919)", version: "0.5.0")
            for (mac, expected) in [(identity.agentMAC, identity.agentIPv4), (identity.studioMAC, identity.studioIPv4)] {
                let text = USBLinkIdentity.formatMAC(mac)
                let address = try run(["address", text])
                #expect(address.status == 0 && address.output == expected, "\(text): script \(address), Swift \(expected)")
                let name = try run(["name", text])
                let hex = mac.suffix(3).map { String(format: "%02x", $0) }.joined()
                #expect(name.status == 0 && name.output == "camo" + hex && name.output.count <= 15, "\(text): \(name)")
            }
        }
    }

    @Test("MACs that are not the link's are refused with the reason, and so is a missing interface")
    func refusals() throws {
        for mac in ["02:63:62:3a:11:05", "02:63:61:3a:00:05", "02:63:61:3a:11:ff", "02:63:61:3a:11", "zz:63:61:3a:11:05", ""] {
            let result = try run(["address", mac])
            #expect(result.status != 0 && result.output.contains("not a camo USB link MAC"), "\(mac): \(result)")
            #expect(USBLinkIdentity.parseMAC(mac).flatMap(USBLinkIdentity.ipv4(forMAC:)) == nil, "Swift must refuse \(mac) too")
        }
        let missing = try run(["configure", "camo-no-such-if"])
        #expect(missing.status != 0 && missing.output.contains("no network interface camo-no-such-if"), "\(missing)")
        let usage = try run([])
        #expect(usage.status == 2 && usage.output.contains("configure IFACE"), "\(usage)")
    }
}
