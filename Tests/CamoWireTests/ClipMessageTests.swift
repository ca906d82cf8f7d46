import CamoWire
import Foundation
import Testing

/// The recording messages of protocol 1.4: `clipListRequest` (u64 before), `clipList` (JSON), `clipFetch` (id, offset,
/// length) and `clipData` (id, offset, total, refusal, bytes).
@Suite("Protocol 1.4: recording messages")
struct ClipMessageTests {
    static let clip = WireClip(
        id: 12, kind: "video", mode: "eventBased", trigger: "motion", zoneID: 2, startTime: 1_764_180_000.25, durationSeconds: 14.5,
        preRollSeconds: 4.5, bytes: 2_480_131, hasAudio: true, endReason: "eventEnded", contentType: "video/mp4")

    @Test("all four round-trip; a refusal carries no bytes, a last piece may be short, an empty one ends the file")
    func roundTrip() throws {
        let messages: [AppMessage] = [
            .clipListRequest(before: 0), .clipListRequest(before: 77),
            .clipList(WireClipList(clips: [Self.clip], more: true, total: 230)),
            .clipList(WireClipList(clips: [], more: false, total: 0, unavailable: "this agent keeps no recordings")),
            .clipFetch(ClipFetch(id: 12, offset: 262_144, length: ClipFetch.maxLength)),
            .clipData(ClipData(id: 12, offset: 0, total: 3, data: [1, 2, 3])),
            .clipData(ClipData(id: 12, offset: 3, total: 3)),
            .clipData(ClipData(id: 9, offset: 0, total: 0, refusal: "there is no recording 9")),
            .clipData(ClipData(id: 12, offset: 0, total: 300_000, data: [UInt8](repeating: 5, count: Int(ClipFetch.maxLength)))),
        ]
        for message in messages {
            #expect(try AppMessage.decode(message.encoded()) == message, "\(message.type)")
        }
        let json = String(decoding: try JSONEncoder().encode(Self.clip), as: UTF8.self)
        #expect(json.contains(#""trigger":"motion""#) && json.contains(#""contentType":"video\/mp4""#))
    }

    @Test("bad bodies are refused with a sentence: a length of 0 or past 256 KiB, a page past 200, bytes and a refusal together, a piece past 256 KiB, short and trailing bytes")
    func badBodies() {
        func refused(_ bytes: [UInt8], _ words: String) {
            #expect {
                try AppMessage.decode(bytes)
            } throws: { error in
                "\(error)".contains(words)
            }
        }
        refused(AppMessage.clipFetch(ClipFetch(id: 1, offset: 0, length: 0)).encoded(), "the range is 1...262144")
        refused(AppMessage.clipFetch(ClipFetch(id: 1, offset: 0, length: ClipFetch.maxLength + 1)).encoded(), "the range is 1...262144")
        refused(Array(AppMessage.clipFetch(ClipFetch(id: 1, offset: 0, length: 5)).encoded().dropLast()), "truncated")
        refused(AppMessage.clipListRequest(before: 1).encoded() + [0], "trailing")
        let page = WireClipList(clips: Array(repeating: Self.clip, count: WireClipList.maxClips + 1), more: false, total: 201)
        refused(AppMessage.clipList(page).encoded(), "at most 200")
        refused(AppMessage.clipData(ClipData(id: 1, offset: 0, total: 9, refusal: "gone", data: [1])).encoded(), "bytes and a refusal")
        refused(
            AppMessage.clipData(ClipData(id: 1, offset: 0, total: 9, data: [UInt8](repeating: 0, count: Int(ClipFetch.maxLength) + 1))).encoded(),
            "at most 262144")
        var notAPage = [AppMessageType.clipList.rawValue]
        let body = Array(#"{"clips":"none"}"#.utf8)
        notAPage += withUnsafeBytes(of: UInt32(body.count).bigEndian, Array.init) + body
        refused(notAPage, "clipList is not valid")
    }

    @Test("a studio asks (clipListRequest, clipFetch), an agent answers (clipList, clipData); the capability is bit 9")
    func directions() {
        #expect(AppMessageType.clipListRequest.sentByStudio == true && AppMessageType.clipFetch.sentByStudio == true)
        #expect(AppMessageType.clipList.sentByStudio == false && AppMessageType.clipData.sentByStudio == false)
        #expect(AgentCapabilities.clips.rawValue == 1 << 9)
        #expect(WireLimits.versionMinor == 4)
    }
}
