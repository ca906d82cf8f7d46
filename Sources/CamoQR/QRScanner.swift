import CZBar
import CamoMedia

/// Finds QR codes in BGRA pictures with libzbar.
///
/// Only QR codes are looked for, and their bytes come back unconverted (`ZBAR_CFG_BINARY`), decoded as
/// UTF-8 (invalid sequences become U+FFFD). A scanner is not thread-safe: use one per thread. It keeps its
/// grayscale buffer between calls, so scanning frames of one size allocates nothing but the results.
public final class QRScanner {
    private let scanner: OpaquePointer
    private let image: OpaquePointer
    private var gray: [UInt8] = []

    /// `zbar_fourcc('Y','8','0','0')`: 8-bit luma only.
    private static let y800: UInt = 0x3030_3859

    /// Creates a scanner that reads QR codes only.
    public init() {
        guard let scanner = zbar_image_scanner_create(), let image = zbar_image_create() else {
            fatalError("QRScanner: libzbar could not allocate a scanner (out of memory)")
        }
        self.scanner = scanner
        self.image = image
        // Symbology 0 (ZBAR_NONE) addresses every symbology: turn all off, then QR on, with raw bytes.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_BINARY, 1)
        zbar_image_set_format(image, Self.y800)
    }

    deinit {
        zbar_image_destroy(image)
        zbar_image_scanner_destroy(scanner)
    }

    /// The texts of the QR codes in a BGRA picture, in the order libzbar reports them (empty when there are
    /// none, and when the geometry is impossible: a side below 1, `stride < 4 * width`, or a buffer shorter
    /// than `stride * (height - 1) + 4 * width` bytes).
    ///
    /// - Parameters:
    ///   - bgra: The pixels, B, G, R, A bytes (alpha is ignored).
    ///   - width: Width in pixels.
    ///   - height: Height in pixels.
    ///   - stride: Bytes from one row to the next.
    public func scan(bgra: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) -> [String] {
        guard width >= 1, height >= 1, width <= Int(UInt32.max / 4), height <= Int(UInt32.max), stride >= 4 * width,
            bgra.count >= stride * (height - 1) + 4 * width
        else { return [] }
        let count = width * height
        if gray.count != count { gray = [UInt8](repeating: 0, count: count) }
        gray.withUnsafeMutableBufferPointer { out in
            for y in 0..<height {
                let row = y * stride
                let outRow = y * width
                for x in 0..<width {
                    let pixel = row + 4 * x
                    // BT.601 luma: 0.299 R + 0.587 G + 0.114 B, in 1/256 steps.
                    let luma = 29 * Int(bgra[pixel]) + 150 * Int(bgra[pixel + 1]) + 77 * Int(bgra[pixel + 2]) + 128
                    out[outRow + x] = UInt8(truncatingIfNeeded: luma >> 8)
                }
            }
        }
        return scanGray(width: width, height: height)
    }

    /// The texts of the QR codes in a BGRA picture held in an array; see the `UnsafeRawBufferPointer` form.
    public func scan(bgra: [UInt8], width: Int, height: Int, stride: Int) -> [String] {
        bgra.withUnsafeBytes { scan(bgra: $0, width: width, height: height, stride: stride) }
    }

    /// The texts of the QR codes in a video frame (empty for a frame that is not BGRA).
    public func scan(_ frame: VideoFrame) -> [String] {
        guard frame.pixelFormat == .bgra else { return [] }
        return scan(bgra: frame.data, width: frame.width, height: frame.height, stride: frame.bytesPerRow)
    }

    /// The texts of the QR codes in a decoded PNG picture.
    public func scan(_ picture: PNGImage) -> [String] {
        scan(bgra: picture.bgra, width: picture.width, height: picture.height, stride: picture.bytesPerRow)
    }

    private func scanGray(width: Int, height: Int) -> [String] {
        gray.withUnsafeBufferPointer { buffer -> [String] in
            zbar_image_set_size(image, UInt32(width), UInt32(height))
            // No cleanup handler: the buffer belongs to this scanner, and is detached again below.
            zbar_image_set_data(image, buffer.baseAddress, UInt(buffer.count), nil)
            defer { zbar_image_set_data(image, nil, 0, nil) }
            guard zbar_scan_image(scanner, image) > 0 else { return [] }
            var texts: [String] = []
            var symbol = zbar_image_first_symbol(image)
            while let current = symbol {
                if zbar_symbol_get_type(current) == ZBAR_QRCODE, let data = zbar_symbol_get_data(current) {
                    let length = Int(zbar_symbol_get_data_length(current))
                    let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: length)
                    texts.append(String(decoding: bytes, as: UTF8.self))
                }
                symbol = zbar_symbol_next(current)
            }
            return texts
        }
    }
}

@available(*, unavailable, message: "A QRScanner belongs to one thread; make one per thread")
extension QRScanner: Sendable {}
