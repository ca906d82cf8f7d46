import CNetInterface

/// The thin wrapper over the socket calls of a nudge: the only place in CamoUSB besides ``InterfaceAddresses`` with
/// C calls.
///
/// A nudge is 33 small UDP datagrams to the IPv4 broadcast address's discard port (9) out of one gadget interface:
/// enough frames to fill any transfer block f_ncm has stranded (it sends a block once it holds 32 frames), and small
/// (about 3 KB in all). The studio's end drops them: nothing listens on port 9, and no host answers a broadcast
/// with an ICMP error.
public enum GadgetLinkNudge {
    /// Datagrams per nudge: one more than f_ncm's 32 frames per transfer block.
    public static let datagrams = 33
    /// The UDP port the datagrams go to (discard).
    public static let port: UInt16 = 9
    /// What each datagram carries, so a packet capture says where it came from.
    public static let payload = Array("camo-agent: flushing the USB link's transfer block".utf8)

    /// Sends one nudge out of `interface`; returns 0 or the errno of the first failed send.
    @Sendable public static func send(interface: String) -> Int32 {
        payload.withUnsafeBytes { bytes in
            camo_netif_broadcast_burst(interface, Int32(datagrams), port, bytes.baseAddress, bytes.count)
        }
    }
}
