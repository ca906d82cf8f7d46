/// The H.264 encoders CamoCodec can drive.
public enum H264EncoderKind: String, CaseIterable, Sendable, Codable {
    /// libx264 through libavcodec (software).
    case x264
    /// Cisco's libopenh264, driven directly (Debian's libavcodec has no libopenh264 wrapper).
    case openh264
    /// A V4L2 memory-to-memory hardware encoder through libavcodec's h264_v4l2m2m (e.g. a Raspberry Pi's).
    case v4l2m2m
    /// A VAAPI hardware encoder (Intel, AMD) through libavcodec's h264_vaapi on /dev/dri/renderD128.
    case vaapi

    /// Whether this kind runs on dedicated hardware rather than the CPU.
    public var isHardware: Bool {
        switch self {
        case .v4l2m2m, .vaapi: return true
        case .x264, .openh264: return false
        }
    }
}

/// What --encoder asks for.
public enum H264EncoderChoice: Sendable, Hashable, CustomStringConvertible {
    /// The best encoder that really opens on this host (see ``H264Encoders/resolve(_:)``).
    case auto
    /// Exactly this encoder, or an error when it is unavailable.
    case kind(H264EncoderKind)

    /// Parses an --encoder argument: `auto`, `x264`, `openh264`, `v4l2m2m` or `vaapi` (case-insensitive);
    /// nil for anything else.
    public init?(argument: String) {
        let lowered = argument.lowercased()
        if lowered == "auto" {
            self = .auto
        } else if let kind = H264EncoderKind(rawValue: lowered) {
            self = .kind(kind)
        } else {
            return nil
        }
    }

    /// The argument that parses back to this choice (`auto`, `x264`, ...).
    public var description: String {
        switch self {
        case .auto: return "auto"
        case .kind(let kind): return kind.rawValue
        }
    }

    /// Every accepted --encoder argument, for help texts.
    public static let arguments: [String] = ["auto"] + H264EncoderKind.allCases.map(\.rawValue)
}

/// Whether one encoder kind works on this host, and why (not).
public struct H264EncoderAvailability: Sendable, Hashable {
    /// The encoder.
    public var kind: H264EncoderKind
    /// Whether it opened at a small size when probed.
    public var available: Bool
    /// What it is when available ("libx264 0.164 through libavcodec 59.37.100"), or why it is not
    /// ("no VAAPI render node /dev/dri/renderD128").
    public var detail: String

    /// Creates an availability record.
    public init(kind: H264EncoderKind, available: Bool, detail: String) {
        self.kind = kind
        self.available = available
        self.detail = detail
    }
}

/// Which H.264 encoders this host has, and which one a choice means.
public enum H264Encoders {
    /// The order `auto` tries: hardware first, then x264, then openh264.
    public static let autoOrder: [H264EncoderKind] = [.v4l2m2m, .vaapi, .x264, .openh264]

    /// The probe's result, computed once per process (thread-safe lazy global).
    private static let probed: [H264EncoderAvailability] = H264EncoderKind.allCases.map(EncoderProbe.probe)

    /// Probes every kind on this host, in ``H264EncoderKind/allCases`` order. Cheap after the first call:
    /// each encoder is opened once at a small size and the result is cached for the life of the process.
    public static func probe() -> [H264EncoderAvailability] { probed }

    /// The probe's record for `kind`.
    public static func availability(of kind: H264EncoderKind) -> H264EncoderAvailability {
        // Every kind is probed, so the lookup cannot fail.
        probed.first { $0.kind == kind } ?? H264EncoderAvailability(kind: kind, available: false, detail: "not probed")
    }

    /// The encoder `choice` means on this host.
    ///
    /// `auto` takes hardware first (v4l2m2m, then vaapi) when it really opens, then x264, then openh264.
    ///
    /// - Throws: ``H264Error/unavailable(_:)`` with the probe's reason when an explicit kind is unavailable,
    ///   or when `auto` finds nothing at all.
    public static func resolve(_ choice: H264EncoderChoice) throws(H264Error) -> H264EncoderKind {
        switch choice {
        case .kind(let kind):
            let record = availability(of: kind)
            guard record.available else { throw .unavailable("\(kind.rawValue): \(record.detail)") }
            return kind
        case .auto:
            for kind in autoOrder where availability(of: kind).available { return kind }
            let reasons = autoOrder.map { "\($0.rawValue): \(availability(of: $0).detail)" }.joined(separator: "; ")
            throw .unavailable("no H.264 encoder opens here (\(reasons))")
        }
    }
}
