import CamoCodec
import CamoMedia
import CamoProducerKit
import Logging

/// CamoCodec's encoder as the controller's ``H264Encoding``.
final class CodecH264Encoder: H264Encoding {
    private let encoder: H264Encoder

    init(_ encoder: H264Encoder) {
        self.encoder = encoder
    }

    func encode(_ frame: VideoFrame, forceKeyframe: Bool) throws -> EncodedAccessUnit? {
        guard let packet = try encoder.encode(frame, forceKeyframe: forceKeyframe) else { return nil }
        return EncodedAccessUnit(data: packet.data, isKeyframe: packet.isKeyframe)
    }

    func setBitrate(_ bitsPerSecond: Int) {
        encoder.setBitrate(bitsPerSecond)
    }
}

extension H264Options {
    /// H.264 through CamoCodec (libavcodec's x264, V4L2 M2M or VAAPI encoder, or libopenh264), as `--encoder` and
    /// the rate keys of `configuration` say. Nil for `encoder = off`, or for `auto` when this host has no encoder
    /// (logged: network studios then get JPEG).
    /// - Throws: ``AgentStartupError`` when an encoder named explicitly is not available here.
    public static func codec(for configuration: AgentConfiguration, logger: Logger) throws -> H264Options? {
        guard configuration.encoder != "off" else { return nil }
        guard let choice = H264EncoderChoice(argument: configuration.encoder) else {
            throw AgentStartupError(
                step: "choosing the H.264 encoder", reason: "\(configuration.encoder) is not an encoder name",
                remedy: "Use --encoder auto, x264, openh264, v4l2m2m, vaapi or off (config key encoder).")
        }
        let kind: H264EncoderKind
        do {
            kind = try H264Encoders.resolve(choice)
        } catch {
            if choice == .auto {
                logger.notice("No H.264 encoder on this host; studios on the network get JPEG", metadata: ["reason": "\(error)"])
                return nil
            }
            throw AgentStartupError(
                step: "choosing the H.264 encoder", reason: "\(error)",
                remedy: "`camo-agent devices` lists the encoders this host has; use --encoder auto (config key encoder) to take the best one, or off.")
        }
        var options = H264Options(encoderName: kind.rawValue) { request in
            let settings = H264EncoderSettings(
                width: request.size.width, height: request.size.height,
                bitrate: max(H264EncoderSettings.minimumBitrate, request.bitrate), fps: 30,
                gopFrames: request.gopFrames, kind: kind)
            return CodecH264Encoder(try H264Encoder(settings: settings, logger: logger))
        }
        options.gopSeconds = configuration.gopSeconds
        options.rate = LinkRateConfiguration(
            floor: configuration.minBitrateKbps * 1_000, ceiling: configuration.maxBitrateKbps * 1_000,
            start: min(configuration.maxBitrateKbps, max(configuration.minBitrateKbps, 2_000)) * 1_000,
            latencyBudgetNanos: UInt64(configuration.latencyBudgetMs) * 1_000_000)
        logger.info("H.264 for studios on the network", metadata: ["encoder": "\(kind.rawValue)", "gopSeconds": "\(configuration.gopSeconds)"])
        return options
    }
}
