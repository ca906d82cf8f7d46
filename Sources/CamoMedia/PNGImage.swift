import CPNG

/// A decoded PNG picture as BGRA pixels, and an encoder for 8-bit grayscale PNG files, both through Debian's
/// libpng (its simplified `png_image` API).
///
/// The decoder reads every standard PNG: gray, RGB, palette, gray with alpha and RGBA at every bit depth, with
/// the optional `tRNS` transparency, interlaced or not. Transparent pixels are composited onto white. 16-bit
/// samples are scaled to 8 bits (a 16-bit file without a `gAMA` chunk counts as sRGB, like an 8-bit one).
/// Damaged, truncated or hostile files are refused with a ``PNGError`` carrying libpng's reason, and the size is
/// limited to ``maxDimension`` before any pixel memory is taken.
public struct PNGImage: Sendable, Equatable {
    /// The widest and tallest picture the decoder accepts.
    public static let maxDimension = 8192

    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Pixels as B, G, R, A bytes (A always 255), row by row, `width * 4` bytes per row.
    public let bgra: [UInt8]

    /// Bytes per row of ``bgra``: `width * 4`.
    public var bytesPerRow: Int { width * 4 }

    /// Creates a picture from BGRA pixels (`width * height * 4` bytes).
    public init(width: Int, height: Int, bgra: [UInt8]) {
        precondition(width >= 0 && height >= 0 && bgra.count == width * height * 4, "PNGImage: wrong pixel count")
        self.width = width
        self.height = height
        self.bgra = bgra
    }

    /// The picture as a BGRA ``VideoFrame``.
    public func videoFrame(captureTime: UInt64 = 0, sourceSequence: UInt64 = 0) -> VideoFrame {
        VideoFrame(
            width: width, height: height, bytesPerRow: bytesPerRow, pixelFormat: .bgra, data: bgra,
            captureTime: captureTime, sourceSequence: sourceSequence)
    }

    /// The eight bytes every PNG file starts with.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    // MARK: Encoding

    /// An 8-bit grayscale PNG file (color type 0, not interlaced, marked sRGB) of `pixels`, row by row.
    ///
    /// The same pixels give the same bytes with one libpng and zlib; other versions may compress differently.
    /// - Precondition: `width` and `height` are 1...``maxDimension`` and `pixels.count == width * height`.
    public static func encodeGray(width: Int, height: Int, pixels: [UInt8]) -> [UInt8] {
        precondition(
            (1...maxDimension).contains(width) && (1...maxDimension).contains(height)
                && pixels.count == width * height,
            "PNGImage.encodeGray: the size must be 1...\(maxDimension) and pixels.count width * height")
        var image = png_image()
        image.version = CAMO_PNG_IMAGE_VERSION
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = CAMO_PNG_FORMAT_GRAY
        let capacity = camo_png_image_png_size_max(&image)
        var failure: String?
        let file = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            var written = capacity
            let succeeded = pixels.withUnsafeBytes { source in
                png_image_write_to_memory(&image, buffer.baseAddress, &written, 0, source.baseAddress, 0, nil)
            }
            if succeeded != 0 {
                count = written
            } else {
                count = 0
                failure = message(of: image)
            }
        }
        // With a buffer of PNG_IMAGE_PNG_SIZE_MAX, writing to memory fails only when memory runs out.
        precondition(failure == nil, "PNGImage.encodeGray: libpng failed: \(failure ?? "")")
        return file
    }

    // MARK: Decoding

    /// Decodes a PNG file.
    ///
    /// - Throws: ``PNGError`` for a file that is not a PNG, is truncated or damaged (libpng's reason, such as a
    ///   CRC error, a bad zlib stream or too little image data), or is larger than ``maxDimension`` on a side.
    public static func decode(_ bytes: [UInt8]) throws(PNGError) -> PNGImage {
        guard bytes.count >= signature.count, bytes[0..<signature.count].elementsEqual(signature) else {
            throw PNGError("This is not a PNG file (it does not start with the PNG signature).")
        }
        let result: Result<PNGImage, PNGError> = bytes.withUnsafeBytes { file in
            var image = png_image()
            image.version = CAMO_PNG_IMAGE_VERSION
            // Safe to call more than once; libpng also frees after a failure or a finished read.
            defer { png_image_free(&image) }
            guard png_image_begin_read_from_memory(&image, file.baseAddress, file.count) != 0 else {
                return .failure(refusal(image))
            }
            let (width, height) = (Int(image.width), Int(image.height))
            guard width <= maxDimension, height <= maxDimension else {
                return .failure(PNGError(
                    "The PNG picture is \(width)x\(height); at most \(maxDimension) pixels on a side are accepted."))
            }
            image.format = CAMO_PNG_FORMAT_BGRA
            image.flags |= CAMO_PNG_IMAGE_FLAG_16BIT_sRGB
            let size = camo_png_image_size(&image)
            var failure: PNGError?
            let pixels = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                guard png_image_finish_read(&image, nil, buffer.baseAddress, 0, nil) != 0 else {
                    failure = refusal(image)
                    count = 0
                    return
                }
                compositeOntoWhite(buffer)
                count = size
            }
            if let failure { return .failure(failure) }
            return .success(PNGImage(width: width, height: height, bgra: pixels))
        }
        return try result.get()
    }

    /// The error for a read libpng gave up on, from its message.
    private static func refusal(_ image: png_image) -> PNGError {
        let reason = message(of: image)
        // png_image_begin_read_from_memory's reader says this when the file ends before libpng is done.
        if reason == "read beyond end of data" {
            return PNGError("The PNG file is truncated (libpng: \(reason)).")
        }
        return PNGError("The PNG file is damaged or not supported (libpng: \(reason.isEmpty ? "no reason given" : reason)).")
    }

    /// `png_image.message`: libpng's last error or warning, a NUL-terminated string in a fixed array.
    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Replaces each pixel's color by its color over white and makes it opaque (8-bit, not premultiplied).
    private static func compositeOntoWhite(_ pixels: UnsafeMutableBufferPointer<UInt8>) {
        for alphaIndex in stride(from: 3, to: pixels.count, by: 4) {
            let alpha = Int(pixels[alphaIndex])
            guard alpha != 255 else { continue }
            for channel in (alphaIndex - 3)..<alphaIndex {
                pixels[channel] = UInt8((Int(pixels[channel]) * alpha + 255 * (255 - alpha) + 127) / 255)
            }
            pixels[alphaIndex] = 255
        }
    }
}
