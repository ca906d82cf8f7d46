import Crypto
import Foundation
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The web server's self-signed certificate: ECDSA P-256, a SAN for each host name and address it is reached by
/// (always `localhost` and `127.0.0.1`), valid one year, kept as `web-key.pem` (mode 0600) and `web-cert.pem` in
/// the agent's state directory and made anew when less than 30 days are left or a name is missing.
///
/// Browsers warn about a self-signed certificate; the agent prints ``sha256Fingerprint`` so the user can check
/// it is this one before accepting it.
public struct WebCertificate: Sendable {
    /// The private key's file name.
    public static let keyFileName = "web-key.pem"
    /// The certificate's file name.
    public static let certificateFileName = "web-cert.pem"

    /// The certificate, PEM.
    public let certificatePEM: String
    /// The private key, PEM (PKCS#8).
    public let privateKeyPEM: String
    /// SHA-256 of the certificate's DER bytes, upper-case hex pairs joined by colons (`AA:BB:...`), as
    /// `openssl x509 -fingerprint -sha256` and browsers show it.
    public let sha256Fingerprint: String
    /// When the certificate stops being valid.
    public let notValidAfter: Date
    /// The DNS names and IP addresses (text) in its SAN.
    public let subjectAlternativeNames: [String]
    /// Whether ``loadOrCreate(directory:hostnames:now:)`` made it anew (false: loaded from the files).
    public let created: Bool

    /// Loads the certificate and key from `directory`, or makes new ones there when they are missing, unreadable,
    /// expire within 30 days of `now`, or lack one of `hostnames` (names or IP addresses).
    public static func loadOrCreate(directory: URL, hostnames: [String], now: Date = Date()) throws(WebServerError)
        -> WebCertificate
    {
        let wanted = Self.names(hostnames)
        let keyURL = directory.appendingPathComponent(keyFileName)
        let certificateURL = directory.appendingPathComponent(certificateFileName)
        if let existing = try? load(keyURL: keyURL, certificateURL: certificateURL),
            existing.notValidAfter.timeIntervalSince(now) > 30 * 86_400,
            Set(wanted).isSubset(of: Set(existing.subjectAlternativeNames))
        {
            return existing
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = P256.Signing.PrivateKey()
            let privateKey = Certificate.PrivateKey(key)
            let name = try DistinguishedName {
                CommonName("camo-agent")
                OrganizationName("camo-agent (self-signed)")
            }
            var sanNames: [GeneralName] = []
            for host in wanted {
                if let address = ipAddressBytes(host) {
                    sanNames.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(address))))
                } else {
                    sanNames.append(.dnsName(host))
                }
            }
            let extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(sanNames)
            }
            var generator = SystemRandomNumberGenerator()
            let serial = Certificate.SerialNumber(bytes: [0x01] + (0..<15).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let certificate = try Certificate(
                version: .v3, serialNumber: serial, publicKey: privateKey.publicKey,
                notValidBefore: now.addingTimeInterval(-3_600), notValidAfter: now.addingTimeInterval(365 * 86_400),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
                issuerPrivateKey: privateKey)
            let keyPEM = key.pemRepresentation
            let certificatePEM = try certificate.serializeAsPEM().pemString
            try write(keyPEM + "\n", to: keyURL, mode: 0o600)
            try write(certificatePEM + "\n", to: certificateURL, mode: 0o644)
            return try WebCertificate(certificate: certificate, certificatePEM: certificatePEM, keyPEM: keyPEM, created: true)
        } catch let error as WebServerError {
            throw error
        } catch {
            throw .certificate(
                "cannot make the web certificate in \(directory.path): \(error); check the state directory is writable")
        }
    }

    private init(certificate: Certificate, certificatePEM: String, keyPEM: String, created: Bool) throws {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = keyPEM
        self.sha256Fingerprint = SHA256.hash(data: serializer.serializedBytes)
            .map { String(format: "%02X", $0) }.joined(separator: ":")
        self.notValidAfter = certificate.notValidAfter
        self.created = created
        var names: [String] = []
        for name in try certificate.extensions.subjectAlternativeNames ?? SubjectAlternativeNames() {
            switch name {
            case .dnsName(let host): names.append(host)
            case .ipAddress(let octets): if let text = Self.text(ipAddress: Array(octets.bytes)) { names.append(text) }
            default: break
            }
        }
        self.subjectAlternativeNames = names
    }

    private static func load(keyURL: URL, certificateURL: URL) throws -> WebCertificate {
        let keyPEM = try String(contentsOf: keyURL, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let certificatePEM = try String(contentsOf: certificateURL, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let key = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
        let certificate = try Certificate(pemEncoded: certificatePEM)
        guard certificate.publicKey == Certificate.PrivateKey(key).publicKey else {
            throw WebServerError.certificate("\(keyURL.path) does not belong to \(certificateURL.path)")
        }
        return try WebCertificate(certificate: certificate, certificatePEM: certificatePEM, keyPEM: keyPEM, created: false)
    }

    /// `hostnames` with localhost and 127.0.0.1, without duplicates or empty names, addresses in canonical text.
    static func names(_ hostnames: [String]) -> [String] {
        var result: [String] = []
        for raw in ["localhost", "127.0.0.1"] + hostnames {
            var host = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if let bytes = ipAddressBytes(host), let text = text(ipAddress: bytes) { host = text }
            if !host.isEmpty && host != "0.0.0.0" && host != "::" && !result.contains(host) { result.append(host) }
        }
        return result
    }

    private static func ipAddressBytes(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    private static func text(ipAddress bytes: [UInt8]) -> String? {
        let family = bytes.count == 4 ? AF_INET : bytes.count == 16 ? AF_INET6 : -1
        guard family >= 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        guard ok else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func write(_ text: String, to url: URL, mode: Int) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
        else { throw WebServerError.certificate("cannot write \(temporary.path); check the state directory is writable") }
        chmod(temporary.path, mode_t(mode))
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw WebServerError.certificate("cannot write \(url.path): \(reason)")
        }
    }
}
