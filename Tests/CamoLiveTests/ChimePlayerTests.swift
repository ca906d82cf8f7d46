import CamoLive
import CamoTestSupport
import Foundation
import Logging
import Testing

/// The chime player on a WAV file (the same pipeline as an ALSA speaker, up to the sink) and on a missing device.
@Suite("Chime player: a finished sound on the speaker")
struct ChimePlayerTests {
    /// 0.5 s of 440 Hz then 0.5 s of 660 Hz, amplitude 0.5, stereo.
    static func twoTones() -> [Float] {
        var samples: [Float] = []
        for i in 0..<48_000 {
            let f = i < 24_000 ? 440.0 : 660.0
            let x = Float(0.5 * sin(2 * Double.pi * f * Double(i) / 48_000))
            samples += [x, x]
        }
        return samples
    }

    @Test("A sound plays whole at the volume asked for: both tones at their pitch, amplitude scaled to 40 %; the file is closed after")
    func playsToWAV() throws {
        let path = NSTemporaryDirectory() + "chime-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let player = ChimePlayer(output: .wavFile(path: path), logger: Logger(label: "test"))
        player.play(Self.twoTones(), volumePercent: 40, muted: false)
        player.waitUntilIdle()
        #expect(player.statistics.played == 1 && player.statistics.failed == 0, "\(player.statistics)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let wav = try #require(WAVReader.firstChannel(of: bytes), "not a WAV file: \(bytes.count) bytes")
        #expect(wav.rate == 48_000)
        let left = wav.samples.map { Float($0) / 32_768 }
        #expect(abs(left.count - 48_000) <= 480, "\(left.count) frames, want 48000 (the whole sound, drained)")
        let first = try #require(ToneMeasure.zeroCrossingFrequency(left[2_400..<21_600], rate: 48_000))
        let second = try #require(ToneMeasure.zeroCrossingFrequency(left[26_400..<45_600], rate: 48_000))
        #expect(abs(first - 440) < 1 && abs(second - 660) < 1, "measured \(first) Hz and \(second) Hz")
        let peak = left[2_400..<21_600].map { abs($0) }.max() ?? 0
        #expect(abs(peak - 0.2) < 0.01, "peak \(peak), want 0.5 x 40 % = 0.2")
    }

    @Test("Muted: nothing opens and the sound counts as skipped")
    func muted() {
        let path = NSTemporaryDirectory() + "chime-\(UUID().uuidString).wav"
        let player = ChimePlayer(output: .wavFile(path: path), logger: Logger(label: "test"))
        player.play(Self.twoTones(), volumePercent: 40, muted: true)
        player.waitUntilIdle()
        #expect(player.statistics.skipped == 1 && player.statistics.played == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("A missing device is a logged, counted failure, not a crash; the next sound is tried again")
    func missingDevice() {
        let recorder = LogRecorder()
        let player = ChimePlayer(output: .alsa(device: "hw:CamoNoSuchCard,0"), logger: recorder.logger())
        player.play(Self.twoTones(), volumePercent: 50, muted: false)
        player.waitUntilIdle()
        player.play(Self.twoTones(), volumePercent: 50, muted: false)
        player.waitUntilIdle()
        let statistics = player.statistics
        #expect(statistics.failed == 2 && statistics.played == 0, "\(statistics)")
        #expect(statistics.lastError?.isEmpty == false)
        let errors = recorder.messages(at: .error)
        #expect(errors.count == 2 && errors.allSatisfy { $0.contains("The chime could not be played on the speaker") }, "\(errors)")
    }
}
