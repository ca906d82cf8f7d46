import CamoMedia
import CamoStudioKit
import CamoTestSupport
import CamoVirtualDevices
import Dispatch
import Foundation
import Logging
import Synchronization
import Testing

@Suite("Virtual microphone: its thread against a sink the test paces, period by period")
struct VirtualMicrophoneTests {
    /// A device whose every write waits for the test's go-ahead, so the thread moves exactly as far as the test lets it.
    final class GatedSink: VirtualMicrophoneSink {
        let periodFrames = 480
        let bufferFrames = 1_920
        var xruns: Int { 0 }
        let written = Mutex<[[Int16]]>([])
        let gate = DispatchSemaphore(value: 0)
        let wrote = DispatchSemaphore(value: 0)
        let failNext = Mutex(false)
        let closed = Mutex(0)
        let freeRun = Mutex(false)
        func delay() -> Int { 0 }
        func write(_ samples: [Int16]) throws(VirtualDeviceError) {
            if !freeRun.withLock({ $0 }) { gate.wait() }
            defer { wrote.signal() }
            if failNext.withLock({ value -> Bool in defer { value = false }; return value }) {
                throw .microphone(device: "hw:Test,0,0", reason: "writing failed: No such device")
            }
            written.withLock { $0.append(samples) }
        }
        func close() { closed.withLock { $0 += 1 } }
        /// Lets every write through from now on (before `stop`, which waits for the write in progress).
        func release() {
            freeRun.withLock { $0 = true }
            gate.signal()
        }
        /// Lets `n` writes through and waits for each (at most 10 s each: a hung thread fails the test, not the run).
        func allow(_ n: Int) -> Bool {
            for _ in 0..<n {
                gate.signal()
                if wrote.wait(timeout: .now() + 10) == .timedOut { return false }
            }
            return true
        }
    }

    static func packet(_ sequence: UInt32, value: Float) -> ReceivedAudioPacket {
        let samples = [Float](repeating: value, count: 960)
        var bytes: [UInt8] = []
        for sample in samples { withUnsafeBytes(of: sample.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        return ReceivedAudioPacket(sequence: sequence, firstSampleTime: UInt64(sequence) * 10_000_000, sampleFrames: 480, data: bytes)
    }

    @Test("Silence while idle, then the agent's samples as S16 (0.5 → 16384, clipped at ±1), and the drift and state reported")
    func playsThePackets() throws {
        let sink = GatedSink()
        let opens = Mutex(0)
        let mic = VirtualMicrophone(device: "hw:Test,0,0", packetFrames: 480, clock: ManualClock(), logger: Logger(label: "test")) {
            () throws(VirtualDeviceError) -> any VirtualMicrophoneSink in
            opens.withLock { $0 += 1 }
            return sink
        }
        mic.start()
        #expect(sink.allow(2))
        #expect(sink.written.withLock { $0 }.allSatisfy { $0.count == 960 && $0.allSatisfy { $0 == 0 } })
        // 16 packets: more than the feed's target (the device's buffer, two packets and 60 ms of jitter allowance).
        for k in 0..<16 { mic.receive(Self.packet(UInt32(k), value: k < 4 ? 0.5 : 1.5)) }
        #expect(sink.allow(6))
        let periods = sink.written.withLock { $0 }
        sink.release()
        mic.stop()
        let agent = periods.dropFirst(2).flatMap { $0 }
        #expect(agent.contains(16_384), "0.5 is 16384")
        #expect(agent.contains(32_767) && !agent.contains { $0 < 0 }, "1.5 clips at 32767")
        #expect(mic.statistics.counters.playedFrames >= 6 * 480 - 3 * 480)
        #expect(opens.withLock { $0 } == 1)
        #expect(sink.closed.withLock { $0 } == 1, "stop closes the device")
    }

    @Test("A device that fails is closed and opened again; an open that fails is reported with its reason and retried a second later")
    func reopensAfterAFailure() throws {
        let sink = GatedSink()
        let opens = Mutex(0)
        let mic = VirtualMicrophone(device: "hw:Test,0,0", packetFrames: 480, clock: ManualClock(), logger: Logger(label: "test")) {
            () throws(VirtualDeviceError) -> any VirtualMicrophoneSink in
            let n = opens.withLock { value -> Int in value += 1; return value }
            if n == 2 { throw .microphone(device: "hw:Test,0,0", reason: "cannot open it for playback: No such file or directory") }
            return sink
        }
        mic.start()
        #expect(sink.allow(1))
        sink.failNext.withLock { $0 = true }
        #expect(sink.allow(1))
        // The failed write closes the device; the second open fails and stays reported for the second it waits.
        var reported: String?
        for _ in 0..<500 {
            reported = mic.statistics.lastError
            if reported?.contains("cannot open") == true { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(reported?.contains("cannot open it for playback") == true && reported?.contains("camo-studio setup") == true,
                "\(String(describing: reported))")
        #expect(sink.allow(1), "the third open succeeds and the thread writes again")
        #expect(opens.withLock { $0 } == 3)
        #expect(mic.statistics.lastError == nil, "a good open clears the error")
        sink.release()
        mic.stop()
        #expect(sink.closed.withLock { $0 } == 2)
    }

    @Test("snd-aloop's other end: hw:ID,0,N ↔ hw:ID,1,N; another device name is kept")
    func otherEnd() {
        #expect(LoopbackSoundCard.otherEnd(of: "hw:CamoMic,0,0") == "hw:CamoMic,1,0")
        #expect(LoopbackSoundCard.otherEnd(of: "hw:CamoMic,1,1") == "hw:CamoMic,0,1")
        #expect(LoopbackSoundCard.otherEnd(of: "hw:2,0,0") == "hw:2,1,0")
        #expect(LoopbackSoundCard.otherEnd(of: "plughw:CamoMic,0") == "plughw:CamoMic,0")
        #expect(LoopbackSoundCard.otherEnd(of: "default") == "default")
        #expect(LoopbackSoundCard(index: 3, id: "CamoMic").captureDevice == "hw:CamoMic,1,0")
    }
}
