import CQREncode
import CamoMedia

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a text could not become a QR code.
public struct QRCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    public enum Reason: String, Sendable, CaseIterable {
        /// The text does not fit in a QR code (version 40) at error correction level M.
        case tooLong
        /// The text is empty or contains a NUL character.
        case invalidText
        /// libqrencode could not allocate memory.
        case outOfMemory
        /// Any other libqrencode failure (the detail has its errno).
        case failed
    }

    /// The kind of failure.
    public var reason: Reason
    /// A sentence for people.
    public var detail: String

    /// Creates an error.
    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The ``detail`` sentence.
    public var description: String { detail }
}

/// A QR code (model 2, error correction level M, case-sensitive) rendered by libqrencode, as a matrix of
/// modules.
///
/// Drawing is deterministic: the same text gives the same matrix, PNG bytes and terminal text.
public struct QRCode: Sendable, Equatable {
    /// The text the code holds.
    public let text: String
    /// The number of modules on each side (21 for version 1, 177 for version 40), without the quiet zone.
    public let size: Int
    /// `size * size` entries, row by row, 1 for a dark module.
    private let modules: [UInt8]

    /// Encodes `text` (its UTF-8 bytes; digit runs may use the numeric mode, the rest is 8-bit).
    ///
    /// - Throws: ``QRCodeError`` when the text is empty, contains NUL, is too long for a QR code (about 2300
    ///   bytes at level M), or memory runs out.
    public init(_ text: String) throws(QRCodeError) {
        guard !text.isEmpty, !text.utf8.contains(0) else {
            throw QRCodeError(.invalidText, "A QR code needs a non-empty text without NUL characters.")
        }
        var failure: Int32 = 0
        let code = text.withCString { pointer -> UnsafeMutablePointer<QRcode>? in
            errno = 0
            let result = QRcode_encodeString(pointer, 0, QR_ECLEVEL_M, QR_MODE_8, 1)
            failure = errno
            return result
        }
        guard let code else {
            switch failure {
            case ERANGE:
                throw QRCodeError(
                    .tooLong,
                    "The text is \(text.utf8.count) bytes long, too long for a QR code at error correction level M "
                        + "(at most about 2300 bytes).")
            case ENOMEM:
                throw QRCodeError(.outOfMemory, "libqrencode ran out of memory drawing the QR code.")
            default:
                throw QRCodeError(.failed, "libqrencode could not draw the QR code (errno \(failure)).")
            }
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else {
            throw QRCodeError(.failed, "libqrencode returned an empty QR code.")
        }
        // libqrencode: one byte per module, bit 0 set for a dark module.
        self.modules = (0..<(width * width)).map { data[$0] & 1 }
        self.size = width
        self.text = text
    }

    /// True when the module at column `x`, row `y` is dark. Outside `0..<size` (the quiet zone) it is light.
    public func isDark(x: Int, y: Int) -> Bool {
        guard (0..<size).contains(x), (0..<size).contains(y) else { return false }
        return modules[y * size + x] != 0
    }

    /// The code as 8-bit gray pixels, dark modules 0 and light ones 255, with a light quiet zone.
    ///
    /// - Parameters:
    ///   - moduleSize: Pixels per module side, at least 1.
    ///   - quietZone: Light modules around the code, at least 0 (the standard asks for 4).
    /// - Returns: The side in pixels and `side * side` pixels, row by row.
    public func grayPixels(moduleSize: Int = 8, quietZone: Int = 4) -> (side: Int, pixels: [UInt8]) {
        precondition(moduleSize >= 1 && quietZone >= 0, "QRCode: moduleSize must be >= 1 and quietZone >= 0")
        let modulesPerSide = size + 2 * quietZone
        let side = modulesPerSide * moduleSize
        var pixels = [UInt8](repeating: 255, count: side * side)
        for moduleY in 0..<size {
            for moduleX in 0..<size where modules[moduleY * size + moduleX] != 0 {
                let left = (quietZone + moduleX) * moduleSize
                for row in 0..<moduleSize {
                    let start = ((quietZone + moduleY) * moduleSize + row) * side + left
                    for offset in 0..<moduleSize { pixels[start + offset] = 0 }
                }
            }
        }
        return (side, pixels)
    }

    /// The code as an 8-bit grayscale PNG file (black modules 0, white 255). The same code and arguments
    /// always give the same bytes.
    ///
    /// - Parameters:
    ///   - moduleSize: Pixels per module side, at least 1.
    ///   - quietZone: Light modules around the code, at least 0 (the standard asks for 4).
    public func pngData(moduleSize: Int = 8, quietZone: Int = 4) -> [UInt8] {
        let (side, pixels) = grayPixels(moduleSize: moduleSize, quietZone: quietZone)
        return PNGImage.encodeGray(width: side, height: side, pixels: pixels)
    }

    /// The code drawn with Unicode half blocks, two module rows per line, for a terminal with **light text on
    /// a dark background**: light modules (and the quiet zone) are drawn, dark modules are left blank, so the
    /// picture on the screen has the usual dark-on-light polarity.
    ///
    /// Each character stands for a column of two modules: `█` both light, `▀` only the upper one light, `▄`
    /// only the lower one light, a space both dark. When the number of rows is odd, the last line's lower
    /// half is blank. Lines are separated by `\n`; there is no newline at the end.
    ///
    /// - Parameter quietZone: Light modules around the code, at least 0.
    public func terminalText(quietZone: Int = 2) -> String {
        precondition(quietZone >= 0, "QRCode: quietZone must be >= 0")
        let side = size + 2 * quietZone
        func isLight(_ x: Int, _ y: Int) -> Bool {
            y < side && !isDark(x: x - quietZone, y: y - quietZone)
        }
        var lines: [String] = []
        lines.reserveCapacity((side + 1) / 2)
        for top in stride(from: 0, to: side, by: 2) {
            var line = ""
            line.reserveCapacity(side * 3)
            for x in 0..<side {
                switch (isLight(x, top), isLight(x, top + 1)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
