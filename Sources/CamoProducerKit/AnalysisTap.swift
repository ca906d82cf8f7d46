import CamoMedia
import Foundation
import Synchronization

/// A consumer of the picture and the microphone as the host captures them, for analysis (the event detectors):
/// every BGRA frame offered to ``CamoController/enqueueVideo(_:)`` after the settings' rotation, flips and
/// viewport (so zones lie on the picture the studios see), and every audio chunk offered to
/// ``CamoController/enqueuePCMAudio(_:)``. Made by ``CamoController/addAnalysisTap(video:audio:)``.
///
/// The callbacks run on the callers of those methods (the capture threads): they must hand the data to the tap's
/// own bounded queue and return. Nothing comes while the privacy switch is on (the camera is off: no live view,
/// no events), and no audio while the microphone is muted.
public final class AnalysisTap: Sendable {
    /// The tap's id.
    public let id = UUID()
    let video: @Sendable (VideoFrame) -> Void
    let audio: @Sendable (AudioChunk) -> Void
    private let onRemove: Mutex<(@Sendable (UUID) -> Void)?>

    init(
        video: @escaping @Sendable (VideoFrame) -> Void, audio: @escaping @Sendable (AudioChunk) -> Void,
        onRemove: @escaping @Sendable (UUID) -> Void
    ) {
        self.video = video
        self.audio = audio
        self.onRemove = Mutex(onRemove)
    }

    /// Stops the tap. A callback already under way may still run once.
    public func remove() {
        let remove = onRemove.withLock { callback -> (@Sendable (UUID) -> Void)? in
            defer { callback = nil }
            return callback
        }
        remove?(id)
    }
}

extension CamoController {
    /// Adds an analysis tap (``AnalysisTap``): the captured frames and audio, for a consumer that judges them.
    public func addAnalysisTap(
        video: @escaping @Sendable (VideoFrame) -> Void, audio: @escaping @Sendable (AudioChunk) -> Void
    ) -> AnalysisTap {
        let tap = AnalysisTap(video: video, audio: audio) { [weak self] id in
            self?.core.withLock { $0.analysisTaps.removeAll { $0.id == id } }
        }
        core.withLock { $0.analysisTaps.append(tap) }
        return tap
    }
}
