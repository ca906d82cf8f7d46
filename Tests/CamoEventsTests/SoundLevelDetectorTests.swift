import CamoEvents
import CamoMedia
import Foundation
import Testing

@Suite("Sound level: RMS dBFS over 100 ms windows against a threshold held for a while")
struct SoundLevelDetectorTests {
    static let start: UInt64 = 3_000_000_000_000

    static func run(_ mono: [Float], chunkFrames: Int = 1024, configuration: SoundLevelDetector.Configuration = .init()) -> [SoundLevelDetector.Window] {
        var detector = SoundLevelDetector(configuration: configuration)
        return TestSignals.chunks(mono, chunkFrames: chunkFrames, start: start).flatMap { detector.process($0) }
    }

    static func sine(amplitude: Double, seconds: Double) -> [Float] {
        (0..<Int(seconds * 48_000)).map { Float(amplitude * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
    }

    @Test("a sine's level is its RMS in dBFS; loud from -30, triggering from the second loud window")
    func levels() {
        // Amplitude 0.1: RMS 0.0707, -23.0 dBFS.
        let windows = Self.run(Self.sine(amplitude: 0.1, seconds: 1))
        #expect(windows.count == 10)
        #expect(windows.allSatisfy { abs($0.level - -23.01) < 0.05 && $0.isLoud })
        #expect(windows.map(\.triggers) == [false] + Array(repeating: true, count: 9))
        #expect(windows.map(\.start) == (0..<10).map { Self.start + UInt64($0) * 100_000_000 })

        let quiet = Self.run(Self.sine(amplitude: 0.01, seconds: 1))  // -43 dBFS
        #expect(quiet.allSatisfy { !$0.isLoud && !$0.triggers })
        #expect(Self.run([Float](repeating: 0, count: 4_800)).map(\.level) == [-120])
    }

    @Test("a 100 ms click is loud but too short; a longer minimum needs more windows")
    func minimumDuration() {
        var signal = [Float](repeating: 0, count: 48_000)
        for i in 9_600..<14_400 { signal[i] = i % 2 == 0 ? 0.9 : -0.9 }
        let windows = Self.run(signal)
        #expect(windows.filter(\.isLoud).count == 1)
        #expect(!windows.contains { $0.triggers })

        let long = Self.run(Self.sine(amplitude: 0.1, seconds: 1), configuration: .init(thresholdDBFS: -30, minimumDuration: 450_000_000))
        #expect(long.firstIndex { $0.triggers } == 4)
        let strict = Self.run(Self.sine(amplitude: 0.1, seconds: 1), configuration: .init(thresholdDBFS: -20))
        #expect(!strict.contains { $0.isLoud })
    }

    @Test("chunk boundaries do not matter; a gap in capture time restarts the window")
    func chunking() {
        let signal = Self.sine(amplitude: 0.1, seconds: 1)
        let odd = Self.run(signal, chunkFrames: 333), whole = Self.run(signal, chunkFrames: 4_800)
        #expect(odd.map(\.start) == whole.map(\.start) && odd.map(\.triggers) == whole.map(\.triggers))
        #expect(zip(odd, whole).allSatisfy { abs($0.level - $1.level) < 0.001 })

        var detector = SoundLevelDetector()
        let chunks = TestSignals.chunks(signal, chunkFrames: 2_400, start: Self.start)
        var windows = detector.process(chunks[0])  // half a window
        #expect(windows.isEmpty)
        var late = chunks[1]
        late.firstSampleTime += 500_000_000
        windows = detector.process(late)  // restarts: again half a window
        #expect(windows.isEmpty)
        windows = detector.process(chunks[2].withTime(late.firstSampleTime + 50_000_000))
        #expect(windows.map(\.start) == [late.firstSampleTime])
    }
}

extension AudioChunk {
    func withTime(_ time: UInt64) -> AudioChunk {
        var chunk = self
        chunk.firstSampleTime = time
        return chunk
    }
}
