import CYUV
import CamoMedia
import CamoTestSupport
import CamoVirtualDevices
import Logging
import Testing

@Suite("The test pattern survives the virtual camera's YUYV: frame numbers read back at the sizes the VM test uses")
struct PatternThroughYUYVTests {
    final class Sink: VirtualCameraSink, @unchecked Sendable {
        var frames: [[UInt8]] = []
        func write(_ bytes: [UInt8]) throws(VirtualDeviceError) { frames.append(bytes) }
        func close() {}
    }

    @Test("160x90 and 320x180: the number written is the number read after YUYV and back to BGRA (libyuv, as ffmpeg does)", arguments: [(160, 90), (320, 180)])
    func numbersReadBack(width: Int, height: Int) throws {
        let size = VideoSize(width: width, height: height)
        let sink = Sink()
        let camera = VirtualCamera(sink: sink, format: try VirtualCameraFormat(size: size), clock: ManualClock(), logger: Logger(label: "test"))
        for number in [UInt64(1), 29, 30, 12_345, 4_000_000_001] {
            camera.show(TestPattern.frame(number: number, size: size, captureTime: 0))
            camera.flush()
            let yuyv = try #require(sink.frames.last)
            var bgra = [UInt8](repeating: 0, count: width * height * 4)
            #expect(YUY2ToARGB(yuyv, Int32(width * 2), &bgra, Int32(width * 4), Int32(width), Int32(height)) == 0)
            let back = VideoFrame(width: width, height: height, bytesPerRow: width * 4, data: bgra, captureTime: 0)
            #expect(TestPattern.readFrameNumber(back) == number, "\(size): wrote \(number)")
        }
    }
}
