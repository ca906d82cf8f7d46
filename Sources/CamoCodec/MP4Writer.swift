import CFFmpeg
import Logging

/// Records an H.264 stream as it is (no re-encode) and AAC audio into an MP4 file with libavformat.
///
/// Video arrives as Annex B access units (SPS and PPS in-band at keyframes, as ``H264Encoder`` makes them);
/// libavformat's mp4 muxer rewrites them length-prefixed and builds the avcC box from the first keyframe's
/// parameter sets. The first video packet written must be a keyframe: earlier ones are skipped and counted
/// in ``skippedBeforeKeyframe``.
///
/// Audio arrives as interleaved Float samples (48 kHz stereo by default) and is encoded with FFmpeg's native
/// `aac` encoder (FFmpeg 5.1's mp4 muxer takes no PCM), 64 kb/s per channel, in frames of 1024 samples.
///
/// Timestamps are nanoseconds of one clock for both streams; the writer rebases them to the first timestamp
/// it is given (audio or video), so the two stay aligned. Video keeps every packet's own time (a packet not
/// later than the one before is moved one tick after it); audio is continuous from its first packet's time,
/// and a gap of more than 100 ms before a later packet's time is filled with silence. Samples timed before
/// the first timestamp are dropped.
///
/// ``finish()`` drains the audio encoder and writes the index (moov); nothing may be written after it. A
/// writer released without ``finish()`` finishes in its deinit, ignoring errors. A plain MP4 is not crash-safe: a
/// process that dies before finishing leaves a file without an index. A fragmented one (`fragmented: true`: CMAF,
/// the track headers written with the first fragment, then a fragment per keyframe) plays up to its last complete fragment. Without audio
/// (`audio: false`) the file has no audio track and ``writeAudio(_:timeNanos:)`` ignores what it is given. Owned by
/// one thread or task at a time.
public final class MP4Writer {
    /// The mp4 muxer's flags for CMAF (`fragmented: true`): a fragment per keyframe, the moov written once the first
    /// packet gives the avcC, each fragment's offsets from its own moof.
    public static let cmafMovflags = "cmaf+frag_keyframe+empty_moov+delay_moov+default_base_moof"
    /// Video packets that arrived before the first keyframe and were not written.
    public private(set) var skippedBeforeKeyframe: Int = 0
    /// The file's path.
    public let path: String

    private let format: UnsafeMutablePointer<AVFormatContext>
    private let videoStream: UnsafeMutablePointer<AVStream>
    private let audioStream: UnsafeMutablePointer<AVStream>?
    private let audioEncoder: UnsafeMutablePointer<AVCodecContext>?
    private let audioFrame: UnsafeMutablePointer<AVFrame>?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let sink: FFmpegLogSink
    private let fps: Int
    private let sampleRate: Int
    private let channels: Int
    /// Samples of the encoder's frame (1024 for AAC).
    private let frameSamples: Int

    private var headerWritten = false
    private var fileOpen = false
    private var finished = false
    /// A write failed (a full disk, say): the file is given up, and nothing more is written to it.
    private var broken = false
    private var baseTime: UInt64?
    private var lastVideoTimestamp: Int64?
    /// The next audio frame's first sample, counted from the base time; nil before the first audio.
    private var nextAudioSample: Int64?
    /// Interleaved samples not yet encoded (fewer than one frame between calls).
    private var pendingAudio: [Float] = []

    /// Creates (or replaces) the file at `path` and writes its header.
    ///
    /// - Parameters:
    ///   - width, height: the video's size (that of the H.264 stream).
    ///   - fps: the nominal frame rate, written as the stream's frame rate.
    ///   - audioSampleRate, audioChannels: the layout of the samples ``writeAudio(_:timeNanos:)`` gets.
    ///   - audio: whether the file has an audio track.
    ///   - fragmented: CMAF (fragmented MP4, a fragment per keyframe) instead of one index at the end.
    ///   - logger: where libavformat's and the AAC encoder's messages go.
    /// - Throws: ``H264Error/open(_:)`` for bad parameters, a missing AAC encoder, or a file that cannot be
    ///   created.
    public init(
        path: String, width: Int, height: Int, fps: Int = 30, audioSampleRate: Int = 48_000, audioChannels: Int = 2,
        audio: Bool = true, fragmented: Bool = false, logger: Logger = Logger(label: "camo.codec.mp4")
    ) throws(H264Error) {
        guard width > 0, height > 0, width <= 8192, height <= 8192 else {
            throw .open("the MP4 video size \(width)x\(height) is not usable")
        }
        guard (1...240).contains(fps) else { throw .open("the MP4 frame rate \(fps) fps is outside 1...240") }
        guard (8_000...96_000).contains(audioSampleRate), (1...8).contains(audioChannels) else {
            throw .open("the MP4 audio layout \(audioSampleRate) Hz x \(audioChannels) channels is not usable")
        }
        let codec = avcodec_find_encoder_by_name("aac")
        if audio && codec == nil { throw .open("this libavcodec has no native aac encoder") }
        var allocated: UnsafeMutablePointer<AVFormatContext>?
        let created = avformat_alloc_output_context2(&allocated, nil, "mp4", path)
        guard created >= 0, let format = allocated else {
            throw .open("libavformat has no mp4 muxer: \(FFmpegLog.message(created))")
        }
        guard let videoStream = avformat_new_stream(format, nil), let packet = av_packet_alloc() else {
            avformat_free_context(format)
            throw .open("out of memory setting up the MP4 writer")
        }
        var audioParts: (UnsafeMutablePointer<AVStream>, UnsafeMutablePointer<AVCodecContext>, UnsafeMutablePointer<AVFrame>)?
        if audio {
            guard let audioStream = avformat_new_stream(format, nil), let audioEncoder = avcodec_alloc_context3(codec),
                let audioFrame = av_frame_alloc()
            else {
                avformat_free_context(format)
                var packet: UnsafeMutablePointer<AVPacket>? = packet
                av_packet_free(&packet)
                throw .open("out of memory setting up the MP4 writer")
            }
            audioParts = (audioStream, audioEncoder, audioFrame)
        }
        self.path = path
        self.format = format
        self.videoStream = videoStream
        self.audioStream = audioParts?.0
        self.audioEncoder = audioParts?.1
        self.audioFrame = audioParts?.2
        self.packet = packet
        self.sink = FFmpegLogSink(logger: logger)
        self.fps = fps
        self.sampleRate = audioSampleRate
        self.channels = audioChannels
        FFmpegLog.register(UnsafeMutableRawPointer(format), sink)

        if let (audioStream, audioEncoder, audioFrame) = audioParts {
            FFmpegLog.register(UnsafeMutableRawPointer(audioEncoder), sink)
            // Audio: native AAC, planar float, global header (mp4 keeps the AudioSpecificConfig in esds).
            audioEncoder.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
            audioEncoder.pointee.sample_rate = Int32(audioSampleRate)
            av_channel_layout_default(&audioEncoder.pointee.ch_layout, Int32(audioChannels))
            audioEncoder.pointee.bit_rate = Int64(64_000 * audioChannels)
            audioEncoder.pointee.time_base = AVRational(num: 1, den: Int32(audioSampleRate))
            if format.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
                audioEncoder.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
            }
            let opened = avcodec_open2(audioEncoder, codec, nil)
            frameSamples = Int(audioEncoder.pointee.frame_size)
            guard opened >= 0, frameSamples > 0 else {
                throw .open("the aac encoder at \(audioSampleRate) Hz x \(audioChannels): \(FFmpegLog.message(opened))")
            }
            audioFrame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
            audioFrame.pointee.sample_rate = Int32(audioSampleRate)
            audioFrame.pointee.nb_samples = Int32(frameSamples)
            _ = av_channel_layout_copy(&audioFrame.pointee.ch_layout, &audioEncoder.pointee.ch_layout)
            guard av_frame_get_buffer(audioFrame, 0) >= 0 else { throw .open("no audio frame buffer") }
            let copied = avcodec_parameters_from_context(audioStream.pointee.codecpar, audioEncoder)
            guard copied >= 0 else { throw .open("the AAC stream parameters: \(FFmpegLog.message(copied))") }
            audioStream.pointee.time_base = audioEncoder.pointee.time_base
        } else {
            frameSamples = 1_024
        }

        // Video: H.264 as it comes, on a 90 kHz clock.
        let video = videoStream.pointee.codecpar!
        video.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        video.pointee.codec_id = AV_CODEC_ID_H264
        video.pointee.width = Int32(width)
        video.pointee.height = Int32(height)
        video.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        video.pointee.color_range = AVCOL_RANGE_MPEG
        video.pointee.color_space = AVCOL_SPC_SMPTE170M
        videoStream.pointee.time_base = AVRational(num: 1, den: 90_000)
        videoStream.pointee.avg_frame_rate = AVRational(num: Int32(fps), den: 1)
        videoStream.pointee.r_frame_rate = AVRational(num: Int32(fps), den: 1)

        let io = avio_open(&format.pointee.pb, path, AVIO_FLAG_WRITE)
        guard io >= 0 else { throw .open("cannot create \(path): \(FFmpegLog.message(io))") }
        fileOpen = true
        var options: OpaquePointer?
        if fragmented { av_dict_set(&options, "movflags", Self.cmafMovflags, 0) }
        let header = avformat_write_header(format, &options)
        av_dict_free(&options)
        guard header >= 0 else { throw .open("the MP4 header of \(path): \(describe(header))") }
        headerWritten = true
    }

    deinit {
        if headerWritten && !finished && !broken { try? finish() }
        if fileOpen { avio_closep(&format.pointee.pb) }
        FFmpegLog.unregister(UnsafeMutableRawPointer(format))
        if let audioEncoder { FFmpegLog.unregister(UnsafeMutableRawPointer(audioEncoder)) }
        avformat_free_context(format)
        var audioEncoder: UnsafeMutablePointer<AVCodecContext>? = audioEncoder
        avcodec_free_context(&audioEncoder)
        var audioFrame: UnsafeMutablePointer<AVFrame>? = audioFrame
        av_frame_free(&audioFrame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
    }

    /// Writes one H.264 access unit (Annex B) captured at `timeNanos`.
    ///
    /// - Throws: ``H264Error/mux(_:)`` after ``finish()``, or when libavformat fails to write.
    public func writeVideo(_ data: [UInt8], isKeyframe: Bool, timeNanos: UInt64) throws(H264Error) {
        guard !finished else { throw .mux("video arrived after finish()") }
        guard !broken else { throw .mux("an earlier write failed; the file is incomplete") }
        guard lastVideoTimestamp != nil || isKeyframe else {
            skippedBeforeKeyframe += 1
            return
        }
        guard !data.isEmpty, let size = Int32(exactly: data.count) else { throw .mux("an empty or oversized video packet") }
        let base = baseTime ?? timeNanos
        baseTime = base
        let timeBase = videoStream.pointee.time_base
        var timestamp = max(0, av_rescale_q(Self.offset(timeNanos, from: base), Self.nanoseconds, timeBase))
        if let last = lastVideoTimestamp, timestamp <= last { timestamp = last + 1 }
        lastVideoTimestamp = timestamp

        guard av_new_packet(packet, size) >= 0, let destination = packet.pointee.data else {
            throw .mux("no packet buffer for \(data.count) bytes")
        }
        data.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { destination.update(from: base, count: data.count) }
        }
        packet.pointee.pts = timestamp
        packet.pointee.dts = timestamp
        packet.pointee.duration = av_rescale_q(1, AVRational(num: 1, den: Int32(fps)), timeBase)
        packet.pointee.flags = isKeyframe ? AV_PKT_FLAG_KEY : 0
        packet.pointee.stream_index = videoStream.pointee.index
        let result = av_interleaved_write_frame(format, packet)
        guard result >= 0 else {
            broken = true
            throw .mux("writing a video packet: \(describe(result))")
        }
    }

    /// Writes interleaved Float samples (`audioChannels` per sample frame) whose first was captured at
    /// `timeNanos`; they are encoded to AAC a 1024-sample frame at a time.
    ///
    /// - Throws: ``H264Error/mux(_:)`` after ``finish()``, for a count that is not a whole number of sample
    ///   frames, or when encoding or writing fails.
    public func writeAudio(_ samples: [Float], timeNanos: UInt64) throws(H264Error) {
        guard !finished else { throw .mux("audio arrived after finish()") }
        guard !broken else { throw .mux("an earlier write failed; the file is incomplete") }
        guard samples.count % channels == 0 else {
            throw .mux("\(samples.count) samples are not whole frames of \(channels) channels")
        }
        guard !samples.isEmpty, audioEncoder != nil else { return }
        let base = baseTime ?? timeNanos
        baseTime = base
        let due = av_rescale_q(
            Self.offset(timeNanos, from: base), Self.nanoseconds, AVRational(num: 1, den: Int32(sampleRate)))
        var incoming = samples[...]
        if let next = nextAudioSample {
            // Continuous audio; a gap over 100 ms (lost capture) becomes silence so video stays in step. A gap over a
            // second (a long pause) is not filled, which would hold it all in memory at once: the audio starts again at
            // its own time (AAC frames carry their timestamps), dropping the part of a frame still waiting.
            let queuedEnd = next + Int64(pendingAudio.count / channels)
            if due - queuedEnd > Int64(sampleRate) {
                pendingAudio.removeAll(keepingCapacity: true)
                nextAudioSample = due
            } else if due - queuedEnd > Int64(sampleRate / 10) {
                pendingAudio.append(contentsOf: repeatElement(0, count: Int(due - queuedEnd) * channels))
            }
        } else {
            // The first audio: it starts at its own time; anything before the base time is dropped.
            let skipped = min(Int(max(0, -due)), samples.count / channels)
            incoming = incoming.dropFirst(skipped * channels)
            guard !incoming.isEmpty else { return }
            nextAudioSample = max(0, due)
        }
        pendingAudio.append(contentsOf: incoming)
        let frameLength = frameSamples * channels
        var consumed = 0
        defer { pendingAudio.removeFirst(consumed) }
        while pendingAudio.count - consumed >= frameLength {
            do {
                try encodeAudio(pendingAudio[consumed..<(consumed + frameLength)])
            } catch {
                broken = true
                throw error
            }
            consumed += frameLength
        }
    }

    /// Encodes what audio is left, drains the encoder and writes the MP4 index. Call once, last.
    ///
    /// - Throws: ``H264Error/mux(_:)`` when called twice or when libavformat fails.
    public func finish() throws(H264Error) {
        guard !finished else { throw .mux("finish() was called twice") }
        finished = true
        guard !broken else { throw .mux("an earlier write failed; the file is incomplete") }
        if let audioEncoder {
            try finishAudio(audioEncoder)
        }
        let trailer = av_write_trailer(format)
        guard trailer >= 0 else { throw .mux("writing the MP4 index: \(describe(trailer))") }
        let closed = avio_closep(&format.pointee.pb)
        fileOpen = false
        guard closed >= 0 else { throw .mux("closing \(path): \(describe(closed))") }
    }

    /// Encodes what audio is left and drains the encoder.
    private func finishAudio(_ audioEncoder: UnsafeMutablePointer<AVCodecContext>) throws(H264Error) {
        if !pendingAudio.isEmpty {
            // The native encoder takes a short last frame; one that does not gets it padded with silence.
            if audioEncoder.pointee.codec.pointee.capabilities & AV_CODEC_CAP_SMALL_LAST_FRAME == 0 {
                let missing = frameSamples * channels - pendingAudio.count
                pendingAudio.append(contentsOf: repeatElement(0, count: max(0, missing)))
            }
            // One encoder frame at a time (the frame's buffer holds one).
            let frameLength = frameSamples * channels
            var start = 0
            while start < pendingAudio.count {
                try encodeAudio(pendingAudio[start..<min(start + frameLength, pendingAudio.count)])
                start += frameLength
            }
            pendingAudio = []
        }
        let drained = avcodec_send_frame(audioEncoder, nil)
        guard drained >= 0 else { throw .mux("draining the AAC encoder: \(describe(drained))") }
        try writeAudioPackets()
    }

    /// Encodes up to one frame of interleaved samples (fewer only for the last frame).
    private func encodeAudio(_ samples: ArraySlice<Float>) throws(H264Error) {
        guard let next = nextAudioSample, let audioFrame, let audioEncoder else { return }
        guard av_frame_make_writable(audioFrame) >= 0 else { throw .mux("no writable audio frame") }
        let count = samples.count / channels
        audioFrame.pointee.nb_samples = Int32(count)
        // Planar float: one plane per channel (extended_data[channel]).
        if let planes = audioFrame.pointee.extended_data {
            samples.withUnsafeBufferPointer { source in
                for channel in 0..<channels {
                    guard let plane = planes[channel] else { continue }
                    let output = UnsafeMutableRawPointer(plane).assumingMemoryBound(to: Float.self)
                    for index in 0..<count { output[index] = source[index * channels + channel] }
                }
            }
        }
        audioFrame.pointee.pts = next
        nextAudioSample = next + Int64(count)
        let sent = avcodec_send_frame(audioEncoder, audioFrame)
        guard sent >= 0 else { throw .mux("encoding AAC: \(describe(sent))") }
        try writeAudioPackets()
    }

    /// Writes every packet the AAC encoder has ready.
    private func writeAudioPackets() throws(H264Error) {
        guard let audioEncoder, let audioStream else { return }
        while true {
            let received = avcodec_receive_packet(audioEncoder, packet)
            if received == camo_averror_eagain() || received == camo_averror_eof() { return }
            guard received >= 0 else { throw .mux("encoding AAC: \(describe(received))") }
            av_packet_rescale_ts(packet, audioEncoder.pointee.time_base, audioStream.pointee.time_base)
            packet.pointee.stream_index = audioStream.pointee.index
            let written = av_interleaved_write_frame(format, packet)
            guard written >= 0 else { throw .mux("writing an audio packet: \(describe(written))") }
        }
    }

    private static let nanoseconds = AVRational(num: 1, den: 1_000_000_000)

    /// `time - base` in nanoseconds, negative when `time` is earlier.
    private static func offset(_ time: UInt64, from base: UInt64) -> Int64 {
        time >= base ? Int64(clamping: time - base) : -Int64(clamping: base - time)
    }

    /// libavformat's message for `code`, with the last error it logged, if any.
    private func describe(_ code: Int32) -> String {
        let message = FFmpegLog.message(code)
        guard let logged = sink.errors.last else { return message }
        return "\(message) (\(logged))"
    }
}
