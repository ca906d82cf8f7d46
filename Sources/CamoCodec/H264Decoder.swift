import CFFmpeg
import CYUV
import CamoMedia
import Logging

/// Decodes H.264 access units (Annex B) to BGRA frames with libavcodec's h264 decoder.
///
/// Low delay: slice threads only (frame threads would hold pictures back) and AV_CODEC_FLAG_LOW_DELAY,
/// so a stream without B-frames gives each picture back from the call that brought it. The picture is
/// converted with libyuv: I420 (or I422/I444, or NV12) with the matrix and range the stream signals,
/// BT.601 limited range when it signals none.
///
/// Damage: a packet libavcodec rejects throws ``H264Error/corrupt(_:)``; a picture decoded with errors
/// concealed comes back with ``lastPictureDamaged`` set. Either way the decoder stays usable; ask the
/// sender for a keyframe, after which pictures are clean again.
///
/// Owned by one thread or task at a time (not `Sendable`).
public final class H264Decoder {
    /// Whether the last decoded picture had errors concealed (libavcodec's decode_error_flags,
    /// AV_FRAME_FLAG_CORRUPT, or an error it logged while decoding it), or the last packet was rejected.
    /// Ask the sender for a keyframe when it is set.
    public private(set) var lastPictureDamaged = false
    /// Pictures returned so far; the next one's ``VideoFrame/sourceSequence``.
    public private(set) var framesDecoded = 0

    private let context: UnsafeMutablePointer<AVCodecContext>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    private let sink: FFmpegLogSink

    /// Opens libavcodec's H.264 decoder.
    ///
    /// - Throws: ``H264Error/open(_:)`` when libavcodec has no H.264 decoder or cannot open it.
    public init(logger: Logger) throws(H264Error) {
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else {
            throw .open("this libavcodec has no H.264 decoder")
        }
        guard let context = avcodec_alloc_context3(codec), let frame = av_frame_alloc(), let packet = av_packet_alloc() else {
            throw .open("out of memory allocating the H.264 decoder")
        }
        self.context = context
        self.frame = frame
        self.packet = packet
        self.sink = FFmpegLogSink(logger: logger)
        FFmpegLog.register(UnsafeMutableRawPointer(context), sink)
        context.pointee.flags |= AV_CODEC_FLAG_LOW_DELAY
        context.pointee.thread_type = FF_THREAD_SLICE
        context.pointee.thread_count = 0
        let result = avcodec_open2(context, codec, nil)
        guard result >= 0 else { throw .open("the H.264 decoder: \(FFmpegLog.message(result))") }
    }

    deinit {
        FFmpegLog.unregister(UnsafeMutableRawPointer(context))
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
    }

    /// Decodes one access unit (Annex B, SPS and PPS in-band before the first IDR).
    ///
    /// - Parameters:
    ///   - data: the access unit's bytes.
    ///   - captureTime: carried into the returned frame's ``VideoFrame/captureTime``.
    /// - Returns: the picture as a BGRA frame (`bytesPerRow = 4 * width`), or nil when the decoder needs
    ///   more input (e.g. a packet of only SPS and PPS).
    /// - Throws: ``H264Error/corrupt(_:)`` with libavcodec's message when it rejects the data or logs an
    ///   error without giving a picture: damaged or empty packets, and slices before the first keyframe
    ///   (their PPS is unknown). ``H264Error/badFrame(_:)`` for a picture in a layout libyuv cannot
    ///   convert (10-bit, 4:0:0, ...).
    public func decode(_ data: [UInt8], captureTime: UInt64) throws(H264Error) -> VideoFrame? {
        guard !data.isEmpty else {
            lastPictureDamaged = true
            throw .corrupt("the access unit is empty")
        }
        guard let size = Int32(exactly: data.count), av_new_packet(packet, size) >= 0, let destination = packet.pointee.data else {
            throw .corrupt("no packet buffer for \(data.count) bytes")
        }
        data.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { destination.update(from: base, count: data.count) }
        }
        sink.reset()
        let sent = avcodec_send_packet(context, packet)
        av_packet_unref(packet)

        var picture: VideoFrame?
        var damaged = false
        while true {
            let result = avcodec_receive_frame(context, frame)
            if result == camo_averror_eagain() || result == camo_averror_eof() { break }
            guard result >= 0 else {
                lastPictureDamaged = true
                throw .corrupt(describe(result))
            }
            defer { av_frame_unref(frame) }
            damaged = frame.pointee.decode_error_flags != 0 || frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0
            picture = try convert(captureTime: captureTime)
        }
        let logged = sink.errors
        if sent < 0 && sent != camo_averror_eagain() {
            lastPictureDamaged = true
            throw .corrupt(describe(sent))
        }
        guard let picture else {
            // Nothing came out: a damaged packet can do that too, and then the caller should hear of it.
            if logged.count > 0 {
                lastPictureDamaged = true
                throw .corrupt(logged.last ?? "libavcodec reported errors")
            }
            return nil
        }
        lastPictureDamaged = damaged || logged.count > 0
        framesDecoded += 1
        return picture
    }

    /// The decoded AVFrame as a new BGRA frame.
    private func convert(captureTime: UInt64) throws(H264Error) -> VideoFrame {
        let width = Int(frame.pointee.width), height = Int(frame.pointee.height)
        guard width > 0, height > 0 else { throw .badFrame("the decoder gave a picture without pixels") }
        let format = AVPixelFormat(rawValue: frame.pointee.format)
        let fullRange = frame.pointee.color_range == AVCOL_RANGE_JPEG
            || format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P || format == AV_PIX_FMT_YUVJ444P
        let matrix: Int32 = switch frame.pointee.colorspace {
        case AVCOL_SPC_BT709: 1
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: 2
        default: 0
        }
        let constants = camo_yuv_constants(matrix, fullRange ? 1 : 0, 0)
        let stride = width * 4
        var result: Int32 = -1
        let planes = frame.pointee.data, strides = frame.pointee.linesize
        let pixels = [UInt8](unsafeUninitializedCapacity: stride * height) { buffer, count in
            guard let output = buffer.baseAddress else { return }
            let w = Int32(width), h = Int32(height), s = Int32(stride)
            switch format {
            case AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P:
                result = I420ToARGBMatrix(
                    planes.0, strides.0, planes.1, strides.1, planes.2, strides.2, output, s, constants, w, h)
            case AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P:
                result = I422ToARGBMatrix(
                    planes.0, strides.0, planes.1, strides.1, planes.2, strides.2, output, s, constants, w, h)
            case AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P:
                result = I444ToARGBMatrix(
                    planes.0, strides.0, planes.1, strides.1, planes.2, strides.2, output, s, constants, w, h)
            case AV_PIX_FMT_NV12:
                result = NV12ToARGBMatrix(planes.0, strides.0, planes.1, strides.1, output, s, constants, w, h)
            default:
                result = -1
            }
            count = result == 0 ? buffer.count : 0
        }
        guard result == 0 else {
            let name = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "format \(format.rawValue)"
            throw .badFrame("the decoded picture is \(name), which this decoder cannot convert to BGRA")
        }
        return VideoFrame(
            width: width, height: height, bytesPerRow: stride, pixelFormat: .bgra, data: pixels,
            captureTime: captureTime, sourceSequence: UInt64(framesDecoded))
    }

    /// libavcodec's message for `code`, with the last error it logged while decoding, if any.
    private func describe(_ code: Int32) -> String {
        let message = FFmpegLog.message(code)
        guard let logged = sink.errors.last else { return message }
        return "\(message) (\(logged))"
    }
}
