import CamoCapture
import Testing

/// Whether talkback has a speaker: ALSA's answer for a device that cannot exist, and for `auto` on this host.
@Suite("Speaker probe: a playback device that does not open is named with ALSA's reason")
struct SpeakerProbeTests {
    @Test func aMissingPlaybackDeviceIsAProblemWithItsReason() {
        let problem = SpeakerProbe.problem(with: "hw:CamoNoSuchCard,0")
        #expect(problem?.contains("hw:CamoNoSuchCard,0") == true, "\(problem ?? "nil")")
        #expect(problem?.contains("does not open") == true, "\(problem ?? "nil")")
    }

    @Test func autoIsTheDefaultOutputOrSaysThereIsNoCard() {
        // Either answer is honest for the host the test runs on; which one it got is printed.
        let problem = SpeakerProbe.problem(with: "auto")
        print("speaker auto on this host: \(problem ?? "ALSA's default output opens")")
        if let problem { #expect(problem.contains("no sound card") || problem.contains("default")) }
    }
}
