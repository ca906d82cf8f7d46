import CYUV

/// The libyuv calls ``ImageTransform`` makes on BGRA pixels held in arrays: the only place it touches pointers.
///
/// A ``Region`` names pixels inside a source array; a crop is a byte offset and the frame's own row stride, so it
/// is read in place, never copied. Each call returns a new tightly packed array (`4 * width` bytes per row) that
/// libyuv fills whole, so it is allocated without being zeroed first.
enum BGRAKernels {
    /// Pixels inside an array: where the first one starts, the row stride, and the size.
    struct Region: Sendable, Hashable {
        /// Byte offset of the top-left pixel.
        var offset: Int
        /// Bytes from the start of one row to the start of the next.
        var bytesPerRow: Int
        /// Width in pixels.
        var width: Int
        /// Height in pixels.
        var height: Int

        /// The whole of a frame.
        init(_ frame: VideoFrame) {
            self.init(offset: 0, bytesPerRow: frame.bytesPerRow, width: frame.width, height: frame.height)
        }

        /// The rectangle `rect` of a frame.
        init(_ rect: PixelRect, of frame: VideoFrame) {
            self.init(
                offset: rect.y * frame.bytesPerRow + rect.x * 4, bytesPerRow: frame.bytesPerRow, width: rect.width,
                height: rect.height)
        }

        /// The whole of a tightly packed picture of `size`.
        init(tight size: VideoSize) {
            self.init(offset: 0, bytesPerRow: size.width * 4, width: size.width, height: size.height)
        }

        /// The `width` x `height` pixels from byte `offset`, rows `bytesPerRow` apart.
        init(offset: Int, bytesPerRow: Int, width: Int, height: Int) {
            self.offset = offset
            self.bytesPerRow = bytesPerRow
            self.width = width
            self.height = height
        }

        /// Whether every byte of the region is inside an array of `count` bytes.
        func fits(in count: Int) -> Bool {
            width >= 1 && height >= 1 && offset >= 0 && bytesPerRow >= width * 4
                && offset + (height - 1) * bytesPerRow + width * 4 <= count
        }
    }

    /// `region` of `source` read bottom-up when `bottomUp` (a vertical flip), then turned clockwise by `turn`.
    ///
    /// One libyuv pass: `ARGBCopy` for no turn (bottom-up: a negative height), `ARGBMirror` for a half turn (a half
    /// turn is a mirror read bottom-up, so a bottom-up half turn is a plain mirror), `ARGBRotate` for the quarters.
    static func orient(_ source: [UInt8], _ region: Region, bottomUp: Bool, turn: ImageRotation) -> [UInt8] {
        precondition(region.fits(in: source.count), "BGRAKernels.orient: \(region) is outside \(source.count) bytes")
        let width = turn.swapsSides ? region.height : region.width
        let height = turn.swapsSides ? region.width : region.height
        let stride = Int32(width * 4)
        let (w, h, sourceStride) = (Int32(region.width), Int32(region.height), Int32(region.bytesPerRow))
        return filled(count: width * 4 * height) { destination in
            let result = source.withUnsafeBufferPointer { buffer in
                let from = buffer.baseAddress! + region.offset
                switch turn {
                case .none: return ARGBCopy(from, sourceStride, destination, stride, w, bottomUp ? -h : h)
                case .half: return ARGBMirror(from, sourceStride, destination, stride, w, bottomUp ? h : -h)
                case .quarter: return ARGBRotate(from, sourceStride, destination, stride, w, bottomUp ? -h : h, kRotate90)
                case .threeQuarters:
                    return ARGBRotate(from, sourceStride, destination, stride, w, bottomUp ? -h : h, kRotate270)
                }
            }
            // libyuv refuses only null pointers and empty sizes, which the checks above exclude.
            precondition(result == 0, "libyuv failed to turn \(region) by \(turn.rawValue)°")
        }
    }

    /// `region` of `source` read bottom-up when `bottomUp` (a vertical flip), scaled bilinearly to `size`
    /// (`ARGBScale`; a viewport's crop is only ever enlarged, where libyuv's box filter falls back to bilinear anyway).
    /// libyuv's x86 bilinear column filter truncates with weights that sum to 127/128: flat colours come out up to
    /// 2 levels lower, alpha 255 as 253.
    static func scale(_ source: [UInt8], _ region: Region, bottomUp: Bool, to size: VideoSize) -> [UInt8] {
        precondition(region.fits(in: source.count), "BGRAKernels.scale: \(region) is outside \(source.count) bytes")
        let (w, h) = (Int32(region.width), Int32(region.height))
        return filled(count: size.width * 4 * size.height) { destination in
            let result = source.withUnsafeBufferPointer { buffer in
                ARGBScale(
                    buffer.baseAddress! + region.offset, Int32(region.bytesPerRow), w, bottomUp ? -h : h,
                    destination, Int32(size.width * 4), Int32(size.width), Int32(size.height), kFilterBilinear)
            }
            precondition(result == 0, "ARGBScale failed for \(region) -> \(size)")
        }
    }

    /// A new array of `count` bytes that `fill` writes entirely (it is not zeroed first).
    private static func filled(count: Int, _ fill: (UnsafeMutablePointer<UInt8>) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(buffer.baseAddress!)
            initialized = count
        }
    }
}
