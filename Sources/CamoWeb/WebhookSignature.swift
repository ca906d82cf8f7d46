import Crypto

/// How each webhook request is signed, and the check a receiver runs.
///
/// The scheme (what a home-automation receiver implements):
///
/// - Every POST carries `X-Camo-Event-Id: <id>` (the same on every retry of one event, so a receiver can drop
///   duplicates) and `X-Camo-Signature: t=<unix seconds>,v1=<hex>`.
/// - `t` is the sender's wall-clock time of this attempt, in whole seconds since 1970 (each retry is signed anew).
/// - `v1` is HMAC-SHA256, keyed with the shared secret's UTF-8 bytes, over the ASCII decimal `t`, a `.`, and the
///   raw body bytes exactly as received (`"\(t).\(body)"`), written as 64 lower-case hex digits.
/// - The receiver recomputes the HMAC, compares it in constant time, and refuses a `t` more than a tolerance
///   (5 minutes by default) from its own clock, so a captured request cannot be replayed later.
///
/// In Python:
///
/// ```python
/// import hmac, hashlib, time
/// fields = dict(p.split("=", 1) for p in header.split(","))
/// mac = hmac.new(secret.encode(), fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
/// ok = hmac.compare_digest(mac, fields["v1"]) and abs(time.time() - int(fields["t"])) <= 300
/// ```
///
/// A header may hold several `v1=` entries (one per secret while a secret is being changed); one match is enough.
public struct WebhookSignature: Sendable {
    /// The signature header's name.
    public static let signatureHeader = "X-Camo-Signature"
    /// The event id header's name.
    public static let eventIDHeader = "X-Camo-Event-Id"
    /// How far a signature's time may be from the receiver's clock by default: 300 seconds.
    public static let defaultTolerance: Int64 = 300

    /// Why ``verify(header:body:secret:now:tolerance:)`` refused a request.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The header is not `t=<seconds>,v1=<64 hex digits>`.
        case malformedHeader
        /// The time in the header is further from `now` than the tolerance (`age` seconds, negative: ahead).
        case outsideTolerance(age: Int64)
        /// No `v1` matches the body under this secret.
        case mismatch

        /// A sentence saying why the request was refused.
        public var description: String {
            switch self {
            case .malformedHeader:
                "The \(WebhookSignature.signatureHeader) header is not t=<unix seconds>,v1=<64 hex digits>"
            case .outsideTolerance(let age):
                "The signature's time is \(age) s from this clock, outside the tolerance; check both clocks"
            case .mismatch:
                "The signature does not match the body; check both sides use the same secret"
            }
        }
    }

    private let key: SymmetricKey

    /// A signer with `secret` (its UTF-8 bytes are the HMAC key). Throws ``WebhookError/invalidSecret(_:)`` when
    /// it is empty.
    public init(secret: String) throws(WebhookError) {
        guard !secret.isEmpty else {
            throw .invalidSecret(
                "The webhook secret is empty; set webhookSecret to a long random string (e.g. the output of "
                    + "`openssl rand -hex 32`) and give the same secret to the receiver")
        }
        key = SymmetricKey(data: Array(secret.utf8))
    }

    /// The lower-case hex HMAC-SHA256 of `"\(timestamp).\(body)"`.
    public func mac(body: [UInt8], timestamp: Int64) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Self.message(body: body, timestamp: timestamp), using: key)
        return Self.hex(Array(code))
    }

    /// The `X-Camo-Signature` value for `body` sent at `timestamp` (unix seconds): `t=<timestamp>,v1=<hex>`.
    public func header(body: [UInt8], timestamp: Int64) -> String {
        "t=\(timestamp),v1=\(mac(body: body, timestamp: timestamp))"
    }

    /// Both headers of one attempt: the event id and the signature.
    public func headers(body: [UInt8], id: String, timestamp: Int64) -> [(name: String, value: String)] {
        [(Self.eventIDHeader, id), (Self.signatureHeader, header(body: body, timestamp: timestamp))]
    }

    /// Checks a received `header` against `body` and `secret`, with `now` the receiver's unix seconds; throws
    /// ``Failure`` when the request must be refused.
    public static func verify(
        header: String, body: [UInt8], secret: String, now: Int64, tolerance: Int64 = defaultTolerance
    ) throws(Failure) {
        var timestamp: Int64?
        var macs: [[UInt8]] = []
        for field in header.split(separator: ",") {
            let pair = field.trimmingSpaces.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { throw .malformedHeader }
            switch pair[0] {
            case "t":
                guard timestamp == nil, let value = Int64(pair[1]) else { throw .malformedHeader }
                timestamp = value
            case "v1":
                guard let bytes = bytes(hex: pair[1]), bytes.count == 32 else { throw .malformedHeader }
                macs.append(bytes)
            default:
                continue  // later versions may add fields
            }
        }
        guard let timestamp, !macs.isEmpty else { throw .malformedHeader }
        let age = now - timestamp
        guard abs(age) <= tolerance else { throw .outsideTolerance(age: age) }
        let key = SymmetricKey(data: Array(secret.utf8))
        let message = Self.message(body: body, timestamp: timestamp)
        let matched = macs.contains { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: message, using: key) }
        guard matched else { throw .mismatch }
    }

    private static func message(body: [UInt8], timestamp: Int64) -> [UInt8] {
        Array("\(timestamp).".utf8) + body
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(hex: Substring) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
