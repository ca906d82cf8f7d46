import CYUV
import CamoMedia

/// BGRA frames into the virtual camera's format with libyuv (BT.601 limited range), scaled first when their size
/// is not the format's.
enum FrameConversion {
    /// `frame` as `format.frameBytes` bytes of `format`; nil when it is not BGRA.
    static func convert(_ frame: VideoFrame, to format: VirtualCameraFormat, into output: inout [UInt8]) -> Bool {
        guard frame.pixelFormat == .bgra else { return false }
        let source = frame.width == format.size.width && frame.height == format.size.height
            ? frame : FrameScaler.scale(frame, to: format.size)
        if output.count != format.frameBytes { output = [UInt8](repeating: 0, count: format.frameBytes) }
        let width = Int32(format.size.width), height = Int32(format.size.height)
        let result: Int32 = source.data.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                switch format.pixelFormat {
                case .yuyv:
                    return ARGBToYUY2(input.baseAddress, Int32(source.bytesPerRow), out.baseAddress, width * 2, width, height)
                case .i420:
                    let y = out.baseAddress!
                    let u = y + format.size.width * format.size.height
                    let v = u + (format.size.width / 2) * (format.size.height / 2)
                    return ARGBToI420(input.baseAddress, Int32(source.bytesPerRow), y, width, u, width / 2, v, width / 2, width, height)
                }
            }
        }
        return result == 0
    }
}
