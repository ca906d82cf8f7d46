import CamoStudioKit
import Foundation
import Testing

extension CameraHardware {
    /// The agent's colour: it captures exactly what the driver delivers (byte for byte against v4l2-ctl), reports the
    /// driver's colorimetry, and its BGRA matches an independent conversion (ffmpeg's swscale) of the same bytes.
    @Suite(
        "Colour: raw frames and BGRA against v4l2-ctl and ffmpeg", .serialized,
        .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
    struct Colour {
        /// One vivid colorimetry setting (its `colorspace`, `y_cbcr_encoding` and `quantization` menu controls) and
        /// what the agent must report for it.
        struct Setting: Sendable, CustomTestStringConvertible {
            var name: String
            /// vivid menu indexes: colorspace 1 = Rec. 709, 2 = sRGB; encoding 0 = default, 1 = 601, 2 = 709;
            /// quantization 0 = default, 1 = full, 2 = limited.
            var colorspace: Int
            var encoding: Int
            var quantization: Int
            /// What FILE.json must say.
            var matrix: String
            var range: String
            var testDescription: String { name }

            /// ffmpeg's names for the agent's reported colorimetry.
            static func ffmpegMatrix(_ matrix: String) -> String? {
                ["BT.601": "bt601", "BT.709": "bt709", "BT.2020": "bt2020"][matrix]
            }
            static func ffmpegRange(_ range: String) -> String? { ["limited": "tv", "full": "pc"][range] }
        }

        static let settings: [Setting] = [
            // vivid's default: sRGB with the default encoding and quantization, which V4L2 maps to BT.601 limited.
            Setting(name: "BT.601 limited (driver defaults)", colorspace: 2, encoding: 0, quantization: 0, matrix: "BT.601", range: "limited"),
            Setting(name: "BT.709 limited", colorspace: 1, encoding: 2, quantization: 2, matrix: "BT.709", range: "limited"),
            Setting(name: "BT.709 full range", colorspace: 1, encoding: 2, quantization: 1, matrix: "BT.709", range: "full"),
            Setting(name: "BT.601 full range", colorspace: 2, encoding: 1, quantization: 1, matrix: "BT.601", range: "full"),
        ]

        private struct RawLayout: Decodable {
            var fourcc: String
            var width: Int
            var height: Int
            var bytesPerLine: [Int]
            var planeBytes: [Int]
            var matrix: String
            var range: String
            var sequence: UInt32
        }

        @Test("Static 75% colour bars, YUYV 640x360: raw bytes equal v4l2-ctl's; BGRA within ±3 of ffmpeg", arguments: settings)
        func colourBars(_ setting: Setting) throws {
            let ffmpeg = try #require(
                ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) },
                "ffmpeg is not installed (apt-get install ffmpeg)")
            try Vivid.with(Hardware.webcam) {
                // A still picture: no OSD text (it has a clock and counters), no movement, the 75% colour bars.
                try Vivid.ctl("-c osd_text_mode=2 -c horizontal_movement=3 -c vertical_movement=3 -c test_pattern=0")
                try Vivid.ctl("-c colorspace=\(setting.colorspace)")
                try Vivid.ctl("-c y_cbcr_encoding=\(setting.encoding) -c quantization=\(setting.quantization)")
                let scratch = try HardwareScratch("colour")
                let width = 640, height = 360

                // (a) One frame as v4l2-ctl captures it (after 5 skipped ones).
                let rawPath = scratch.path + "/raw.yuv"
                try Vivid.ctl("--set-fmt-video=width=\(width),height=\(height),pixelformat=YUYV --stream-mmap --stream-count=1 --stream-skip=5 --stream-to=\(rawPath)")
                let driverFormat = try Vivid.ctl("-V")
                let raw = try Data(contentsOf: URL(fileURLWithPath: rawPath))
                try #require(raw.count == width * height * 2, "v4l2-ctl wrote \(raw.count) bytes; format:\n\(driverFormat)")

                // (b) The agent's first raw frame, and 3 s of BGRA through a studio. Before its first frame the studio
                // gives up after the seconds on the wall clock; on a loaded emulated guest (round trips near 0.5 s) the
                // handshake and the first frame took longer than 1 s once in CI, and the studio recorded none.
                let dumpPath = scratch.path + "/agent.yuv"
                let agent = try HardwareAgent(scratch, arguments: ["--camera-format", "YUYV", "--dump-raw", dumpPath])
                defer { agent.stop() }
                try #require(
                    Hardware.wait(seconds: 30) { FileManager.default.fileExists(atPath: dumpPath + ".json") },
                    "no raw dump from the agent:\n\(tail(agent.log))")
                let studio = try HardwareStudio(scratch, port: agent.port, seconds: 3, codec: "bgra", videoFile: true)
                let (summary, line) = try studio.summary()
                agent.stop()
                print("HW colour \(setting.name): \(line)")
                let layout = try JSONDecoder().decode(RawLayout.self, from: Data(contentsOf: URL(fileURLWithPath: dumpPath + ".json")))
                let context = "\(setting.name); agent layout \(layout); driver format:\n\(driverFormat)"
                #expect(layout.fourcc == "YUYV" && layout.width == width && layout.height == height, "\(context)")
                #expect(layout.matrix == setting.matrix && layout.range == setting.range,
                        "the agent reports \(layout.matrix) \(layout.range), want \(setting.matrix) \(setting.range); \(context)")
                let frameBytes = (layout.bytesPerLine.first ?? 0) * layout.height
                #expect(frameBytes == raw.count && layout.planeBytes.first.map { $0 >= frameBytes } == true, "\(context)")
                let dumped = try Data(contentsOf: URL(fileURLWithPath: dumpPath))
                #expect(dumped.count >= frameBytes, "\(context)")
                let differing = zip(raw.prefix(frameBytes), dumped.prefix(frameBytes)).filter { $0 != $1 }.count
                #expect(differing == 0, "\(differing) of \(frameBytes) bytes differ between v4l2-ctl's frame and the agent's; \(context)")

                // (c) Our BGRA against ffmpeg's conversion of the same bytes, with the colorimetry the agent reported.
                let matrix = try #require(Setting.ffmpegMatrix(layout.matrix), "\(context)")
                let range = try #require(Setting.ffmpegRange(layout.range), "\(context)")
                let referencePath = scratch.path + "/ffmpeg.bgra"
                // accurate_rnd+full_chroma_int+bitexact: exact BT.601/709 arithmetic with interpolated chroma (checked
                // against the formulas on a synthetic image on the host: 0 difference at flat colours).
                let convert = try runCommand(ffmpeg, [
                    "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuyv422", "-s", "\(width)x\(height)",
                    "-i", rawPath, "-sws_flags", "accurate_rnd+full_chroma_int+bitexact",
                    "-vf", "scale=in_color_matrix=\(matrix):in_range=\(range),format=bgra", "-f", "rawvideo", referencePath,
                ], timeout: 120)
                try #require(convert.status == 0 && !convert.signaled, "ffmpeg: \(convert)")
                let reference = try Data(contentsOf: URL(fileURLWithPath: referencePath))
                let frameSize = width * height * 4
                try #require(reference.count == frameSize, "ffmpeg wrote \(reference.count) bytes")
                #expect(summary.width == width && summary.height == height && summary.frames >= 1, "summary \(line)")
                let video = try Data(contentsOf: URL(fileURLWithPath: studio.out + "/video.bgra"))
                try #require(video.count >= frameSize && video.count % frameSize == 0, "video.bgra has \(video.count) bytes; summary \(line)")
                // The first and the last recorded frame (the picture is still, so every frame must match).
                for (name, offset) in [("first", 0), ("last", video.count - frameSize)] {
                    let ours = video.subdata(in: offset..<(offset + frameSize))
                    let comparison = Self.compare(ours, reference, width: width, height: height)
                    print("HW colour \(setting.name) \(name) frame: \(comparison)")
                    #expect(comparison.worst <= 3, "\(name) frame: \(comparison); \(context)")
                    #expect(comparison.opaque, "\(name) frame: alpha is not 255 everywhere")
                    // The check means something only if most of the picture is compared and it has colours.
                    #expect(comparison.compared >= width * height * 8 / 10 && comparison.colours >= 6, "\(name) frame: \(comparison)")
                }
            }
        }

        struct Comparison: CustomStringConvertible {
            /// The largest per-channel difference away from vertical colour edges.
            var worst = 0
            /// The largest difference on the edges (informative only).
            var worstOnEdges = 0
            var compared = 0
            var skipped = 0
            /// Distinct reference colours among the compared pixels (up to 64 counted).
            var colours = 0
            var opaque = true
            var description: String {
                "worst \(worst) on \(compared) pixels away from edges (worst \(worstOnEdges) on \(skipped) edge pixels), \(colours) colours"
            }
        }

        /// Compares B, G, R per pixel. libyuv repeats each chroma sample for its two pixels while swscale
        /// (full_chroma_int) interpolates between chroma samples, so on a vertical colour edge the two differ by
        /// design by much more than rounding. Pixels within 2 px of a horizontal change in the reference (more than 6
        /// in any channel) are therefore left out of the ±3 bound.
        static func compare(_ ours: Data, _ reference: Data, width: Int, height: Int) -> Comparison {
            var result = Comparison()
            var colours = Set<UInt32>()
            ours.withUnsafeBytes { (a: UnsafeRawBufferPointer) in
                reference.withUnsafeBytes { (b: UnsafeRawBufferPointer) in
                    for y in 0..<height {
                        let row = y * width * 4
                        // edge[x]: the reference changes between x-1 and x.
                        var edge = [Bool](repeating: false, count: width + 1)
                        for x in 1..<width {
                            let p = row + x * 4
                            for c in 0..<3 where abs(Int(b[p + c]) - Int(b[p - 4 + c])) > 6 { edge[x] = true }
                        }
                        for x in 0..<width {
                            let p = row + x * 4
                            var nearEdge = false
                            for e in max(1, x - 2)...min(width - 1, x + 3) where edge[e] { nearEdge = true }
                            var diff = 0
                            for c in 0..<3 { diff = max(diff, abs(Int(a[p + c]) - Int(b[p + c]))) }
                            if a[p + 3] != 255 { result.opaque = false }
                            if nearEdge {
                                result.skipped += 1
                                result.worstOnEdges = max(result.worstOnEdges, diff)
                            } else {
                                result.compared += 1
                                result.worst = max(result.worst, diff)
                                if colours.count < 64 {
                                    colours.insert(UInt32(b[p]) | UInt32(b[p + 1]) << 8 | UInt32(b[p + 2]) << 16)
                                }
                            }
                        }
                    }
                }
            }
            result.colours = colours.count
            return result
        }
    }
}
