/// Loopback tests for client and listening addresses.
enum ClientAddress {
    /// Whether `host` (an address or "localhost") names this machine's loopback interface.
    static func isLoopback(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        if host.hasPrefix("::ffff:") { host = String(host.dropFirst("::ffff:".count)) }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
