import CFFmpeg
import CYUV
import CamoMedia
import Logging

/// The encoders CamoCodec drives through libavcodec: libx264, h264_v4l2m2m and h264_vaapi.
///
/// One reused software AVFrame (I420, or NV12 for VAAPI) receives libyuv's BGRA conversion; VAAPI uploads
/// it into a frame of its hardware pool. Packets come out one per frame (no B-frames, no lookahead).
/// Not thread-safe: ``H264Encoder`` owns it.
final class FFmpegEncoder: H264EncoderBackend {
    /// The x264 preset: `ultrafast` (with tune `zerolatency`). Why, in numbers, is on ``H264Encoder``.
    static let x264Preset = "ultrafast"

    private let settings: H264EncoderSettings
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// VAAPI only: the device, its frame pool, and the frame the picture is uploaded into.
    private let hardwareDevice: UnsafeMutablePointer<AVBufferRef>?
    private let hardwareFrames: UnsafeMutablePointer<AVBufferRef>?
    private let hardwareFrame: UnsafeMutablePointer<AVFrame>?
    private let sink: FFmpegLogSink
    private let logger: Logger

    /// libavcodec's name for each kind's encoder.
    static func encoderName(_ kind: H264EncoderKind) -> String? {
        switch kind {
        case .x264: return "libx264"
        case .v4l2m2m: return "h264_v4l2m2m"
        case .vaapi: return "h264_vaapi"
        case .openh264: return nil
        }
    }

    /// The VAAPI render node tried.
    static let vaapiDevice = "/dev/dri/renderD128"

    /// Opens the encoder of `settings.kind` (which must not be openh264).
    init(settings: H264EncoderSettings, logger: Logger) throws(H264Error) {
        try settings.validate()
        guard let name = Self.encoderName(settings.kind) else {
            throw .unavailable("\(settings.kind.rawValue) is not a libavcodec encoder")
        }
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw .unavailable("this libavcodec has no \(name) encoder")
        }
        guard let context = avcodec_alloc_context3(codec), let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            throw .open("out of memory allocating the \(name) encoder")
        }
        self.settings = settings
        self.context = context
        self.frame = frame
        self.packet = packet
        self.logger = logger
        self.sink = FFmpegLogSink(logger: logger)
        FFmpegLog.register(UnsafeMutableRawPointer(context), sink)

        let isVAAPI = settings.kind == .vaapi
        var device: UnsafeMutablePointer<AVBufferRef>?
        var frames: UnsafeMutablePointer<AVBufferRef>?
        if isVAAPI {
            let result = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, Self.vaapiDevice, nil, 0)
            if result >= 0, let device {
                frames = av_hwframe_ctx_alloc(device)
                if let frames {
                    let pool = UnsafeMutableRawPointer(frames.pointee.data).assumingMemoryBound(to: AVHWFramesContext.self)
                    pool.pointee.format = AV_PIX_FMT_VAAPI
                    pool.pointee.sw_format = AV_PIX_FMT_NV12
                    pool.pointee.width = Int32(settings.width)
                    pool.pointee.height = Int32(settings.height)
                    pool.pointee.initial_pool_size = 8
                }
            }
        }
        hardwareDevice = device
        hardwareFrames = frames
        hardwareFrame = isVAAPI ? av_frame_alloc() : nil

        // From here on deinit frees whatever was allocated.
        if isVAAPI {
            guard device != nil else { throw .unavailable("no usable VAAPI device at \(Self.vaapiDevice)") }
            guard let frames, hardwareFrame != nil else { throw .open("out of memory allocating VAAPI frames") }
            let result = av_hwframe_ctx_init(frames)
            guard result >= 0 else { throw .open("VAAPI frames of \(settings.width)x\(settings.height) NV12: \(describe(result))") }
            context.pointee.hw_frames_ctx = av_buffer_ref(frames)
            context.pointee.pix_fmt = AV_PIX_FMT_VAAPI
        } else {
            context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        }
        context.pointee.width = Int32(settings.width)
        context.pointee.height = Int32(settings.height)
        context.pointee.time_base = AVRational(num: 1, den: Int32(settings.fps))
        context.pointee.framerate = AVRational(num: Int32(settings.fps), den: 1)
        context.pointee.gop_size = Int32(settings.gopFrames)
        context.pointee.max_b_frames = 0
        context.pointee.refs = 1
        context.pointee.color_range = AVCOL_RANGE_MPEG
        context.pointee.colorspace = AVCOL_SPC_SMPTE170M
        // No AV_CODEC_FLAG_GLOBAL_HEADER: SPS and PPS then go in-band before every IDR (x264's repeat-headers).
        Self.applyRate(settings.bitrate, fps: settings.fps, to: context)

        if let options = context.pointee.priv_data {
            switch settings.kind {
            case .x264:
                try setOption(options, "preset", Self.x264Preset)
                try setOption(options, "tune", "zerolatency")
                // A forced keyframe (pict_type I) is an IDR, not an open-GOP recovery point.
                try setOption(options, "forced-idr", "1")
                // Keyframes only every gopFrames or when forced: a scene cut's I-frame cannot fit a VBV of a few frames.
                try setOption(options, "x264-params", "scenecut=0")
            case .vaapi:
                try setOption(options, "rc_mode", "CBR")
                // One picture in flight (FFmpeg 5.1 has the option; an older one ignores it).
                try setOption(options, "async_depth", "1", optional: true)
            case .v4l2m2m, .openh264:
                break
            }
        }

        let result = avcodec_open2(context, codec, nil)
        guard result >= 0 else { throw .open("\(name) at \(settings.width)x\(settings.height): \(describe(result))") }

        frame.pointee.format = (isVAAPI ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P).rawValue
        frame.pointee.width = Int32(settings.width)
        frame.pointee.height = Int32(settings.height)
        frame.pointee.color_range = AVCOL_RANGE_MPEG
        frame.pointee.colorspace = AVCOL_SPC_SMPTE170M
        let buffers = av_frame_get_buffer(frame, 0)
        guard buffers >= 0 else { throw .open("no picture buffer for \(settings.width)x\(settings.height): \(describe(buffers))") }
        logger.debug("Opened \(name) (\(settings.width)x\(settings.height), \(settings.bitrate) b/s, \(settings.fps) fps, keyframe every \(settings.gopFrames)).")
    }

    deinit {
        FFmpegLog.unregister(UnsafeMutableRawPointer(context))
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
        var hardwareFrame = hardwareFrame
        av_frame_free(&hardwareFrame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
        var hardwareFrames = hardwareFrames
        av_buffer_unref(&hardwareFrames)
        var hardwareDevice = hardwareDevice
        av_buffer_unref(&hardwareDevice)
    }

    /// Frames' worth of bits in the VBV buffer. One frame starved keyframes: a keyframe forced mid-stream (a
    /// studio's request) got one average frame's bits, about 4 KB at 1 Mb/s for a whole 1280x720 picture, and came
    /// out too blurred to read (measured end to end: the test pattern's frame code unreadable). Four frames (133 ms
    /// at 30 fps) let a keyframe take up to four frames' bits, within the 200 ms latency budget; P-frames still
    /// average the target.
    static let vbvFrames = 4

    /// Sets the rate control fields libx264 compares before every frame (it reconfigures when they change):
    /// the target, the same maximum, and a VBV buffer of ``vbvFrames`` frames' bits (rounded up to whole kbit, as
    /// x264 counts it).
    private static func applyRate(_ bitsPerSecond: Int, fps: Int, to context: UnsafeMutablePointer<AVCodecContext>) {
        let perFrameKbit = (bitsPerSecond + fps * 1000 - 1) / (fps * 1000)
        context.pointee.bit_rate = Int64(bitsPerSecond)
        context.pointee.rc_max_rate = Int64(bitsPerSecond)
        context.pointee.rc_buffer_size = Int32(clamping: perFrameKbit * 1000 * vbvFrames)
    }

    func setBitrate(_ bitsPerSecond: Int) {
        Self.applyRate(bitsPerSecond, fps: settings.fps, to: context)
        if settings.kind != .x264 {
            logger.debug("\(settings.kind.rawValue) through libavcodec 5.1 may keep its opening bit rate; asked for \(bitsPerSecond) b/s.")
        }
    }

    func encode(_ input: VideoFrame, index: Int64, forceKeyframe: Bool) throws(H264Error) -> H264Packet? {
        let writable = av_frame_make_writable(frame)
        guard writable >= 0 else { throw .encode("no writable picture buffer: \(describe(writable))") }
        let converted = input.data.withUnsafeBufferPointer { source -> Int32 in
            guard let pixels = source.baseAddress else { return -1 }
            let width = Int32(input.width), height = Int32(input.height), stride = Int32(input.bytesPerRow)
            if settings.kind == .vaapi {
                return ARGBToNV12(
                    pixels, stride, frame.pointee.data.0, frame.pointee.linesize.0,
                    frame.pointee.data.1, frame.pointee.linesize.1, width, height)
            }
            return ARGBToI420(
                pixels, stride, frame.pointee.data.0, frame.pointee.linesize.0, frame.pointee.data.1,
                frame.pointee.linesize.1, frame.pointee.data.2, frame.pointee.linesize.2, width, height)
        }
        guard converted == 0 else { throw .badFrame("libyuv could not convert the BGRA picture (\(converted))") }
        frame.pointee.pts = index
        frame.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE

        var sent = frame
        if let hardwareFrame, let hardwareFrames {
            av_frame_unref(hardwareFrame)
            let pooled = av_hwframe_get_buffer(hardwareFrames, hardwareFrame, 0)
            guard pooled >= 0 else { throw .encode("no VAAPI surface: \(describe(pooled))") }
            let uploaded = av_hwframe_transfer_data(hardwareFrame, frame, 0)
            guard uploaded >= 0 else { throw .encode("uploading to VAAPI failed: \(describe(uploaded))") }
            hardwareFrame.pointee.pts = index
            hardwareFrame.pointee.pict_type = frame.pointee.pict_type
            sent = hardwareFrame
        }

        let result = avcodec_send_frame(context, sent)
        guard result >= 0 else { throw .encode(describe(result)) }
        return try receivePackets(index: index)
    }

    /// Everything the encoder has ready, as one packet (normally exactly one picture); nil when nothing is.
    private func receivePackets(index: Int64) throws(H264Error) -> H264Packet? {
        var data: [UInt8] = []
        var isKeyframe = false
        var frameIndex = index
        var received = false
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == camo_averror_eagain() || result == camo_averror_eof() { break }
            guard result >= 0 else { throw .encode(describe(result)) }
            if let bytes = packet.pointee.data, packet.pointee.size > 0 {
                data.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(packet.pointee.size)))
            }
            isKeyframe = isKeyframe || packet.pointee.flags & AV_PKT_FLAG_KEY != 0
            if packet.pointee.pts != camo_av_nopts_value() { frameIndex = packet.pointee.pts }
            received = true
            av_packet_unref(packet)
        }
        return received ? H264Packet(data: data, isKeyframe: isKeyframe, frameIndex: frameIndex) : nil
    }

    private func setOption(
        _ object: UnsafeMutableRawPointer, _ name: String, _ value: String, optional: Bool = false
    ) throws(H264Error) {
        let result = av_opt_set(object, name, value, 0)
        if result < 0 && !optional {
            throw .open("\(settings.kind.rawValue) rejected the option \(name)=\(value): \(describe(result))")
        }
    }

    /// libavcodec's message for `code`, and the last error the encoder logged, if any.
    private func describe(_ code: Int32) -> String {
        let message = FFmpegLog.message(code)
        guard let logged = sink.errors.last else { return message }
        return "\(message) (\(logged))"
    }
}
