import CGStreamer
import CamoMedia
import Synchronization
import Testing

@testable import CamoLive

/// A browser stand-in nobody here wrote the WebRTC of: GStreamer's own webrtcbin as the offering peer. It asks
/// for H.264 video (recvonly) and, with a microphone, sends a 440 Hz sine as Opus (sendrecv audio); it decodes
/// the video to BGRA and reads each picture's frame number with ``TestPattern/readFrameNumber(_:)``.
/// The unsafe GStreamer calls of the tests live here.
final class WebRTCTestPeer: Sendable {
    struct Received {
        var frameNumbers: [UInt64] = []
        var unreadableFrames = 0
        var audioBuffers = 0
    }

    private let pipeline: GstElementRef
    private let webrtc: GstElementRef
    let received = Mutex(Received())
    private let stopped = Mutex(false)

    /// A peer; `microphone` false makes its audio recvonly (a browser without microphone access).
    init(microphone: Bool = true) throws {
        GStreamerRuntime.shared.start()
        var description = "webrtcbin name=peer bundle-policy=max-bundle"
        if microphone {
            description += " audiotestsrc is-live=true wave=sine freq=440 volume=0.5 ! audioconvert ! audioresample"
                + " ! audio/x-raw,rate=48000,channels=2 ! opusenc ! rtpopuspay pt=111"
                + " ! application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=111 ! peer.sink_0"
        }
        pipeline = try GstCalls.launch(description).get()
        webrtc = try #require(GstCalls.child(pipeline, "peer"))
        if !microphone {
            let audio = gst_caps_from_string("application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=111")
            camo_webrtc_add_transceiver(webrtc.pointer, GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, audio)
            gst_caps_unref(audio)
        }
        let video = gst_caps_from_string(
            "application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=102,"
                + "packetization-mode=(string)1,profile-level-id=(string)42e01f")
        camo_webrtc_add_transceiver(webrtc.pointer, GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY, video)
        gst_caps_unref(video)
        let padAdded: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutablePointer<GstPad>?, UnsafeMutableRawPointer?) -> Void = {
            _, pad, data in
            guard let pad, let data else { return }
            Unmanaged<WebRTCTestPeer>.fromOpaque(data).takeUnretainedValue().incoming(pad)
        }
        GstCalls.connect(UnsafeMutableRawPointer(webrtc.pointer), "pad-added", unsafeBitCast(padAdded, to: GCallback.self), context: self)
        #expect(GstCalls.play(pipeline, baseTime: GstCalls.monotonicNow()))
    }

    /// Creates the offer, applies it, waits (bounded) for ICE gathering and returns its SDP with candidates.
    func createOffer() async throws -> String {
        let webrtc = self.webrtc.pointer
        let promise = try #require(await GstCalls.settle(timeout: .seconds(5)) { camo_webrtc_create_offer(webrtc, $0) })
        defer { gst_promise_unref(promise) }
        let offer = try #require(camo_webrtc_promise_description(promise, "offer"))
        defer { gst_webrtc_session_description_free(offer) }
        let applied = try #require(await GstCalls.settle(timeout: .seconds(5)) { camo_webrtc_set_local_description(webrtc, offer, $0) })
        gst_promise_unref(applied)
        let complete = Int32(GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE.rawValue)
        for _ in 0..<100 where camo_g_object_get_int(webrtc, "ice-gathering-state") != complete {
            try await Task.sleep(for: .milliseconds(50))
        }
        return try #require(GstCalls.take(camo_webrtc_description_text(webrtc, "local-description")))
    }

    /// Applies the answer.
    func accept(answer text: String) async throws {
        let answer = try #require(camo_webrtc_description_from_text(GST_WEBRTC_SDP_TYPE_ANSWER, text))
        defer { gst_webrtc_session_description_free(answer) }
        let webrtc = self.webrtc.pointer
        let promise = try #require(await GstCalls.settle(timeout: .seconds(5)) { camo_webrtc_set_remote_description(webrtc, answer, $0) })
        var failure: UnsafeMutablePointer<gchar>?
        let succeeded = camo_webrtc_promise_succeeded(promise, &failure) != 0
        gst_promise_unref(promise)
        #expect(succeeded, "the peer refused the answer: \(GstCalls.take(failure) ?? "")")
    }

    /// The peer connection's state (GstWebRTCPeerConnectionState).
    var isConnected: Bool {
        camo_g_object_get_int(webrtc.pointer, "connection-state") == Int32(GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED.rawValue)
    }

    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        GstCalls.stop(pipeline)
        webrtc.release()
    }

    private func incoming(_ pad: UnsafeMutablePointer<GstPad>) {
        let media = GstCalls.take(camo_pad_caps_media(pad))
        let description = media == "video"
            ? "rtph264depay ! avdec_h264 ! videoconvert ! video/x-raw,format=BGRA ! appsink name=sink emit-signals=true sync=false"
            : "rtpopusdepay ! opusdec ! appsink name=sink emit-signals=true sync=false"
        guard let branch = GstCalls.bin(description), let sink = GstCalls.child(branch, "sink") else { return }
        let video: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutableRawPointer?) -> GstFlowReturn = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_sample(GstElementRef(pointer: sink).appSink) else { return GST_FLOW_OK }
            Unmanaged<WebRTCTestPeer>.fromOpaque(data).takeUnretainedValue().decoded(sample)
            return GST_FLOW_OK
        }
        let audio: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutableRawPointer?) -> GstFlowReturn = { sink, data in
            guard let sink, let data, let sample = gst_app_sink_pull_sample(GstElementRef(pointer: sink).appSink) else { return GST_FLOW_OK }
            gst_sample_unref(sample)
            Unmanaged<WebRTCTestPeer>.fromOpaque(data).takeUnretainedValue().received.withLock { $0.audioBuffers += 1 }
            return GST_FLOW_OK
        }
        GstCalls.connect(
            UnsafeMutableRawPointer(sink.pointer), "new-sample", unsafeBitCast(media == "video" ? video : audio, to: GCallback.self), context: self)
        sink.release()
        gst_bin_add(pipeline.bin, branch.pointer)
        if let sinkPad = gst_element_get_static_pad(branch.pointer, "sink") {
            _ = gst_pad_link(pad, sinkPad)
            gst_object_unref(UnsafeMutableRawPointer(sinkPad))
        }
        _ = gst_element_sync_state_with_parent(branch.pointer)
    }

    private func decoded(_ sample: OpaquePointer) {
        defer { gst_sample_unref(sample) }
        var width: gint = 0
        var height: gint = 0
        guard let caps = gst_sample_get_caps(sample), let structure = gst_caps_get_structure(caps, 0),
            gst_structure_get_int(structure, "width", &width) != 0, gst_structure_get_int(structure, "height", &height) != 0,
            let buffer = gst_sample_get_buffer(sample)
        else { return }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return }
        let bytes = Array(UnsafeBufferPointer(start: map.data, count: Int(map.size)))
        gst_buffer_unmap(buffer, &map)
        let rowBytes = Int(width) * 4
        guard bytes.count >= rowBytes * Int(height) else { return }
        let frame = VideoFrame(width: Int(width), height: Int(height), bytesPerRow: rowBytes, data: bytes, captureTime: 0)
        let number = TestPattern.readFrameNumber(frame)
        received.withLock { received in
            if let number { received.frameNumbers.append(number) } else { received.unreadableFrames += 1 }
        }
    }
}

/// Reading a WAV file written by wavenc (16-bit PCM).
enum WAVReader {
    /// The first channel's samples of a 16-bit PCM WAV (the "data" chunk; its size as found in the file, so a file
    /// whose header was never finalized still reads), and the channel count.
    static func firstChannel(of bytes: [UInt8]) -> (samples: [Int16], rate: Int)? {
        guard bytes.count > 44, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46] else { return nil }
        var offset = 12
        var channels = 2
        var rate = 48000
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            let body = offset + 8
            if id == "fmt ", body + 8 <= bytes.count {
                channels = Int(bytes[body + 2]) | Int(bytes[body + 3]) << 8
                rate = Int(bytes[body + 4]) | Int(bytes[body + 5]) << 8 | Int(bytes[body + 6]) << 16
            } else if id == "data" {
                let end = min(bytes.count, size == 0 ? bytes.count : body + size)
                var samples: [Int16] = []
                var index = body
                while index + 2 * channels <= end {
                    samples.append(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8))
                    index += 2 * channels
                }
                return (samples, rate)
            }
            offset = body + size + (size & 1)
        }
        return nil
    }

    /// The frequency of a tone from its zero crossings (rising), in Hz.
    static func frequency(of samples: ArraySlice<Int16>, rate: Int) -> Double {
        var crossings: [Int] = []
        var previous = samples.first ?? 0
        for (index, sample) in zip(samples.indices, samples) {
            if previous < 0, sample >= 0 { crossings.append(index) }
            previous = sample
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * Double(rate) / Double(last - first)
    }
}
