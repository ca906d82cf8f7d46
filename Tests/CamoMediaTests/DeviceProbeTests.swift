import CamoCapture
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Device probing is safe without hardware")
struct DeviceProbeTests {
    @Test func listingVideoDevicesNeverFails() {
        let devices = DeviceProbe.videoCaptureDeviceInfo()
        for device in devices {
            #expect(device.path.hasPrefix("/dev/video"))
        }
        #expect(DeviceProbe.videoCaptureDevices() == devices.map(\.path))
    }

    @Test func nodesThatAreNotCamerasAreSkipped() throws {
        var template = Array("/tmp/camo-probe-XXXXXX".utf8CString)
        let created: String? = template.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, let path = mkdtemp(base) else { return nil }
            return String(cString: path)
        }
        let directory = try #require(created)
        defer {
            for name in ["video0", "video12", "videoX", "other"] { unlink(directory + "/" + name) }
            rmdir(directory)
        }
        for name in ["video0", "video12", "videoX", "other"] {
            let fd = open(directory + "/" + name, O_CREAT | O_WRONLY, 0o600)
            #expect(fd >= 0)
            close(fd)
        }
        #expect(DeviceProbe.videoCaptureDeviceInfo(in: directory).isEmpty)
        #expect(DeviceProbe.videoCaptureDeviceInfo(in: directory + "/does-not-exist").isEmpty)
    }

    @Test func microphoneProbeAnswers() {
        // No assumption about this machine's sound hardware: it must answer without crashing.
        _ = MicrophoneSource.hasDevice()
    }
}
