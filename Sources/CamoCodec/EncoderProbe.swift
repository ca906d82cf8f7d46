import CFFmpeg
import Foundation
import Logging

/// Opens each encoder kind once at a small size to see whether it works here (``H264Encoders/probe()``).
enum EncoderProbe {
    /// The probe's logger: a failed open is an expected answer, so only critical messages pass.
    private static let logger: Logger = {
        var logger = Logger(label: "camo.codec.probe")
        logger.logLevel = .critical
        return logger
    }()

    static func probe(_ kind: H264EncoderKind) -> H264EncoderAvailability {
        switch kind {
        case .x264:
            return open(kind, width: 64, height: 64) {
                "libx264 0.\(camo_x264_build()) through libavcodec \(libavcodecVersion)"
            }
        case .openh264:
            let wrapper = avcodec_find_encoder_by_name("libopenh264") == nil
                ? "Debian's libavcodec has no libopenh264; using libopenh264 \(OpenH264Encoder.version) directly"
                : "libopenh264 \(OpenH264Encoder.version), driven directly (libavcodec's wrapper is not used)"
            return open(kind, width: 64, height: 64) { wrapper }
        case .v4l2m2m:
            guard avcodec_find_encoder_by_name("h264_v4l2m2m") != nil else {
                return H264EncoderAvailability(kind: kind, available: false, detail: "this libavcodec has no h264_v4l2m2m")
            }
            let devices = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? [])
                .filter { $0.hasPrefix("video") }
            guard !devices.isEmpty else {
                return H264EncoderAvailability(kind: kind, available: false, detail: "no /dev/video* M2M encoder (no /dev/video* devices)")
            }
            let probed = open(kind, width: 640, height: 480) { "h264_v4l2m2m through libavcodec \(libavcodecVersion)" }
            guard probed.available else {
                return H264EncoderAvailability(
                    kind: kind, available: false,
                    detail: "no /dev/video* M2M encoder among \(devices.count) device(s) (\(probed.detail))")
            }
            return probed
        case .vaapi:
            guard avcodec_find_encoder_by_name("h264_vaapi") != nil else {
                return H264EncoderAvailability(kind: kind, available: false, detail: "this libavcodec has no h264_vaapi")
            }
            guard FileManager.default.fileExists(atPath: FFmpegEncoder.vaapiDevice) else {
                return H264EncoderAvailability(kind: kind, available: false, detail: "no VAAPI render node \(FFmpegEncoder.vaapiDevice)")
            }
            return open(kind, width: 640, height: 480) {
                "h264_vaapi on \(FFmpegEncoder.vaapiDevice) through libavcodec \(libavcodecVersion)"
            }
        }
    }

    /// Opens `kind` at `width` x `height` and 500 kb/s; available with `detail` when it opens.
    private static func open(
        _ kind: H264EncoderKind, width: Int, height: Int, detail: () -> String
    ) -> H264EncoderAvailability {
        let settings = H264EncoderSettings(width: width, height: height, bitrate: 500_000, kind: kind)
        do {
            _ = try H264Encoder(settings: settings, logger: logger)
            return H264EncoderAvailability(kind: kind, available: true, detail: detail())
        } catch {
            let reason: String = switch error {
            case .unavailable(let reason), .open(let reason), .badFrame(let reason), .encode(let reason),
                .corrupt(let reason), .mux(let reason): reason
            }
            return H264EncoderAvailability(kind: kind, available: false, detail: reason)
        }
    }

    /// The libavcodec loaded at run time, e.g. "59.37.100 (FFmpeg 5.1.9-0+deb12u1)".
    static var libavcodecVersion: String {
        let number = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 32) { buffer -> String in
            guard let base = buffer.baseAddress else { return "?" }
            camo_avcodec_version_string(base, buffer.count)
            return String(cString: base)
        }
        return "\(number) (FFmpeg \(String(cString: av_version_info())))"
    }
}
