import CamoMedia
@testable import CamoProducerKit
import CamoTestSupport
import CamoWire
import Foundation
import Synchronization
import Testing

/// The controller's smaller parts, each a plain value under its lock: where media goes (MediaFanOut), the state its
/// observers follow (StateFeed) and the delegate's open admission decisions (OpenDecisions).
@Suite("Controller parts: media fan-out, state feed, open decisions")
struct ControllerPartsTests {
    struct Studio: MediaRecipient, Equatable {
        var name: String
        var takesMedia = true
        var settings = VideoSettings(size: VideoSize(width: 640, height: 360), codec: .jpeg, jpegQuality: 80)
    }

    static let start: UInt64 = 1_000_000_000
    static func frame(at time: UInt64) -> VideoFrame {
        VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: time)
    }

    @Test("Slots go to the studios that take media, to none while paused, and say when the camera is lost")
    func slotsAndTheirRecipients() {
        let studios = [Studio(name: "a"), Studio(name: "b", takesMedia: false), Studio(name: "c")]
        var media = MediaFanOut()
        #expect(media.emit(slot: 0, to: studios).frame == nil, "not pacing: no frame")
        media.offer(Self.frame(at: Self.start), at: Self.start)
        #expect(media.slotTime(1) == nil, "an offer before pacing starts is dropped, and there are no slots")

        media.startPacing(at: Self.start)
        media.offer(Self.frame(at: Self.start), at: Self.start)
        let first = media.emit(slot: 1, to: studios)
        #expect(first.frame?.isRepeat == false)
        #expect(first.recipients.map(\.name) == ["a", "c"])
        #expect(!first.noSignal)

        media.paused = true
        media.cameraLost = true
        let paused = media.emit(slot: 2, to: studios)
        #expect(paused.recipients.isEmpty, "the privacy switch: nothing goes out")
        #expect(paused.frame?.isRepeat == true && paused.noSignal)

        media.paused = false
        #expect(media.emit(slot: 3, to: studios).recipients.count == 2)
        media.stopPacing()
        #expect(media.emit(slot: 4, to: studios).frame == nil && media.slotTime(4) == nil)
    }

    @Test("Audio goes to the studios that take media, silenced while muted, to none while paused")
    func audioRecipients() {
        let studios = [Studio(name: "a"), Studio(name: "b", takesMedia: false)]
        var media = MediaFanOut()
        #expect(Array(media.audioRecipients(among: studios).recipients).map(\.name) == ["a"])
        #expect(media.audioRecipients(among: studios).silenced == false)
        media.microphoneMuted = true
        #expect(media.audioRecipients(among: studios).silenced == true)
        #expect(Array(media.audioRecipients(among: studios).recipients).map(\.name) == ["a"], "muted is silence, not nothing")
        media.paused = true
        #expect(media.audioRecipients(among: studios).recipients.isEmpty)
    }

    @Test("JPEG planes are wanted only for a JPEG studio that takes media at that size, and not while paused")
    func jpegPlanes() {
        let size = VideoSize(width: 640, height: 360)
        var media = MediaFanOut()
        #expect(media.wantsJPEGPlanes(for: size, among: [Studio(name: "a")]))
        #expect(!media.wantsJPEGPlanes(for: VideoSize(width: 1280, height: 720), among: [Studio(name: "a")]))
        #expect(!media.wantsJPEGPlanes(for: size, among: [Studio(name: "a", takesMedia: false)]))
        var bgra = Studio(name: "b")
        bgra.settings.codec = .bgra
        #expect(!media.wantsJPEGPlanes(for: size, among: [bgra]))
        #expect(media.wantsJPEGPlanes(for: size, among: [bgra, Studio(name: "a")]))
        media.paused = true
        #expect(!media.wantsJPEGPlanes(for: size, among: [Studio(name: "a")]))
    }

    @Test("The state feed yields the current state first, each change once, and stops yielding to a removed stream")
    func stateFeed() async {
        var feed = StateFeed()
        let first = feed.publish(.notConnected)
        let same = feed.publish(.notConnected)
        #expect(first)
        #expect(!same, "the same state again is no change")
        let (following, followingContinuation) = AsyncStream<CamoControllerState?>.makeStream()
        let (once, onceContinuation) = AsyncStream<CamoControllerState?>.makeStream()
        let followingID = UUID()
        feed.add(followingID, followingContinuation, follows: true)
        feed.add(UUID(), onceContinuation, follows: false)
        onceContinuation.finish()
        #expect(feed.observerCount == 1)
        let stopped = feed.publish(nil)
        #expect(stopped)
        feed.remove(followingID)
        let again = feed.publish(.notConnected)
        #expect(again)
        followingContinuation.finish()
        var seen: [CamoControllerState?] = []
        for await state in following { seen.append(state) }
        #expect(seen == [.notConnected, nil], "the current state, then the one change before removal")
        var seenOnce: [CamoControllerState?] = []
        for await state in once { seenOnce.append(state) }
        #expect(seenOnce == [.notConnected])

        let (last, lastContinuation) = AsyncStream<CamoControllerState?>.makeStream()
        feed.add(UUID(), lastContinuation, follows: true)
        let removed = feed.removeAll()
        #expect(removed.count == 1 && feed.observerCount == 0)
        for continuation in removed { continuation.finish() }
        var lastSeen: [CamoControllerState?] = []
        for await state in last { lastSeen.append(state) }
        #expect(lastSeen == [.notConnected])
    }

    @Test("An open decision ends once: the first close wins, every later one finds it gone")
    func openDecisions() {
        let ended = Mutex<[WireError?]>([])
        var decisions = OpenDecisions()
        let first = UUID()
        let second = UUID()
        decisions.open(first) { refusal in ended.withLock { $0.append(refusal) } }
        decisions.open(second) { refusal in ended.withLock { $0.append(refusal) } }
        #expect(decisions.count == 2 && decisions.all().count == 2)
        let answered = decisions.close(first)
        let deadline = decisions.close(first)
        #expect(answered)
        #expect(!deadline, "the deadline after the answer finds it gone")
        #expect(decisions.count == 1)
        for end in decisions.all() { end(WireError(code: .shuttingDown, reason: "stopping")) }
        #expect(ended.withLock { $0.map { $0?.code } } == [.shuttingDown])
        let last = decisions.close(second)
        #expect(last && decisions.count == 0)
    }
}

/// SlotCatchUp: a late slot repeats the last frame sent; a shed frame goes out as new when the pacer repeats it.
@Suite("SlotCatchUp: late slots repeat instead of falling behind")
struct SlotCatchUpTests {
    static let period: UInt64 = 33_333_333
    static func paced(_ input: UInt64, slot: UInt64, isRepeat: Bool = false) -> PacedFrame {
        PacedFrame(
            frame: VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [UInt8(input), 0, 0, 255], captureTime: input),
            slot: slot, slotTime: slot * period, isRepeat: isRepeat, inputIndex: input)
    }

    @Test("On time, every slot sends what the pacer offers")
    func onTime() {
        var catchUp = SlotCatchUp(period: Self.period)
        for k in UInt64(1)...5 {
            let sent = catchUp.frame(for: Self.paced(k, slot: k), at: k * Self.period + Self.period)
            #expect(sent.inputIndex == k && !sent.isRepeat)
        }
        #expect(catchUp.shedSlots == 0)
    }

    @Test("A slot more than two slots late repeats the last frame; the next slot sends the newest, as new")
    func late() {
        var catchUp = SlotCatchUp(period: Self.period)
        _ = catchUp.frame(for: Self.paced(1, slot: 1), at: Self.period)
        let slack = catchUp.frame(for: Self.paced(2, slot: 2), at: 4 * Self.period)
        #expect(slack.inputIndex == 2 && !slack.isRepeat, "two slots late is still on time enough")
        let late = catchUp.frame(for: Self.paced(3, slot: 3), at: 5 * Self.period + 1)
        #expect(late.inputIndex == 2 && late.isRepeat && late.slot == 3 && late.slotTime == 3 * Self.period)
        #expect(late.frame.data[0] == 2, "the frame last sent, not the new one")
        #expect(catchUp.shedSlots == 1)
        // The pacer had nothing newer, so it offers frame 3 as a repeat: no studio has it, so it is new to them.
        let next = catchUp.frame(for: Self.paced(3, slot: 4, isRepeat: true), at: 4 * Self.period + 2)
        #expect(next.inputIndex == 3 && !next.isRepeat)
        // A true repeat stays one, late or not, and costs nothing to shed.
        let again = catchUp.frame(for: Self.paced(3, slot: 5, isRepeat: true), at: 12 * Self.period)
        #expect(again.inputIndex == 3 && again.isRepeat)
        #expect(catchUp.shedSlots == 1)
    }

    @Test("The first frame goes out even when late: there is nothing to repeat")
    func firstFrame() {
        var catchUp = SlotCatchUp(period: Self.period)
        let first = catchUp.frame(for: Self.paced(7, slot: 1), at: 100 * Self.period)
        #expect(first.inputIndex == 7 && !first.isRepeat && catchUp.shedSlots == 0)
    }
}

extension SlotCatchUpTests {
    /// The pacer and the catch-up together, over random arrivals and random lateness (seeded): every slot sends
    /// something once the first frame came, a frame goes out as new at most once and in order, and a repeat carries
    /// the frame sent before it.
    @Test("With the pacer, over random arrivals and lateness: each frame goes out as new at most once, in order", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomized(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let start: UInt64 = 1_000_000_000
        var pacer = FramePacer(startTime: start)
        pacer.alignsToFirstFrame = true
        var catchUp = SlotCatchUp()
        var arrival = start + random.next() % 33_000_000
        var lastNew: UInt64?
        var lastSent: PacedFrame?
        var late: UInt64 = 0
        for k in UInt64(1)...3_000 {
            let slotTime = pacer.slotTime(k)
            while arrival <= slotTime {
                pacer.offer(VideoFrame(width: 1, height: 1, bytesPerRow: 4, data: [0, 0, 0, 255], captureTime: arrival), at: arrival)
                arrival += 20_000_000 + random.next() % 40_000_000
            }
            // Lateness wanders: sometimes on time, sometimes several slots behind.
            late = random.next() % 4 == 0 ? random.next() % 120_000_000 : late / 2
            guard let offered = pacer.emit(slot: k) else { continue }
            let sent = catchUp.frame(for: offered, at: slotTime + late)
            #expect(sent.slot == k && sent.slotTime == offered.slotTime)
            if sent.isRepeat {
                #expect(sent.inputIndex == lastSent?.inputIndex, "a repeat carries the frame sent before it")
            } else {
                if let lastNew { #expect(sent.inputIndex > lastNew, "slot \(k): input \(sent.inputIndex) after \(lastNew)") }
                lastNew = sent.inputIndex
            }
            lastSent = sent
        }
        #expect(catchUp.shedSlots > 0, "the lateness made some slots repeat")
    }
}
