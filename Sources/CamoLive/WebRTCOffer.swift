import Foundation

/// What a browser's WHEP offer asks for, as far as the answer depends on it.
struct WebRTCOffer: Sendable, Hashable {
    /// The index of the video m-line.
    var videoIndex: Int
    /// The H.264 payload type chosen in the video m-line.
    var h264PayloadType: Int
    /// The index of the audio m-line with Opus, if any.
    var audioIndex: Int?
    /// The Opus payload type of that m-line.
    var opusPayloadType: Int?
    /// Whether the browser sends audio (its audio m-line is sendrecv or sendonly): talkback is possible.
    var sendsMicrophone: Bool
    /// The `a=mid` of each m-line, in order ("" where missing): trickle candidates name their m-line by mid.
    var mids: [String]

    /// H.264 profile-level-ids that every browser decodes, best first (constrained baseline 3.1, baseline 3.1,
    /// constrained high 3.1).
    static let preferredProfiles = ["42e01f", "42001f", "640c1f"]

    /// Reads an offer; throws `.malformedOffer`, `.noVideo` or `.noH264`.
    init(sdp text: String) throws(LiveViewError) {
        try self.init(sections: SDPReader.mediaSections(of: text))
    }

    /// Reads an offer's media sections.
    init(sections: [SDPMediaSection]) throws(LiveViewError) {
        mids = sections.map { $0.values("mid").first ?? "" }
        guard let videoIndex = sections.firstIndex(where: { $0.kind == "video" && $0.isActive }) else { throw .noVideo }
        guard let h264 = Self.h264PayloadType(in: sections[videoIndex]) else { throw .noH264 }
        self.videoIndex = videoIndex
        self.h264PayloadType = h264
        audioIndex = nil
        opusPayloadType = nil
        sendsMicrophone = false
        for (index, section) in sections.enumerated() where section.kind == "audio" && section.isActive {
            guard let opus = Self.payloadTypes(in: section, named: "opus", clockRate: 48000).first else { continue }
            audioIndex = index
            opusPayloadType = opus
            let directions = section.attributes.map(\.key).filter { ["sendrecv", "sendonly", "recvonly", "inactive"].contains($0) }
            sendsMicrophone = directions.last.map { $0 == "sendrecv" || $0 == "sendonly" } ?? true
            break
        }
    }

    /// The payload types whose rtpmap names `encoding` at `clockRate`, in the m-line's order.
    static func payloadTypes(in section: SDPMediaSection, named encoding: String, clockRate: Int) -> [Int] {
        var found: [Int] = []
        for value in section.values("rtpmap") {
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let type = Int(parts[0]) else { continue }
            let codec = parts[1].split(separator: "/")
            guard codec.count >= 2, codec[0].lowercased() == encoding.lowercased(), Int(codec[1]) == clockRate else { continue }
            found.append(type)
        }
        let order = section.formats.compactMap { Int($0) }
        return found.sorted { (order.firstIndex(of: $0) ?? .max) < (order.firstIndex(of: $1) ?? .max) }
    }

    /// The H.264 payload type to send: packetization-mode=1 first, then a widely decoded profile, then the
    /// browser's own order.
    static func h264PayloadType(in section: SDPMediaSection) -> Int? {
        let candidates = payloadTypes(in: section, named: "H264", clockRate: 90000)
        var parameters: [Int: [String: String]] = [:]
        for value in section.values("fmtp") {
            let parts = value.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let type = Int(parts[0]) else { continue }
            var fields: [String: String] = [:]
            for field in parts[1].split(separator: ";") {
                let pair = field.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { continue }
                fields[pair[0].trimmingCharacters(in: .whitespaces).lowercased()] = pair[1].trimmingCharacters(in: .whitespaces).lowercased()
            }
            parameters[type] = fields
        }
        func score(_ type: Int) -> Int {
            let fields = parameters[type] ?? [:]
            var score = fields["packetization-mode"] == "1" ? 10 : 0
            if let profile = fields["profile-level-id"], let rank = preferredProfiles.firstIndex(of: profile) {
                score += preferredProfiles.count - rank
            }
            return score
        }
        return candidates.enumerated().max { lhs, rhs in
            let (left, right) = (score(lhs.element), score(rhs.element))
            return left != right ? left < right : lhs.offset > rhs.offset
        }?.element
    }

    /// The m-line index a trickle fragment's `a=mid:` names, or nil when no m-line has that mid.
    func mlineIndex(mid: String) -> Int? { mids.firstIndex(of: mid) }
}
