import CamoStudioKit
import Foundation
import Testing

extension CameraHardware {
    /// Steady 30 fps from vivid through the real agent and studio: the webcam input, the HDMI input at 720p, every
    /// pixel format the agent claims, the multi-planar API, and camera rates above and below 30 fps.
    @Suite(
        "Capture: vivid to the studio at 30 fps", .serialized,
        .enabled(if: Hardware.isEnabled, "runs only inside the VM: scripts/vm-test"))
    struct Capture {
        @Test("Webcam input, YUYV 640x360: 10 s at a steady 30 fps")
        func webcam() throws {
            // JPEG: under emulation (TCG) 640x360 BGRA at 30 fps is more than agent + studio can move (the benchmark
            // test prints that rate); JPEG is what a studio asks for over a real link anyway.
            let codec = "jpeg"
            try Vivid.with(Hardware.webcam) {
                // The repeat bound is a timing property of an emulated 2-CPU guest shared with the studio, whose speed
                // follows the host: judged against ffmpeg doing the same job in the same run (see
                // steady30Problems(_:seconds:width:height:mode:against:)). On a host about half as fast as those of
                // earlier rounds (CI, November 2026) the agent had 3 repeats, at the bound.
                let reference = try FFmpegJPEGReference.measure(size: "640x360")
                print("HW webcam reference: \(reference.description)")
                let mode = "YUYV 640x360 at 30 fps"
                var run = try recordFromCamera(
                    try HardwareScratch("webcam-\(codec)"), label: "webcam \(codec)", agentArguments: ["--camera-format", "YUYV"],
                    seconds: 10, codec: codec)
                // One retry (printed) keeps a single starved second on a busy host from failing CI; two misses fail.
                let first = steady30Problems(run, seconds: 10, width: 640, height: 360, mode: mode, against: reference)
                if !first.isEmpty {
                    print("HW webcam: first attempt missed (\(first.joined(separator: "; "))); trying once more")
                    run = try recordFromCamera(
                        try HardwareScratch("webcam-\(codec)-retry"), label: "webcam \(codec) retry",
                        agentArguments: ["--camera-format", "YUYV"], seconds: 10, codec: codec)
                }
                let problems = steady30Problems(run, seconds: 10, width: 640, height: 360, mode: mode, against: reference)
                #expect(problems.isEmpty, "\(problems.joined(separator: "; "))\n\(run.context)")
                #expect(run.summary.codec == codec, "codec \(run.summary.codec)")
                printJPEGBench("webcam 640x360", run, seconds: 10, against: reference)
            }
        }

        @Test("HDMI input at 1280x720 (DV timings 720p30): 5 s at a steady 30 fps")
        func hdmi720p() throws {
            // input_types=0x3: the one input is an HDMI input (2 bits per input: 0 webcam, 1 TV, 2 S-Video, 3 HDMI).
            try Vivid.with("node_types=0x1 num_inputs=1 input_types=0x3") {
                try Vivid.ctl("--set-dv-bt-timings index=5")
                let timings = try Vivid.ctl("--get-dv-timings")
                try #require(timings.contains("Active width: 1280") && timings.contains("Active height: 720")
                             && timings.contains("30.00 frames per second"), "DV timings: \(timings)")
                // The reference, in the same run: ffmpeg doing the same capture → JPEG job on this guest (see
                // steady30Problems(_:seconds:width:height:mode:against:)). Under emulation the guest's speed follows
                // the host it runs on: on the hosts of earlier rounds the agent (turbojpeg, ~21 ms a frame there) had
                // no repeat in 9 runs; on a host about half as fast (CI, November 2026) ffmpeg's one thread made 8-13
                // fps and its two 13-19 fps, and the agent 11-15 new frames a second. The colour conversion runs on the
                // camera thread, straight from the YUYV (PixelJFIF420); only turbojpeg's compression is in the slot.
                let reference = try FFmpegJPEGReference.measure(size: "1280x720")
                print("HW hdmi720p reference: \(reference.description)")
                let mode = "YUYV 1280x720 at 30 fps"
                var run = try recordFromCamera(try HardwareScratch("hdmi"), label: "hdmi 720p30", seconds: 5, size: "1280x720", codec: "jpeg")
                // As in the webcam run, one retry (printed) keeps a single starved second on a busy host from failing
                // CI; two misses fail.
                let first = steady30Problems(run, seconds: 5, width: 1280, height: 720, mode: mode, against: reference)
                if !first.isEmpty {
                    print("HW hdmi720p: first attempt missed (\(first.joined(separator: "; "))); trying once more")
                    run = try recordFromCamera(
                        try HardwareScratch("hdmi-retry"), label: "hdmi 720p30 retry", seconds: 5, size: "1280x720", codec: "jpeg")
                }
                let problems = steady30Problems(run, seconds: 5, width: 1280, height: 720, mode: mode, against: reference)
                #expect(problems.isEmpty, "\(problems.joined(separator: "; "))\n\(run.context)")
                // More than 6 new frames a second, or on a guest where ffmpeg's one thread cannot do 7.5 (a CI host in
                // November 2026 ran it at 5.8 fps; the agent made 5.6), at least 0.8 of ffmpeg's rate.
                let newPerSecond = Double(run.summary.sourceFrames) / 5
                #expect(run.summary.sourceFrames > 30 || (reference.oneThread < 7.5 && newPerSecond >= 0.8 * reference.oneThread),
                        "new camera frames: \(run.summary.sourceFrames) (\(newPerSecond)/s; ffmpeg's one thread \(reference.oneThread) fps)\n\(run.context)")
                printJPEGBench("hdmi720p", run, seconds: 5, against: reference)
                print("HW hdmi720p: repeated \(run.summary.repeated) of \(run.summary.frames), new camera frames \(run.summary.sourceFrames), skipped \(run.summary.sourceGaps)")
            }
        }

        /// The formats the agent converts itself (libyuv), which the issue lists.
        static let claimedFormats = ["YUYV", "UYVY", "NV12", "NV21", "YU12", "RGB3", "BGR3", "XR24", "AR24"]

        /// The other formats vivid offers that `camo-agent devices --json` marks convertible (libyuv or libv4lconvert),
        /// one for each way of converting them: packed 4:2:2 with Cr first, planar 4:2:2, planar 4:2:0 with Cr first,
        /// semi-planar 4:2:2 with Cr first, grey, 16-bit RGB, 32-bit RGB with alpha first and with X last, and
        /// Bayer (libv4lconvert). The rest (VYUY, NV16, BX24, BA24, XB24, RA24, GBRG, GRBG, RGGB) differ from one of
        /// these only in the order of their bytes, which the host's PixelConverterTests check against ffmpeg for
        /// every one; here each run costs 18 s of emulated time (the sweep of all 18 took 327 s of the CI run).
        static let otherConvertibleFormats = ["YVYU", "422P", "YV12", "NV61", "GREY", "RGBP", "AB24", "RX24", "BA81"]
        /// The convertible formats vivid offers that are not run here, each the same path as one above.
        static let sameWayAsAnother = ["VYUY", "NV16", "BX24", "BA24", "XB24", "RA24", "GBRG", "GRBG", "RGGB"]

        // The per-format runs use 320x180: under emulation a 640x360 JPEG encode plus conversion leaves little
        // headroom, and what these runs check is each format's path, not the emulator's speed (the 640x360 run
        // above checks that size for 10 s).
        @Test("Every claimed format, 4 s at 320x180", arguments: claimedFormats)
        func claimedFormat(_ fourcc: String) throws {
            try formatRun(fourcc, seconds: 4)
        }

        @Test("Every other format vivid offers that devices marks convertible, 3 s at 320x180", arguments: otherConvertibleFormats)
        func otherFormat(_ fourcc: String) throws {
            try formatRun(fourcc, seconds: 3)
        }

        private func formatRun(_ fourcc: String, seconds: Double) throws {
            try Vivid.with(Hardware.webcam) {
                let scratch = try HardwareScratch("format-\(fourcc)")
                let run = try recordFromCamera(
                    scratch, label: "format \(fourcc)", agentArguments: ["--camera-format", fourcc], seconds: seconds,
                    size: "320x180")
                expectFormatPath(run, seconds: seconds, width: 320, height: 180, mode: "\(fourcc) 320x180 at 30 fps")
            }
        }

        /// Multi-planar formats ("N-C": one buffer per plane) and plain ones on a multi-planar device. libv4l2's
        /// mplane plugin may present the device as single-planar; whatever the route, frames must arrive.
        @Test("Multi-planar vivid (multiplanar=2), 4 s at 320x180", arguments: ["YUYV", "NV12", "YU12"])
        func multiplanar(_ fourcc: String) throws {
            try Vivid.with("multiplanar=2 " + Hardware.webcam) {
                let caps = try Vivid.ctl("--info")
                try #require(caps.contains("Video Capture Multiplanar"), "not a multi-planar device: \(caps)")
                let scratch = try HardwareScratch("mplane-\(fourcc)")
                let run = try recordFromCamera(
                    scratch, label: "multiplanar \(fourcc)", agentArguments: ["--camera-format", fourcc], seconds: 4,
                    size: "320x180")
                expectFormatPath(run, seconds: 4, width: 320, height: 180, mode: "\(fourcc) 320x180 at 30 fps")
                if run.agent.log.contains("mplane") { print("HW multiplanar \(fourcc): libv4l2's mplane plugin in use") }
            }
        }

        /// 640x360 on the webcam input goes up to 40 fps. Asked for 60, the agent takes the fastest and says why; asked
        /// for 15, it captures at 15 and the pacer repeats every other slot (honestly flagged). The studio always gets 30.
        @Test("Camera rates: --camera-fps 60 and 15, the studio still gets 30 fps", arguments: [60.0, 15.0])
        func cameraRate(_ rate: Double) throws {
            try Vivid.with(Hardware.webcam) {
                // The 60 fps run asks the agent for more JPEG work than the 30 fps webcam run: it is judged against
                // ffmpeg doing the same job in the same run, as that run is (see below).
                let reference = rate == 60 ? try FFmpegJPEGReference.measure(size: "640x360") : nil
                if let reference { print("HW camera-fps 60 reference: \(reference.description)") }
                let scratch = try HardwareScratch("rate-\(Int(rate))")
                let seconds = 8.0
                let run = try recordFromCamera(
                    scratch, label: "camera-fps \(Int(rate))",
                    agentArguments: ["--camera-format", "YUYV", "--camera-fps", String(rate)], seconds: seconds)
                let summary = run.summary
                let reason = run.agent.reason ?? ""
                let mode = run.agent.mode ?? ""
                var problems: [String] = []
                if reason.isEmpty { problems.append("no reason for the mode in the log") }
                if abs(Double(summary.frames) - 30 * seconds) > (30 * seconds * 0.03).rounded(.down) {
                    problems.append("frames \(summary.frames), want \(Int(30 * seconds)) ± 3 %")
                }
                if abs(summary.fps - 30) > 0.5 { problems.append("fps \(summary.fps), want 30 ± 0.5") }
                if summary.width != 640 || summary.height != 360 { problems.append("size \(summary.width)x\(summary.height)") }
                if summary.dropped != 0 { problems.append("dropped \(summary.dropped)") }
                if summary.sourceDuplicates != 0 { problems.append("sourceDuplicates \(summary.sourceDuplicates)") }
                if summary.noSignal != 0 { problems.append("noSignal \(summary.noSignal)") }
                if rate == 60 {
                    // vivid's fastest at 640x360 (or larger) is 40 fps: the agent takes it and says 60 was not reached.
                    if mode != "YUYV 640x360 at 40 fps" { problems.append("mode \(mode), want YUYV 640x360 at 40 fps") }
                    if !run.agent.log.contains("Camera mode chosen below the request") { problems.append("no 'below the request' warning") }
                    if !reason.contains("60") { problems.append("the reason does not mention 60 fps") }
                    // 40 fps of YUYV keeps an emulated guest near its limit (the agent uses more than one emulated
                    // CPU), and the guest pauses now and then: a pause shows as a run of repeats followed by a frame
                    // sent long after its capture (StallRepeats). With headroom (ffmpeg's one thread makes ≥ 45 fps
                    // of the 30 fps webcam job) pauses are bounded apart (at most 3, costing at most 10 % of the
                    // slots), a hole in vivid's own frames (its timer thread woke late on a busy host) explains the
                    // repeats it holds (repeatsBeyondCameraSkips), and every other repeat keeps the bound of 3 per
                    // 10 s; on the CI host of November 2026 one run had 3 repeats in a row, at the bound. Without
                    // headroom the agent must carry new frames at min(29, 0.75x ffmpeg's one-thread rate) a second:
                    // ffmpeg's reference is the 30 fps webcam job, while here the agent takes 40 frames a second from
                    // vivid (a third more to dequeue) and vivid itself draws 40; the CI run of 27 November 2026 gave
                    // 20.8 against ffmpeg's 25.2 (0.82x) with 74 repeats, all of them the pacer running late.
                    let reference = reference ?? FFmpegJPEGReference(oneThread: 0, defaultThreads: 0)
                    let newPerSecond = Double(summary.sourceFrames) / seconds
                    print(String(format: "BENCH camera-fps 60 jpeg: agent %.1f new frames/s = %.2fx ffmpeg's one thread (%@)",
                                 newPerSecond, newPerSecond / max(reference.oneThread, 0.1), reference.description))
                    guard reference.oneThread >= 45 else {
                        let wanted = min(29, 0.75 * reference.oneThread)
                        if newPerSecond < wanted {
                            problems.append(String(format: "%.1f new camera frames a second, want ≥ %.1f (%@)", newPerSecond, wanted, reference.description))
                        }
                        #expect(problems.isEmpty, "\(problems.joined(separator: "; "))\n\(run.context)")
                        return
                    }
                    let allowed = Hardware.repeatAllowance(seconds: seconds)
                    let ordinary = (try? run.studio.index()).map { repeatsBeyondCameraSkips($0, excludingStalls: true) }
                    if let ordinary, ordinary > allowed {
                        problems.append("repeated \(ordinary) outside stalls and the camera's skips, want ≤ \(allowed)")
                    }
                    if ordinary == nil { problems.append("video.json unreadable") }
                    if run.stalls.events > 3 { problems.append("\(run.stalls.events) stalls of the agent, want ≤ 3") }
                    if run.stalls.repeats * 10 > summary.frames {
                        problems.append("stalls cost \(run.stalls.repeats) of \(summary.frames) slots, want ≤ 10 %")
                    }
                } else {
                    // Every other slot repeats, and says so.
                    if !(mode.hasPrefix("YUYV ") && mode.hasSuffix(" at 15 fps")) { problems.append("mode \(mode), want YUYV at 15 fps") }
                    let share = Double(summary.repeated) / Double(max(summary.frames, 1))
                    if !(0.4...0.6).contains(share) { problems.append("repeated \(summary.repeated) of \(summary.frames) frames, want 40-60 %") }
                    // The repeats the 15 fps camera's pace explains are expected; any beyond them (and beyond
                    // frames vivid skipped on a busy host) keep the bound of 3 per 10 s.
                    let allowed = Hardware.repeatAllowance(seconds: seconds)
                    let ordinary = (try? run.studio.index()).map { repeatsBeyondCameraSkips($0) }
                    if let ordinary, ordinary > allowed {
                        problems.append("repeated \(ordinary) beyond what the camera's pace explains, want ≤ \(allowed)")
                    }
                    if ordinary == nil { problems.append("video.json unreadable") }
                }
                #expect(problems.isEmpty, "\(problems.joined(separator: "; "))\n\(run.context)")
            }
        }
    }
}
