import CALSA
import CAvahi
import CPNG
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

    @Test func libpngReadsAPNGHeaderWithTheSimplifiedAPI() {
        // A 1x1 8-bit gray PNG (the pixel 0x80), as Python's zlib writes it.
        let file: [UInt8] = [
            0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3A, 0x7E, 0x9B,
            0x55, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x68, 0x00, 0x00, 0x00,
            0x82, 0x00, 0x81, 0x77, 0xCD, 0x72, 0xB6, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
            0x42, 0x60, 0x82,
        ]
        var image = png_image()
        image.version = CAMO_PNG_IMAGE_VERSION
        let started = file.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        defer { png_image_free(&image) }
        #expect(started != 0)
        #expect(image.width == 1 && image.height == 1 && image.format == CAMO_PNG_FORMAT_GRAY)
        image.format = CAMO_PNG_FORMAT_BGRA
        #expect(camo_png_image_row_stride(&image) == 4 && camo_png_image_size(&image) == 4)
        #expect(png_access_version_number() >= 10_600)
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
