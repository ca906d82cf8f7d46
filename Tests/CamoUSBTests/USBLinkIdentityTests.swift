import CamoUSB
import Foundation
import Testing

/// A small seeded generator, so the random machine ids are the same on every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

private func randomMachineId(_ generator: inout SplitMix64) -> String {
    (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
}

/// The four numbers of a dotted IPv4 address.
private func octets(_ address: String) -> [Int] {
    address.split(separator: ".", omittingEmptySubsequences: false).compactMap { Int($0) }
}

@Suite("USBLinkIdentity")
struct USBLinkIdentityTests {
    let machineId = "4c4c4544004d3510804bb4c04f4d3732"

    @Test("the same machine id gives the same identity; whitespace around it does not matter")
    func deterministic() {
        let one = USBLinkIdentity(machineId: machineId, version: "0.4.0")
        let two = USBLinkIdentity(machineId: machineId, version: "0.4.0")
        let withNewline = USBLinkIdentity(machineId: "  " + machineId + "\n", version: "0.4.0")
        #expect(one == two)
        #expect(one == withNewline)
        #expect(one.agentIPv4 == two.agentIPv4)
    }

    @Test("another machine id gives another identity")
    func differentMachines() {
        let one = USBLinkIdentity(machineId: machineId, version: "0.4.0")
        let other = USBLinkIdentity(machineId: "4c4c4544004d3510804bb4c04f4d3733", version: "0.4.0")
        #expect(one.serialNumber != other.serialNumber)
        #expect(one.agentMAC != other.agentMAC)
        #expect(one.studioMAC != other.studioMAC)
        // The version does not change the addresses or the serial.
        let newer = USBLinkIdentity(machineId: machineId, version: "1.2.0")
        #expect(newer.agentMAC == one.agentMAC)
        #expect(newer.serialNumber == one.serialNumber)
        #expect(newer.deviceRelease != one.deviceRelease)
    }

    @Test("the fixed parts: vendor, product, strings")
    func fixedParts() {
        let identity = USBLinkIdentity(machineId: machineId, version: "0.4.0")
        #expect(identity.vendorId == 0x1d6b)
        #expect(identity.productId == 0x0104)
        #expect(identity.manufacturer == "camo-agent")
        #expect(identity.product == "Camo Agent USB link")
        #expect(USBLinkIdentity.productName == "Camo Agent USB link")
        #expect(USBLinkIdentity.macPrefix == [0x02, 0x63, 0x61])
    }

    @Test("MACs: prefix 02:63:61, locally administered, unicast; the two ends share five bytes")
    func macs() {
        let identity = USBLinkIdentity(machineId: machineId, version: "0.4.0")
        for mac in [identity.agentMAC, identity.studioMAC] {
            #expect(mac.count == 6)
            #expect(Array(mac.prefix(3)) == [0x02, 0x63, 0x61])
            #expect(mac[0] & 0x02 == 0x02, "locally administered")
            #expect(mac[0] & 0x01 == 0, "unicast")
        }
        #expect(Array(identity.agentMAC.prefix(5)) == Array(identity.studioMAC.prefix(5)))
        #expect(identity.agentMAC[5] % 4 == 1)
        #expect(identity.studioMAC[5] == identity.agentMAC[5] + 1)
    }

    @Test("IPv4: 169.254.X.(4k+1) for the agent and .(4k+2) for the studio, X in 1...254")
    func ipv4() throws {
        let identity = USBLinkIdentity(machineId: machineId, version: "0.4.0")
        let agent = octets(identity.agentIPv4), studio = octets(identity.studioIPv4)
        try #require(agent.count == 4 && studio.count == 4)
        #expect(agent[0] == 169 && agent[1] == 254)
        #expect(studio[0] == 169 && studio[1] == 254)
        #expect((1...254).contains(agent[2]))
        #expect(agent[2] == studio[2])
        #expect(agent[3] % 4 == 1)
        #expect(studio[3] == agent[3] + 1)
        #expect(identity.agentIPv4 == "169.254.\(identity.agentMAC[4]).\(identity.agentMAC[5])")
        #expect(identity.agentIPv4 == USBLinkIdentity.ipv4(forMAC: identity.agentMAC))
        #expect(identity.studioIPv4 == USBLinkIdentity.ipv4(forMAC: identity.studioMAC))
    }

    @Test("10 000 random machine ids: the two ends never collide, never a .0 or .255 address")
    func randomMachineIds() throws {
        var generator = SplitMix64(state: 0x63616d6f)
        var agentMACs = Set<[UInt8]>()
        var thirdBytes = Set<Int>(), hostBytes = Set<Int>()
        for _ in 0..<10_000 {
            let id = randomMachineId(&generator)
            let identity = USBLinkIdentity(machineId: id, version: "0.4.0")
            let agent = octets(identity.agentIPv4), studio = octets(identity.studioIPv4)
            guard agent.count == 4, studio.count == 4, identity.agentIPv4 != identity.studioIPv4,
                  identity.agentMAC != identity.studioMAC,
                  agent[0] == 169, agent[1] == 254, studio[0] == 169, studio[1] == 254,
                  (1...254).contains(agent[2]), agent[2] == studio[2],
                  (1...254).contains(agent[3]), (1...254).contains(studio[3]),
                  agent[3] % 4 == 1, studio[3] == agent[3] + 1,
                  Array(identity.agentMAC.prefix(5)) == Array(identity.studioMAC.prefix(5)),
                  Array(identity.agentMAC.prefix(3)) == USBLinkIdentity.macPrefix,
                  identity.serialNumber.count == 16, !identity.serialNumber.contains(id)
            else {
                Issue.record("machine id \(id): agent \(identity.agentIPv4) studio \(identity.studioIPv4)")
                return
            }
            agentMACs.insert(identity.agentMAC)
            thirdBytes.insert(agent[2])
            hostBytes.insert(agent[3])
        }
        // About 4 million possible MACs: a handful of the 10 000 may share one, not more.
        #expect(agentMACs.count > 9_900)
        // The whole range is used.
        #expect(thirdBytes == Set(1...254))
        #expect(hostBytes == Set(stride(from: 1, through: 249, by: 4)))
    }

    @Test("ipv4(forMAC:) refuses MACs that are not ours and bytes 0 and 255")
    func ipv4ForMAC() {
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0xff, 1, 1]) == "169.254.1.1")
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0x00, 254, 254]) == "169.254.254.254")
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x62, 0, 1, 1]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x00, 0x63, 0x61, 0, 1, 1]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x12, 0x34, 0x56, 0, 1, 1]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0, 0, 1]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0, 255, 1]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0, 1, 0]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0, 1, 255]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0, 1]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: [0x02, 0x63, 0x61, 0, 1, 1, 1]) == nil)
        #expect(USBLinkIdentity.ipv4(forMAC: []) == nil)
    }

    @Test("formatMAC and parseMAC round trip")
    func macText() {
        #expect(USBLinkIdentity.formatMAC([0x02, 0x63, 0x61, 0x0a, 0xb0, 0xff]) == "02:63:61:0a:b0:ff")
        #expect(USBLinkIdentity.parseMAC("02:63:61:0a:b0:ff") == [0x02, 0x63, 0x61, 0x0a, 0xb0, 0xff])
        #expect(USBLinkIdentity.parseMAC("02:63:61:0A:B0:FF") == [0x02, 0x63, 0x61, 0x0a, 0xb0, 0xff])
        // As read from sysfs, with a newline.
        #expect(USBLinkIdentity.parseMAC("02:63:61:0a:b0:ff\n") == [0x02, 0x63, 0x61, 0x0a, 0xb0, 0xff])
        var generator = SplitMix64(state: 42)
        for _ in 0..<1_000 {
            let mac = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(USBLinkIdentity.parseMAC(USBLinkIdentity.formatMAC(mac)) == mac)
        }
    }

    @Test("parseMAC refuses bad text", arguments: [
        "", ":::::", "02:63:61:0a:b0", "02:63:61:0a:b0:ff:00", "02-63-61-0a-b0-ff", "2:63:61:0a:b0:ff",
        "002:63:61:0a:b0:ff", "02:63:61:0a:b0:fg", "02:63:61:0a:b0:", "02::61:0a:b0:ff", "02:63:61:0a:b0:f f",
        "02:63:61:0a:b0:ff:", "026361:0a:b0:ff", "zz:zz:zz:zz:zz:zz", "02:63:61:0a:b0:ff junk",
    ])
    func parseMACRefuses(_ text: String) {
        #expect(USBLinkIdentity.parseMAC(text) == nil)
    }

    @Test("parseMAC refuses signed bytes", arguments: ["+2:63:61:0a:b0:ff", "02:63:61:0a:b0:-0", "02:+3:61:0a:b0:ff"])
    func parseMACRefusesSigns(_ text: String) {
        // Once a bug (USBLinkIdentity.swift:66): each part is checked for two characters and then parsed with
        // UInt8(_:radix:), which accepts a leading "+" (and "-0"), so "+2:63:61:0a:b0:ff" parses as
        // 02:63:61:0a:b0:ff instead of being refused.
        #expect(USBLinkIdentity.parseMAC(text) == nil)
    }

    @Test("the serial number is 16 lowercase hex digits and does not show the machine id")
    func serialNumber() {
        let identity = USBLinkIdentity(machineId: machineId, version: "0.4.0")
        #expect(identity.serialNumber.count == 16)
        #expect(identity.serialNumber.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(!identity.serialNumber.contains(machineId))
        #expect(!machineId.contains(identity.serialNumber))
        #expect(!machineId.hasPrefix(identity.serialNumber))
        // A short machine id (a host name) is not shown either.
        let short = USBLinkIdentity(machineId: "pi", version: "0.4.0")
        #expect(short.serialNumber.count == 16)
        #expect(!short.serialNumber.contains("pi"))
    }

    @Test("deviceRelease is the major and minor version in BCD", arguments: [
        ("0.4.0", 0x0004), ("12.34", 0x1234), ("1.2.3", 0x0102), ("9.9", 0x0909), ("1", 0x0100), ("", 0x0000),
        ("100.200", 0x9999), ("10.0.1", 0x1000), ("0.4.0-beta", 0x0004),
    ] as [(String, UInt16)])
    func deviceRelease(_ version: String, _ expected: UInt16) {
        #expect(USBLinkIdentity(machineId: machineId, version: version).deviceRelease == expected)
    }

    @Test("deviceRelease keeps each number in its place", arguments: [
        ("1.2-rc1", 0x0102), ("v1.2", 0x0102), ("1.x.3", 0x0100),
    ] as [(String, UInt16)])
    func deviceReleaseWithText(_ version: String, _ expected: UInt16) {
        // Once a bug (USBLinkIdentity.swift:43): `split(separator: ".").compactMap { Int($0) }` drops the parts that are
        // not plain numbers and shifts the rest: "1.2-rc1" gives 0x0100 (minor lost), "v1.2" gives 0x0200 (the
        // minor becomes the major), "1.x.3" gives 0x0103.
        #expect(USBLinkIdentity(machineId: machineId, version: version).deviceRelease == expected)
    }

    @Test("a negative number in the version does not crash")
    func negativeVersion() async {
        // Once a bug (USBLinkIdentity.swift:44-45): "-1.0" parses to major -1; min(-1, 99) keeps it, (-1 % 10) << 8 is
        // negative, and UInt16(negative) traps, so the initializer crashes the process.
        await #expect(processExitsWith: .success) {
            _ = USBLinkIdentity(machineId: "4c4c4544004d3510804bb4c04f4d3732", version: "-1.0")
        }
    }
}
