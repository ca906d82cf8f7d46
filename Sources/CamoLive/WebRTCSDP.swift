import CGStreamer

/// One media section of an SDP message, read through GStreamer's SDP parser (libgstsdp).
struct SDPMediaSection: Sendable, Hashable {
    /// "video", "audio", "application".
    var kind: String
    /// The port; 0 marks a rejected or disabled section.
    var port: Int
    /// The payload types (or other formats) of the m-line, in order of preference.
    var formats: [String]
    /// Its attributes in order: ("rtpmap", "96 H264/90000"), ("sendrecv", ""), ...
    var attributes: [(key: String, value: String)]

    static func == (lhs: SDPMediaSection, rhs: SDPMediaSection) -> Bool {
        lhs.kind == rhs.kind && lhs.port == rhs.port && lhs.formats == rhs.formats
            && lhs.attributes.map(\.key) == rhs.attributes.map(\.key) && lhs.attributes.map(\.value) == rhs.attributes.map(\.value)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(formats)
    }

    /// Whether the section is in use: a port other than 0, or port 0 with `a=bundle-only` (max-bundle offers, as
    /// webrtcbin and some WHEP players make them, give every section after the first port 0 and bundle-only).
    var isActive: Bool { port != 0 || attributes.contains { $0.key == "bundle-only" } }

    /// The values of every attribute named `key`.
    func values(_ key: String) -> [String] { attributes.filter { $0.key == key }.map(\.value) }
}

/// Reading SDP text with GStreamer's parser.
enum SDPReader {
    /// The media sections of `text`. Throws `.malformedOffer` for text that is not SDP: GStreamer's parser takes
    /// almost anything, so the line syntax (`x=...`, starting with `v=0`) is checked first.
    static func mediaSections(of text: String) throws(LiveViewError) -> [SDPMediaSection] {
        let lines = text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
        guard let first = lines.first, first.hasPrefix("v=") else {
            throw .malformedOffer(text.isEmpty ? "it is empty" : "it does not start with an SDP version line (v=0)")
        }
        for (index, line) in lines.enumerated() {
            let bytes = Array(line.utf8)
            guard bytes.count >= 2, bytes[1] == UInt8(ascii: "="), bytes[0] >= UInt8(ascii: "a"), bytes[0] <= UInt8(ascii: "z") else {
                throw .malformedOffer("line \(index + 1) is not an SDP line: \(line.prefix(40))")
            }
        }
        var message: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(text, &message) == GST_SDP_OK, let message else {
            throw .malformedOffer("GStreamer's SDP parser rejected it")
        }
        defer { gst_sdp_message_free(message) }
        var sections: [SDPMediaSection] = []
        for index in 0..<gst_sdp_message_medias_len(message) {
            guard let media = gst_sdp_message_get_media(message, index) else { continue }
            var section = SDPMediaSection(
                kind: gst_sdp_media_get_media(media).map { String(cString: $0) } ?? "",
                port: Int(gst_sdp_media_get_port(media)), formats: [], attributes: [])
            for format in 0..<gst_sdp_media_formats_len(media) {
                if let value = gst_sdp_media_get_format(media, format) { section.formats.append(String(cString: value)) }
            }
            for attribute in 0..<gst_sdp_media_attributes_len(media) {
                guard let pair = gst_sdp_media_get_attribute(media, attribute), let key = pair.pointee.key else { continue }
                section.attributes.append((String(cString: key), pair.pointee.value.map { String(cString: $0) } ?? ""))
            }
            sections.append(section)
        }
        return sections
    }
}
