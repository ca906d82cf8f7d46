import CamoMedia
import CamoTestSupport
import CamoVirtualDevices
import Logging
import Synchronization
import Testing

@Suite("Virtual camera: conversion, filler and errors against a recording sink")
struct VirtualCameraTests {
    /// Keeps what was written.
    final class RecordingSink: VirtualCameraSink {
        let frames = Mutex<[[UInt8]]>([])
        let failing = Mutex(false)
        let closed = Mutex(false)
        func write(_ bytes: [UInt8]) throws(VirtualDeviceError) {
            if failing.withLock({ $0 }) { throw .busy(path: "/dev/video10") }
            frames.withLock { $0.append(bytes) }
        }
        func close() { closed.withLock { $0 = true } }
        var written: [[UInt8]] { frames.withLock { $0 } }
    }

    static func solid(_ size: VideoSize, red: UInt8, green: UInt8, blue: UInt8) -> VideoFrame {
        var data = [UInt8](repeating: 255, count: size.width * size.height * 4)
        for i in stride(from: 0, to: data.count, by: 4) {
            data[i] = blue
            data[i + 1] = green
            data[i + 2] = red
        }
        return VideoFrame(width: size.width, height: size.height, bytesPerRow: size.width * 4, data: data, captureTime: 0)
    }

    @Test("A BGRA frame becomes YUYV of BT.601 limited range: white is Y 235, black Y 16, chroma 128")
    func yuyvOfKnownColours() throws {
        let sink = RecordingSink()
        let format = try VirtualCameraFormat(pixelFormat: .yuyv, size: VideoSize(width: 64, height: 32))
        let camera = VirtualCamera(sink: sink, format: format, clock: ManualClock(), logger: Logger(label: "test"))
        camera.show(Self.solid(format.size, red: 255, green: 255, blue: 255))
        camera.show(Self.solid(format.size, red: 0, green: 0, blue: 0))
        camera.flush()
        let written = sink.written
        try #require(!written.isEmpty)
        let last = try #require(written.last)
        #expect(last.count == 64 * 32 * 2)
        #expect(abs(Int(last[0]) - 16) <= 1 && abs(Int(last[1]) - 128) <= 1, "black: Y \(last[0]) U \(last[1])")
        if written.count == 2 {
            #expect(abs(Int(written[0][0]) - 235) <= 1 && abs(Int(written[0][3]) - 128) <= 1, "white: Y \(written[0][0]) V \(written[0][3])")
        }
        #expect(camera.statistics.framesWritten + camera.statistics.framesReplaced == 2)
    }

    @Test("I420 at another size than the agent's: scaled, planes of the right sizes, pure red's V above 200")
    func i420Scaled() throws {
        let sink = RecordingSink()
        let format = try VirtualCameraFormat(pixelFormat: .i420, size: VideoSize(width: 32, height: 16))
        let camera = VirtualCamera(sink: sink, format: format, clock: ManualClock(), logger: Logger(label: "test"))
        camera.show(Self.solid(VideoSize(width: 128, height: 64), red: 255, green: 0, blue: 0))
        camera.flush()
        let frame = try #require(sink.written.first)
        #expect(frame.count == 32 * 16 + 2 * 16 * 8)
        let v = frame[32 * 16 + 16 * 8]
        #expect(v > 200, "V of pure red: \(v)")
    }

    @Test("While no frame comes the ticker writes RECONNECTING filler of the same size; a frame replaces it")
    func fillerThenFrames() async throws {
        let clock = ManualClock()
        let sink = RecordingSink()
        let format = try VirtualCameraFormat(pixelFormat: .yuyv, size: VideoSize(width: 160, height: 90))
        let camera = VirtualCamera(sink: sink, format: format, clock: clock, logger: Logger(label: "test"))
        for _ in 0..<10 {
            camera.tick()
            clock.advance(by: 33_333_333)
        }
        camera.flush()
        #expect(sink.written.count == 10)
        #expect(sink.written.allSatisfy { $0.count == format.frameBytes })
        #expect(camera.statistics.state == .connecting)
        // The filler is mid grey with white letters: some bytes near Y 235, most near Y 56.
        let filler = sink.written[0]
        let lumas = stride(from: 0, to: filler.count, by: 2).map { filler[$0] }
        #expect(lumas.contains { $0 > 200 } && lumas.filter { $0 < 80 }.count > lumas.count / 2)

        camera.show(Self.solid(format.size, red: 0, green: 0, blue: 255))
        camera.tick()
        camera.flush()
        #expect(camera.statistics.state == .streaming)
        #expect(camera.statistics.fillerWritten == 10)
        #expect(sink.written.count == 11)
        camera.sessionLost()
        camera.flush()
        #expect(camera.statistics.state == .reconnecting)
        #expect(camera.statistics.interruptions == 1)
        #expect(sink.written.count == 12, "the filler starts at once when the session is lost")
        camera.stop()
        #expect(sink.closed.withLock { $0 })
    }

    @Test("A sink that fails is counted and named, and the camera goes on")
    func writeErrorsAreCounted() throws {
        let sink = RecordingSink()
        sink.failing.withLock { $0 = true }
        let format = try VirtualCameraFormat(pixelFormat: .yuyv, size: VideoSize(width: 16, height: 16))
        let camera = VirtualCamera(sink: sink, format: format, clock: ManualClock(), logger: Logger(label: "test"))
        camera.show(Self.solid(format.size, red: 1, green: 2, blue: 3))
        camera.flush()
        #expect(camera.statistics.writeErrors == 1)
        #expect(camera.statistics.lastError?.contains("already fed by another program") == true, "\(camera.statistics)")
        sink.failing.withLock { $0 = false }
        camera.show(Self.solid(format.size, red: 1, green: 2, blue: 3))
        camera.flush()
        #expect(sink.written.count == 1)
    }

    @Test("Formats: odd or oversized sides are refused with the reason; descriptions name the format")
    func formats() throws {
        #expect(throws: VirtualDeviceError.self) { try VirtualCameraFormat(size: VideoSize(width: 641, height: 360)) }
        #expect(throws: VirtualDeviceError.self) { try VirtualCameraFormat(size: VideoSize(width: 8192, height: 360)) }
        let format = try VirtualCameraFormat()
        #expect(format.description == "YUYV 1280x720 at 30 fps")
        #expect(format.frameBytes == 1280 * 720 * 2)
        #expect(VirtualCameraFormat.PixelFormat.yuyv.fourcc == 0x5659_5559)
    }

    @Test("A missing device node is a sentence pointing at camo-studio setup")
    func missingDevice() throws {
        do {
            _ = try VirtualCamera(device: "/dev/video-no-such-node", format: try VirtualCameraFormat(), logger: Logger(label: "test"))
            Issue.record("a missing node was opened")
        } catch {
            #expect(error == .noDevice(path: "/dev/video-no-such-node"))
            #expect(error.description.contains("camo-studio setup"))
        }
    }

    @Test("A node of another driver is refused as not a loopback (the host's /dev/null stands in: not V4L2 at all)")
    func notAVideoDevice() throws {
        do {
            _ = try VirtualCamera(device: "/dev/null", format: try VirtualCameraFormat(), logger: Logger(label: "test"))
            Issue.record("/dev/null was taken as a loopback")
        } catch {
            #expect(error.description.contains("VIDIOC_QUERYCAP"), "\(error)")
        }
    }
}
