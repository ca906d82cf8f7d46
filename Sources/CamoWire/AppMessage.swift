/// The type byte of an application message.
public enum AppMessageType: UInt8, Sendable, CaseIterable {
    /// `studioHello`
    case studioHello = 0x01
    /// `agentHello`
    case agentHello = 0x02
    /// `setAudioSamples`
    case setAudioSamples = 0x03
    /// `setVideo`
    case setVideo = 0x04
    /// `ping`
    case ping = 0x05
    /// `pong`
    case pong = 0x06
    /// `pauseRequest`
    case pauseRequest = 0x07
    /// `streamState`
    case streamState = 0x08
    /// `goodbye`
    case goodbye = 0x09
    /// `stats`
    case stats = 0x0A
    /// `keyframeRequest` (1.1)
    case keyframeRequest = 0x0B
    /// `receiverReport` (1.1)
    case receiverReport = 0x0C
    /// `settingsRequest` (1.2)
    case settingsRequest = 0x0D
    /// `settings` (1.2)
    case settings = 0x0E
    /// `settingsWrite` (1.2)
    case settingsWrite = 0x0F
    /// `settingsResult` (1.2)
    case settingsResult = 0x11
    /// `eventsRequest` (1.3)
    case eventsRequest = 0x12
    /// `eventNotice` (1.3)
    case eventNotice = 0x13
    /// `clipListRequest` (1.4)
    case clipListRequest = 0x14
    /// `clipList` (1.4)
    case clipList = 0x15
    /// `clipFetch` (1.4)
    case clipFetch = 0x16
    /// `clipData` (1.4)
    case clipData = 0x17
    /// `video`
    case video = 0x10
    /// `audio`
    case audio = 0x20
    /// `error`
    case error = 0x7E

    /// Which side may send it: nil = both, true = only the studio (initiator), false = only the agent.
    public var sentByStudio: Bool? {
        switch self {
        case .studioHello, .setAudioSamples, .setVideo, .pauseRequest, .keyframeRequest, .receiverReport, .settingsRequest, .settingsWrite, .eventsRequest,
            .clipListRequest, .clipFetch: true
        case .agentHello, .streamState, .stats, .video, .audio, .settings, .settingsResult, .eventNotice, .clipList, .clipData: false
        case .ping, .pong, .goodbye, .error: nil
        }
    }

    /// The channel the message travels on.
    public var channel: WireChannel {
        switch self {
        case .video: .video
        case .audio: .audio
        default: .control
        }
    }
}

/// An application message of wire format v1: `type u8` + body, integers big-endian.
public enum AppMessage: Sendable, Equatable {
    /// 0x01, studio → agent.
    case studioHello(StudioHello)
    /// 0x02, agent → studio.
    case agentHello(AgentHello)
    /// 0x03, studio → agent: new audio packet size, 64...48000 sample frames.
    case setAudioSamples(UInt32)
    /// 0x04, studio → agent: new video size / codec.
    case setVideo(VideoRequest)
    /// 0x05, both.
    case ping(Ping)
    /// 0x06, both.
    case pong(Pong)
    /// 0x07, studio → agent: true = pause this session, false = resume.
    case pauseRequest(Bool)
    /// 0x08, agent → studio.
    case streamState(StreamState)
    /// 0x09, both: an orderly close the sender asked for.
    case goodbye(WireError)
    /// 0x0A, agent → studio.
    case stats(SessionStats)
    /// 0x0B, studio → agent (1.1): send a keyframe soon.
    case keyframeRequest(KeyframeReason)
    /// 0x0C, studio → agent (1.1): what arrived, for rate control.
    case receiverReport(ReceiverReport)
    /// 0x0D, studio → agent (1.2): send the whole settings model.
    case settingsRequest
    /// 0x0E, agent → studio (1.2): the settings model, or the attributes that changed.
    case settings(SettingsSnapshot)
    /// 0x0F, studio → agent (1.2): set one or more settings.
    case settingsWrite(SettingsWrite)
    /// 0x11, agent → studio (1.2): what a write applied and refused.
    case settingsResult(SettingsResult)
    /// 0x12, studio → agent (1.3): send the camera's events from now on (`true`: the ones kept first).
    case eventsRequest(replay: Bool)
    /// 0x13, agent → studio (1.3): one change of an event.
    case eventNotice(WireEvent)
    /// 0x14, studio → agent (1.4): list the recordings older than `before` (0: from the newest).
    case clipListRequest(before: UInt64)
    /// 0x15, agent → studio (1.4): a page of recordings, or why there is none.
    case clipList(WireClipList)
    /// 0x16, studio → agent (1.4): send a piece of a recording.
    case clipFetch(ClipFetch)
    /// 0x17, agent → studio (1.4): the piece, or why there is none.
    case clipData(ClipData)
    /// 0x10, agent → studio, channel video.
    case video(VideoMessage)
    /// 0x20, agent → studio, channel audio.
    case audio(AudioMessage)
    /// 0x7E, both: sent before a close the peer did not ask for.
    case error(WireError)

    /// The type byte.
    public var type: AppMessageType {
        switch self {
        case .studioHello: .studioHello
        case .agentHello: .agentHello
        case .setAudioSamples: .setAudioSamples
        case .setVideo: .setVideo
        case .ping: .ping
        case .pong: .pong
        case .pauseRequest: .pauseRequest
        case .streamState: .streamState
        case .goodbye: .goodbye
        case .stats: .stats
        case .keyframeRequest: .keyframeRequest
        case .receiverReport: .receiverReport
        case .settingsRequest: .settingsRequest
        case .settings: .settings
        case .settingsWrite: .settingsWrite
        case .settingsResult: .settingsResult
        case .eventsRequest: .eventsRequest
        case .eventNotice: .eventNotice
        case .clipListRequest: .clipListRequest
        case .clipList: .clipList
        case .clipFetch: .clipFetch
        case .clipData: .clipData
        case .video: .video
        case .audio: .audio
        case .error: .error
        }
    }

    /// video → `.video`, audio → `.audio`, everything else → `.control`.
    public var channel: WireChannel { type.channel }

    /// The bytes before the bulk data: for video and audio the header, for the rest the whole message.
    public func encodeHeader() -> [UInt8] {
        switch self {
        case .video(let video): return video.encodeHeader()
        case .audio(let audio): return audio.encodeHeader()
        default: return encoded()
        }
    }

    /// The bulk data that follows `encodeHeader()` (video and audio), else empty.
    public var bulkData: ArraySlice<UInt8> {
        switch self {
        case .video(let video): video.data[...]
        case .audio(let audio): audio.data[...]
        default: []
        }
    }

    /// The whole message. For big video prefer `encodeHeader()` + `data` through `MessageFragmenter`.
    public func encoded() -> [UInt8] {
        switch self {
        case .video(let video): return video.encodeHeader() + video.data
        case .audio(let audio): return audio.encodeHeader() + audio.data
        default: break
        }
        var w = ByteWriter()
        w.u8(type.rawValue)
        switch self {
        case .studioHello(let hello): hello.encode(into: &w)
        case .agentHello(let hello): hello.encode(into: &w)
        case .setAudioSamples(let samples): w.u32(samples)
        case .setVideo(let request):
            w.u16(request.width)
            w.u16(request.height)
            w.u8(request.codec.rawValue)
            w.u8(request.jpegQuality)
        case .ping(let ping):
            w.u32(ping.sequence)
            w.u64(ping.sentAt)
        case .pong(let pong):
            w.u32(pong.sequence)
            w.u64(pong.echoedSentAt)
            w.u64(pong.receivedAt)
        case .pauseRequest(let paused): w.u8(paused ? 1 : 0)
        case .streamState(let state): w.u8(state.rawValue)
        case .goodbye(let error), .error(let error):
            w.u16(error.code.rawValue)
            w.str16(error.reason)
        case .stats(let stats):
            w.u64(stats.framesSent)
            w.u64(stats.framesDropped)
            w.u64(stats.framesRepeated)
            w.u64(stats.audioPackets)
            w.u64(stats.rttNanos)
            if let rate = stats.rate {
                w.u64(rate.framesSkipped)
                w.u32(rate.targetBitrate)
                w.u32(rate.queueDelayMicros)
            }
        case .keyframeRequest(let reason): w.u8(reason.rawValue)
        case .receiverReport(let report):
            w.u32(report.sequence)
            w.u64(report.intervalNanos)
            w.u64(report.bytesReceived)
            w.u32(report.framesLost)
            // At most maxFrames (the newest), so the count fits its byte.
            let frames = report.frames.suffix(ReceiverReport.maxFrames)
            w.u8(UInt8(frames.count))
            for frame in frames {
                w.u32(frame.sequence)
                w.u64(frame.captureTime)
                w.u64(frame.receivedAt)
                w.u32(frame.bytes)
            }
        case .settingsRequest: break
        case .settings(let snapshot): SettingsJSON.encode(snapshot, into: &w)
        case .settingsWrite(let write): SettingsJSON.encode(write, into: &w)
        case .settingsResult(let result): SettingsJSON.encode(result, into: &w)
        case .eventsRequest(let replay): w.u8(replay ? 1 : 0)
        case .eventNotice(let event): SettingsJSON.encode(event, into: &w)
        case .clipListRequest(let before): w.u64(before)
        case .clipList(let list): SettingsJSON.encode(list, into: &w)
        case .clipFetch(let fetch):
            w.u64(fetch.id)
            w.u64(fetch.offset)
            w.u32(fetch.length)
        case .clipData(let piece):
            w.u64(piece.id)
            w.u64(piece.offset)
            w.u64(piece.total)
            w.str16(piece.refusal ?? "")
            w.bytes.append(contentsOf: piece.data)
        case .video, .audio: break  // handled above
        }
        return w.bytes
    }

    /// Decodes one reassembled message, strictly: wrong lengths, trailing bytes, bad UTF-8, control
    /// characters and out-of-range values throw a `WireError` (`protocolViolation`, or `badRequest` for
    /// out-of-range studio requests, `unsupportedVersion` for a hello of another major version).
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> AppMessage {
        try decode(bytes[...])
    }

    /// Decodes one reassembled message from a slice.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> AppMessage {
        guard let typeByte = bytes.first else { throw .violation("an application message is empty (no type byte)") }
        guard let type = AppMessageType(rawValue: typeByte) else {
            throw .violation("application message type 0x\(String(typeByte, radix: 16)) is unknown")
        }
        var r = ByteReader(bytes.dropFirst(), context: "\(type)")
        let message: AppMessage
        switch type {
        case .studioHello: return .studioHello(try StudioHello.decode(&r))
        case .agentHello: return .agentHello(try AgentHello.decode(&r))
        case .video: return .video(try VideoMessage.decode(&r))
        case .audio: return .audio(try AudioMessage.decode(&r))
        case .setAudioSamples:
            let samples = try r.u32("audioSamplesRequired")
            try r.expectEnd()
            guard WireLimits.audioSamplesRequired.contains(samples) else {
                throw WireError(.badRequest, "setAudioSamples asks for \(samples) samples per packet; the range is 64...48000")
            }
            message = .setAudioSamples(samples)
        case .setVideo:
            let width = try r.u16("width")
            let height = try r.u16("height")
            let codecByte = try r.u8("codec")
            let quality = try r.u8("jpegQuality")
            try r.expectEnd()
            try checkVideoSize(width: width, height: height, field: "setVideo size", code: .badRequest)
            guard let codec = VideoCodecRequest(rawValue: codecByte) else {
                throw WireError(.badRequest, "setVideo asks for codec \(codecByte); 1.1 knows 0 (agent decides), 1 (bgra), 2 (jpeg), 3 (h264)")
            }
            guard quality <= 100 else {
                throw WireError(.badRequest, "setVideo asks for JPEG quality \(quality); the range is 1...100, or 0 for the default")
            }
            message = .setVideo(VideoRequest(width: width, height: height, codec: codec, jpegQuality: quality))
        case .ping:
            message = .ping(Ping(sequence: try r.u32("sequence"), sentAt: try r.u64("sentAt")))
        case .pong:
            message = .pong(
                Pong(sequence: try r.u32("sequence"), echoedSentAt: try r.u64("echoedSentAt"), receivedAt: try r.u64("receivedAt")))
        case .pauseRequest:
            let value = try r.u8("paused")
            guard value <= 1 else { throw WireError(.badRequest, "pauseRequest carries \(value); it must be 0 (resume) or 1 (pause)") }
            message = .pauseRequest(value == 1)
        case .streamState:
            let value = try r.u8("state")
            guard let state = StreamState(rawValue: value) else {
                throw .violation("streamState \(value) is unknown; v1 defines 0...3")
            }
            message = .streamState(state)
        case .goodbye, .error:
            let codeValue = try r.u16("code")
            let reason = try r.str16("reason")
            guard let code = WireErrorCode(rawValue: codeValue) else {
                throw .violation("\(type) carries error code \(codeValue), which v1 does not define")
            }
            let error = WireError(code: code, reason: reason)
            message = type == .goodbye ? .goodbye(error) : .error(error)
        case .stats:
            message = .stats(
                SessionStats(
                    framesSent: try r.u64("framesSent"), framesDropped: try r.u64("framesDropped"),
                    framesRepeated: try r.u64("framesRepeated"), audioPackets: try r.u64("audioPackets"),
                    rttNanos: try r.u64("rttNanos"),
                    // 1.0 ends here; 1.1 adds the rate figures (a receiver accepts both lengths).
                    rate: r.isAtEnd ? nil : RateStats(
                        framesSkipped: try r.u64("framesSkipped"), targetBitrate: try r.u32("targetBitrate"),
                        queueDelayMicros: try r.u32("queueDelayMicros"))))
        case .keyframeRequest:
            let value = try r.u8("reason")
            guard let reason = KeyframeReason(rawValue: value) else {
                throw WireError(.badRequest, "keyframeRequest gives reason \(value); 1.1 defines 1 (gap), 2 (decoder error), 3 (start)")
            }
            message = .keyframeRequest(reason)
        case .receiverReport:
            let sequence = try r.u32("sequence")
            let interval = try r.u64("intervalNanos")
            let bytes = try r.u64("bytesReceived")
            let lost = try r.u32("framesLost")
            let count = Int(try r.u8("frameCount"))
            guard count <= ReceiverReport.maxFrames else {
                throw WireError(.badRequest, "receiverReport lists \(count) frames; at most \(ReceiverReport.maxFrames)")
            }
            var frames: [ReceivedFrameReport] = []
            frames.reserveCapacity(count)
            for _ in 0..<count {
                frames.append(ReceivedFrameReport(
                    sequence: try r.u32("frame sequence"), captureTime: try r.u64("frame captureTime"),
                    receivedAt: try r.u64("frame receivedAt"), bytes: try r.u32("frame bytes")))
            }
            message = .receiverReport(ReceiverReport(
                sequence: sequence, intervalNanos: interval, bytesReceived: bytes, framesLost: lost, frames: frames))
        case .settingsRequest:
            message = .settingsRequest
        case .settings:
            message = .settings(try SettingsJSON.decode(SettingsSnapshot.self, &r, message: "settings"))
        case .settingsWrite:
            let write = try SettingsJSON.decode(SettingsWrite.self, &r, message: "settingsWrite")
            guard !write.values.isEmpty else { throw WireError(.badRequest, "settingsWrite sets nothing; give at least one name and value") }
            guard write.values.count <= SettingsWrite.maxValues else {
                throw WireError(.badRequest, "settingsWrite sets \(write.values.count) settings; at most \(SettingsWrite.maxValues) at once")
            }
            message = .settingsWrite(write)
        case .settingsResult:
            message = .settingsResult(try SettingsJSON.decode(SettingsResult.self, &r, message: "settingsResult"))
        case .eventsRequest:
            let replay = try r.u8("replay")
            guard replay <= 1 else { throw WireError(.badRequest, "eventsRequest's replay is \(replay); it must be 0 or 1") }
            message = .eventsRequest(replay: replay == 1)
        case .eventNotice:
            let event = try SettingsJSON.decode(WireEvent.self, &r, message: "eventNotice")
            guard event.updates.count <= WireEvent.maxUpdates else {
                throw WireError(.limitExceeded, "eventNotice lists \(event.updates.count) updates; at most \(WireEvent.maxUpdates)")
            }
            message = .eventNotice(event)
        case .clipListRequest:
            message = .clipListRequest(before: try r.u64("before"))
        case .clipList:
            let list = try SettingsJSON.decode(WireClipList.self, &r, message: "clipList")
            guard list.clips.count <= WireClipList.maxClips else {
                throw WireError(.limitExceeded, "clipList lists \(list.clips.count) recordings; at most \(WireClipList.maxClips) a page")
            }
            message = .clipList(list)
        case .clipFetch:
            let fetch = ClipFetch(id: try r.u64("id"), offset: try r.u64("offset"), length: try r.u32("length"))
            guard (1...ClipFetch.maxLength).contains(fetch.length) else {
                throw WireError(.badRequest, "clipFetch asks for \(fetch.length) bytes; the range is 1...\(ClipFetch.maxLength)")
            }
            message = .clipFetch(fetch)
        case .clipData:
            let id = try r.u64("id"), offset = try r.u64("offset"), total = try r.u64("total")
            let refusal = try r.str16("refusal")
            let data = Array(r.rest())
            guard data.count <= Int(ClipFetch.maxLength) else {
                throw WireError(.limitExceeded, "clipData carries \(data.count) bytes; at most \(ClipFetch.maxLength)")
            }
            guard refusal.isEmpty || data.isEmpty else { throw .violation("clipData carries bytes and a refusal") }
            message = .clipData(ClipData(id: id, offset: offset, total: total, refusal: refusal.isEmpty ? nil : refusal, data: data))
        }
        try r.expectEnd()
        return message
    }
}
