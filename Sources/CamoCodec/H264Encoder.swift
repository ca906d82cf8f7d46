import CamoMedia
import Logging

/// What ``H264Encoder`` needs from each encoder implementation.
protocol H264EncoderBackend: AnyObject {
    /// Encodes one validated BGRA frame of the settings' size; nil when the encoder buffered it.
    func encode(_ frame: VideoFrame, index: Int64, forceKeyframe: Bool) throws(H264Error) -> H264Packet?
    /// Targets `bitsPerSecond` (already clamped) from the next frame on.
    func setBitrate(_ bitsPerSecond: Int)
}

/// Encodes BGRA frames to H.264 with the encoder the settings name, at zero latency.
///
/// Every frame in gives its packet out: no B-frames, no lookahead, rate control with a VBV of one frame
/// (maximum rate = target, buffer = target / fps), a keyframe every ``H264EncoderSettings/gopFrames``
/// frames or when forced, and SPS and PPS in-band before each IDR (no global header), so a decoder can
/// join at any keyframe. The colour conversion is libyuv's BGRA to I420 (BT.601, limited range, as the
/// stream's VUI says) into one reused picture buffer.
///
/// x264 runs with preset `ultrafast` and tune `zerolatency`, chosen by measured cost. At 1280x720 and
/// 4 Mb/s on the 2-core development VM (libx264 0.164 through libavcodec 5.1, three runs of 90 frames each
/// while the machine carried a load average of 6-7): `ultrafast` took 5-10 ms a frame, on the test pattern
/// and under moving noise alike; `veryfast` took 17-21 ms on the pattern and 21-28 ms on noise. At 30 fps `veryfast`
/// would take over half of the 33 ms frame period on a machine that also captures, converts and sends,
/// while its gain is small here: with a one-frame VBV both reached the same quality on the test pattern
/// (58.5 against 58.1 dB luma PSNR), and neither can do more than the bit rate allows on noise.
///
/// Owned by one thread or task at a time: it is deliberately not `Sendable` (the C encoder keeps state
/// between frames).
public final class H264Encoder {
    /// What the encoder was opened with (its bit rate is the opening one; see ``bitrate``).
    public let settings: H264EncoderSettings
    /// The current target bit rate in bits per second.
    public private(set) var bitrate: Int
    /// Frames handed to ``encode(_:forceKeyframe:)`` successfully so far.
    public private(set) var framesEncoded: Int = 0

    private let backend: any H264EncoderBackend
    private let logger: Logger

    /// Opens the encoder `settings.kind` names.
    ///
    /// - Throws: ``H264Error/open(_:)`` for unusable settings (no pixels, odd or over 4096 sides, a bit rate
    ///   under 50 kb/s, ...) or an encoder that refuses them; ``H264Error/unavailable(_:)`` when this host
    ///   lacks the encoder (check with ``H264Encoders/probe()`` or ``H264Encoders/resolve(_:)`` first).
    public init(settings: H264EncoderSettings, logger: Logger) throws(H264Error) {
        try settings.validate()
        self.settings = settings
        self.bitrate = settings.bitrate
        self.logger = logger
        switch settings.kind {
        case .openh264:
            backend = try OpenH264Encoder(settings: settings, logger: logger)
        case .x264, .v4l2m2m, .vaapi:
            backend = try FFmpegEncoder(settings: settings, logger: logger)
        }
    }

    /// Encodes one frame and returns its packet.
    ///
    /// - Parameters:
    ///   - frame: a BGRA frame of exactly the settings' size (any row stride of at least 4 x width).
    ///   - forceKeyframe: make this picture an IDR (with SPS and PPS), e.g. when a receiver lost data.
    /// - Returns: the access unit, or nil only if the encoder buffered the frame (not expected with these
    ///   settings; openh264 also returns nil for a frame its rate control skipped).
    /// - Throws: ``H264Error/badFrame(_:)`` for a frame of another size or format or with a wrong buffer
    ///   length; ``H264Error/encode(_:)`` when the encoder fails.
    public func encode(_ frame: VideoFrame, forceKeyframe: Bool) throws(H264Error) -> H264Packet? {
        guard frame.pixelFormat == .bgra else {
            throw .badFrame("the frame is \(frame.pixelFormat), not BGRA")
        }
        guard frame.width == settings.width, frame.height == settings.height else {
            throw .badFrame("the frame is \(frame.width)x\(frame.height), the encoder \(settings.width)x\(settings.height)")
        }
        do {
            try MediaContract.validate(frame)
        } catch {
            throw .badFrame(error.description)
        }
        var packet = try backend.encode(frame, index: Int64(framesEncoded), forceKeyframe: forceKeyframe)
        framesEncoded += 1
        if let unit = packet, unit.isKeyframe { packet = withParameterSets(unit) }
        return packet
    }

    /// The last SPS and PPS the encoder wrote, each with its start code.
    private var parameterSets: [UInt8] = []

    /// Keyframes must carry their SPS and PPS (a studio that joins mid-stream starts there): some encoders write
    /// them only once (libavcodec 5.1's V4L2 M2M wrapper, by reports), so a keyframe without them gets the last ones.
    private func withParameterSets(_ unit: H264Packet) -> H264Packet {
        let units = AnnexB.nalUnits(unit.data)
        let types = units.map { unit.data[$0.lowerBound] & 0x1F }
        if types.contains(7) && types.contains(8) {
            parameterSets = []
            for (range, type) in zip(units, types) where type == 7 || type == 8 {
                parameterSets += [0, 0, 0, 1] + unit.data[range]
            }
            return unit
        }
        guard !parameterSets.isEmpty else { return unit }
        var patched = unit
        patched.data = parameterSets + unit.data
        return patched
    }

    /// Targets `bitsPerSecond` (clamped to at least 50 kb/s) from the next frame on.
    ///
    /// x264 reconfigures its rate control (target, maximum rate and the VBV of a few frames) before the next
    /// frame; openh264 takes it through its bit-rate option. The hardware encoders of libavcodec 5.1 may
    /// keep their opening rate.
    public func setBitrate(_ bitsPerSecond: Int) {
        let clamped = max(H264EncoderSettings.minimumBitrate, bitsPerSecond)
        guard clamped != bitrate else { return }
        bitrate = clamped
        backend.setBitrate(clamped)
        logger.trace("H.264 target bit rate now \(clamped) b/s.")
    }
}
