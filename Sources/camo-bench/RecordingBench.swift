import CamoCodec
import CamoMedia
import Foundation
import Logging

/// What keeping a recording costs beside the encode it records (issue #13's benchmark): the agent records the H.264
/// rendition the studios and live view already share, so a clip costs muxing, AAC and disk writes only. The same
/// units are encoded once (x264, the rendition's settings), then muxed into CMAF on disk by ``MP4Writer`` with and
/// without a 48 kHz stereo audio track, beside `ffmpeg -c copy` muxing the same units into CMAF.
enum RecordingBench {
    struct Result {
        var size: VideoSize
        var frames: Int
        var bitrate: Int
        var encodeCPUMs: Double
        var muxCPUMs: Double
        var muxWithAudioCPUMs: Double
        /// Opening a clip's writer with its AAC encoder (once per clip), CPU ms.
        var openWithAudioCPUMs: Double
        var ffmpegMuxCPUMs: Double?
        var fileBytes: Int

        var json: [String: Any] {
            var object: [String: Any] = [
                "size": "\(size)", "frames": frames, "bitrate": bitrate, "encodeCpuMsPerFrame": encodeCPUMs,
                "muxCpuMsPerFrame": muxCPUMs, "muxWithAudioCpuMsPerFrame": muxWithAudioCPUMs, "fileBytes": fileBytes,
                "openWithAudioCpuMs": openWithAudioCPUMs,
                "recordingOverEncode": muxWithAudioCPUMs / max(encodeCPUMs, 1e-9),
            ]
            if let ffmpegMuxCPUMs {
                object["ffmpegCopyCpuMsPerFrame"] = ffmpegMuxCPUMs
                object["muxOverFFmpegCopy"] = muxCPUMs / max(ffmpegMuxCPUMs, 1e-9)
            }
            return object
        }
    }

    static func run(frames count: Int, ffmpeg: String?) throws -> Result {
        // The rendition's defaults: --live-size 1280x720, --live-bitrate 2000 kb/s, a keyframe every 2 s.
        let size = VideoSize(width: 1280, height: 720), bitrate = 2_000_000
        let input = H264Bench.frames(count, size: size)
        let encoder = try H264Encoder(
            settings: H264EncoderSettings(width: size.width, height: size.height, bitrate: bitrate, gopFrames: 60, kind: .x264),
            logger: Logger(label: "bench"))
        var packets: [H264Packet] = []
        let encodeStart = H264Bench.cpuSeconds()
        for frame in input {
            if let packet = try encoder.encode(frame, forceKeyframe: false) { packets.append(packet) }
        }
        let encodeCPU = H264Bench.cpuSeconds() - encodeStart
        guard !packets.isEmpty else { throw BenchError("the encoder gave no access units") }

        let directory = NSTemporaryDirectory() + "camo-bench-rec-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A continuous 440 Hz tone, a 1600-frame piece per video frame (made before the clock starts; a tone that
        // restarted every piece would click 30 times a second and cost the AAC encoder three times as much).
        let pieces = (0..<packets.count).map { frame in
            (0..<1_600).flatMap { index -> [Float] in
                let value = Float(0.25 * sin(2 * Double.pi * 440 * Double(frame * 1_600 + index) / 48_000))
                return [value, value]
            }
        }
        // Opening a writer (the AAC encoder's tables) happens once per clip: timed apart from the frames.
        func mux(audio: Bool, path: String) throws -> (open: Double, frames: Double) {
            let opening = H264Bench.cpuSeconds()
            let writer = try MP4Writer(
                path: path, width: size.width, height: size.height, audio: audio, fragmented: true, logger: Logger(label: "bench"))
            let start = H264Bench.cpuSeconds()
            for (index, packet) in packets.enumerated() {
                let time = UInt64(index) * 1_000_000_000 / 30
                if audio { try writer.writeAudio(pieces[index], timeNanos: time) }
                try writer.writeVideo(packet.data, isKeyframe: packet.isKeyframe, timeNanos: time)
            }
            try writer.finish()
            // The recorder syncs each kept clip before its row is added: that is part of its cost.
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            try handle.synchronize()
            try handle.close()
            return (start - opening, H264Bench.cpuSeconds() - start)
        }
        let videoOnly = try mux(audio: false, path: directory + "/video.mp4")
        let withAudio = try mux(audio: true, path: directory + "/clip.mp4")
        let fileBytes = (try FileManager.default.attributesOfItem(atPath: directory + "/clip.mp4")[.size] as? Int) ?? 0

        var ffmpegCPU: Double?
        if let ffmpeg {
            let stream = directory + "/units.h264"
            _ = FileManager.default.createFile(atPath: stream, contents: Data(packets.map(\.data).joined()))
            let run = try H264Bench.ffmpegRun(ffmpeg, [
                "-nostdin", "-hide_banner", "-benchmark", "-f", "h264", "-framerate", "30", "-i", stream, "-c", "copy",
                "-movflags", MP4Writer.cmafMovflags, "-f", "mp4", "-y", directory + "/ffmpeg.mp4",
            ])
            ffmpegCPU = H264Bench.benchmarkCPUSeconds(run.output) * 1000 / Double(packets.count)
        }
        let perFrame = 1000 / Double(packets.count)
        return Result(
            size: size, frames: packets.count, bitrate: bitrate, encodeCPUMs: encodeCPU * perFrame, muxCPUMs: videoOnly.frames * perFrame,
            muxWithAudioCPUMs: withAudio.frames * perFrame, openWithAudioCPUMs: withAudio.open * 1000, ffmpegMuxCPUMs: ffmpegCPU,
            fileBytes: fileBytes)
    }

    static func print(_ result: Result) {
        Swift.print(String(format: "recording the shared rendition, %@ at %d kb/s (%d frames), CPU per frame:", "\(result.size)", result.bitrate / 1000, result.frames))
        Swift.print(String(format: "  x264 encode (done once, for the studios and live view)  %7.3f ms", result.encodeCPUMs))
        Swift.print(String(format: "  MP4Writer CMAF, video only, synced                        %7.3f ms", result.muxCPUMs))
        Swift.print(String(format: "  MP4Writer CMAF with AAC 48 kHz stereo, synced              %7.3f ms  (%.1f%% of the encode)",
                           result.muxWithAudioCPUMs, result.muxWithAudioCPUMs / max(result.encodeCPUMs, 1e-9) * 100))
        Swift.print(String(format: "  opening a clip's writer with its AAC encoder (once a clip) %5.1f ms", result.openWithAudioCPUMs))
        if let reference = result.ffmpegMuxCPUMs {
            Swift.print(String(format: "  ffmpeg -c copy into CMAF (reference)                      %7.3f ms  (ours / ffmpeg %.2f)",
                               reference, result.muxCPUMs / max(reference, 1e-9)))
        }
    }
}
