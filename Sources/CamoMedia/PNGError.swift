/// Why a PNG file could not be read.
public struct PNGError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sentence for people: what is wrong with the file.
    public var detail: String

    /// Creates an error.
    public init(_ detail: String) {
        self.detail = detail
    }

    /// The ``detail`` sentence.
    public var description: String { detail }
}
