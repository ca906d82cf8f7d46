import Crypto
import Foundation

/// What the gadget tells the studio computer about itself, and the two ends' MAC and IPv4 link-local addresses,
/// all derived from the machine id so they stay the same across boots.
///
/// The addresses follow one rule both ends can apply to their own interface without talking to each other:
/// the MACs are `02:63:61:H:X:Y` (locally administered, unicast; `63:61` is "ca"), and an interface with such
/// a MAC takes `169.254.X.Y/16`. The agent's end (the gadget's `dev_addr`) has `Y = 4k+1` and the studio's end
/// (`host_addr`) `Y = 4k+2`, with the same `H`, `X` and `k`, so the two ends of one cable never collide.
public struct USBLinkIdentity: Sendable, Equatable {
    /// USB vendor id: the Linux Foundation's, as Linux's own gadgets use.
    public var vendorId: UInt16 = 0x1d6b
    /// USB product id: "Multifunction Composite Gadget".
    public var productId: UInt16 = 0x0104
    /// bcdDevice: the agent's major and minor version in BCD.
    public var deviceRelease: UInt16
    /// The manufacturer string.
    public var manufacturer = "camo-agent"
    /// The product string; the studio's udev rule matches it.
    public var product = USBLinkIdentity.productName
    /// The serial number: 16 hex digits from a hash of the machine id (the id itself is never shown).
    public var serialNumber: String
    /// The MAC of the agent's end (the gadget's `dev_addr`).
    public var agentMAC: [UInt8]
    /// The MAC of the studio's end (the gadget's `host_addr`, which the studio's cdc_ncm driver takes).
    public var studioMAC: [UInt8]

    /// The product string of the gadget.
    public static let productName = "Camo Agent USB link"
    /// The first three bytes of every link MAC.
    public static let macPrefix: [UInt8] = [0x02, 0x63, 0x61]

    /// The identity of the machine with `machineId` (the contents of /etc/machine-id), for agent version `version`.
    public init(machineId: String, version: String) {
        let id = machineId.trimmingCharacters(in: .whitespacesAndNewlines)
        let serial = SHA256.hash(data: Data("camo-agent usb serial \(id)".utf8))
        serialNumber = serial.prefix(8).map { String(format: "%02x", $0) }.joined()
        let link = Array(SHA256.hash(data: Data("camo-agent usb link \(id)".utf8)))
        let h = link[0], x = UInt8(1 + Int(link[1]) % 254), k = UInt8(Int(link[2]) % 63)
        agentMAC = Self.macPrefix + [h, x, 4 * k + 1]
        studioMAC = Self.macPrefix + [h, x, 4 * k + 2]
        // The leading digits of the first two dot-separated parts ("1.2-rc1" and "v1.2" are 1.2), each 0...99.
        let bare = version.hasPrefix("v") || version.hasPrefix("V") ? version.dropFirst() : Substring(version)
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false).prefix(2).map { part in
            min(Int(String(part.prefix { $0.isASCII && $0.isNumber }.prefix(4))) ?? 0, 99)
        }
        let major = parts.first ?? 0, minor = parts.count > 1 ? parts[1] : 0
        deviceRelease = UInt16((major / 10) << 12 | (major % 10) << 8 | (minor / 10) << 4 | (minor % 10))
    }

    /// The IPv4 link-local address of the agent's end.
    public var agentIPv4: String { Self.ipv4(forMAC: agentMAC) ?? "" }
    /// The IPv4 link-local address of the studio's end.
    public var studioIPv4: String { Self.ipv4(forMAC: studioMAC) ?? "" }

    /// The address an interface with `mac` takes: `169.254.X.Y` for a MAC `02:63:61:H:X:Y` with X and Y in
    /// 1...254; nil for any other MAC (not one of ours).
    public static func ipv4(forMAC mac: [UInt8]) -> String? {
        guard mac.count == 6, Array(mac.prefix(3)) == macPrefix, (1...254).contains(mac[4]), (1...254).contains(mac[5]) else {
            return nil
        }
        return "169.254.\(mac[4]).\(mac[5])"
    }

    /// Parses `aa:bb:cc:dd:ee:ff`.
    public static func parseMAC(_ text: String) -> [UInt8]? {
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        let bytes = parts.compactMap { $0.count == 2 && $0.allSatisfy(\.isHexDigit) ? UInt8($0, radix: 16) : nil }
        return bytes.count == 6 ? bytes : nil
    }

    /// Formats a MAC as `aa:bb:cc:dd:ee:ff`.
    public static func formatMAC(_ mac: [UInt8]) -> String {
        mac.map { String(format: "%02x", $0) }.joined(separator: ":")
    }

    /// `0x1d6b`-style hex for a USB id.
    public static func hex(_ value: UInt16) -> String { String(format: "0x%04x", value) }
}
