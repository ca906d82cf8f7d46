import CALSA
import CAvahi
import CQREncode
import CTurboJPEG
import CV4L2
import CYUV
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Each system-library target imports its headers, links its library, and answers one real call.
@Suite("System libraries link and answer")
struct SystemLibraryTests {
    @Test func alsaReportsItsVersion() {
        let version = String(cString: snd_asoundlib_version())
        #expect(version.split(separator: ".").count >= 2, "ALSA version was \(version)")
    }

    @Test func avahiTranslatesAnErrorCode() {
        let text = String(cString: avahi_strerror(Int32(AVAHI_ERR_DISCONNECTED)))
        #expect(!text.isEmpty)
    }

    @Test func qrencodeEncodesAString() throws {
        let encoded = QRcode_encodeString("camo", 0, QR_ECLEVEL_M, QR_MODE_8, 1)
        let code = try #require(encoded, "QRcode_encodeString failed, errno \(errno)")
        defer { QRcode_free(code) }
        #expect(code.pointee.width >= 21)
    }

    @Test func turbojpegCreatesACompressor() throws {
        let handle = try #require(tjInitCompress())
        #expect(tjDestroy(handle) == 0)
    }

    @Test func v4l2ShimExportsIoctlNumbersAndFourccs() {
        #expect(CAMO_VIDIOC_QUERYCAP != 0)
        #expect(camo_v4l2_fourcc(0x59, 0x55, 0x59, 0x56) == 0x5659_5559 /* 'YUYV' little-endian */)
        // Opening a path that does not exist fails cleanly through libv4l2.
        #expect(camo_v4l2_open("/dev/camo-does-not-exist", O_RDWR) == -1)
    }

    @Test func libyuvScalesAPixel() {
        var source: [UInt8] = [10, 20, 30, 255]
        var destination = [UInt8](repeating: 0, count: 16)
        let result = source.withUnsafeMutableBufferPointer { src in
            destination.withUnsafeMutableBufferPointer { dst in
                ARGBScale(src.baseAddress, 4, 1, 1, dst.baseAddress, 8, 2, 2, kFilterNone)
            }
        }
        #expect(result == 0)
        #expect(destination == [10, 20, 30, 255, 10, 20, 30, 255, 10, 20, 30, 255, 10, 20, 30, 255])
    }
}
