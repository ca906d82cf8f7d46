/// Why a JPEG could not be made or read.
public enum JPEGError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libturbojpeg could not create a compressor or decompressor.
    case initializationFailed
    /// The quality is outside `1...100`.
    case qualityOutOfRange(Int)
    /// The input was empty.
    case emptyInput
    /// The JPEG header could not be read (not a JPEG, or corrupt); carries libturbojpeg's message.
    case invalidHeader(String)
    /// The JPEG is larger than 4096 pixels in width or height, or has no pixels.
    case unsupportedSize(width: Int, height: Int)
    /// Compression failed; carries libturbojpeg's message.
    case compressionFailed(String)
    /// Decompression failed (corrupt or truncated data); carries libturbojpeg's message.
    case decompressionFailed(String)

    /// What went wrong.
    public var description: String {
        switch self {
        case .initializationFailed: return "libturbojpeg could not create a codec instance (out of memory?)."
        case .qualityOutOfRange(let quality): return "JPEG quality \(quality) is outside 1...100."
        case .emptyInput: return "The JPEG data is empty."
        case .invalidHeader(let message): return "The data is not a readable JPEG: \(message)."
        case .unsupportedSize(let width, let height):
            return "JPEG size \(width)x\(height) is not supported (each side must be 1...\(MediaContract.maxDimension))."
        case .compressionFailed(let message): return "JPEG compression failed: \(message)."
        case .decompressionFailed(let message): return "The JPEG is corrupt or truncated: \(message)."
        }
    }
}
