import CNetInterface

/// The thin wrapper over the socket calls of a nudge (the C side is `camo_netif_broadcast_burst` in the
/// CNetInterface shim).
///
/// A nudge is 33 small UDP datagrams to the IPv4 broadcast address's discard port (9) out of one gadget interface:
/// enough frames to fill any transfer block f_ncm has stranded (in 6.1 a block holds at most 31), and small
/// (about 3 KB in all). The studio's end drops them: nothing listens on port 9, and no host answers a broadcast
/// with an ICMP error.
public enum GadgetLinkNudge {
    /// Datagrams per nudge: more than the 31 frames an f_ncm transfer block holds (`TX_MAX_NUM_DPE` is 32 and the
    /// count starts at 1).
    public static let datagrams = 33
    /// The UDP port the datagrams go to (discard).
    public static let port: UInt16 = 9
    /// What each datagram carries, so a packet capture says where it came from.
    public static let payload = Array("camo-agent: flushing the USB link's transfer block".utf8)

    /// Sends one nudge out of `interface`; returns 0 or the errno of the first failed call (EINVAL for an empty
    /// name, ENODEV for an interface that does not exist, EPERM before Linux 5.7, where binding a socket to an
    /// interface needed CAP_NET_RAW).
    @Sendable public static func send(interface: String) -> Int32 {
        payload.withUnsafeBytes { bytes in
            camo_netif_broadcast_burst(interface, Int32(datagrams), port, bytes.baseAddress, bytes.count)
        }
    }
}
