import Foundation

/// Errors writing or reading a WAV file.
public enum WAVError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be created or opened.
    case cannotOpen(path: String)
    /// Appended bytes are not a whole number of sample frames.
    case partialSampleFrame(byteCount: Int, blockAlign: Int)
    /// The data would exceed the 4 GiB limit of RIFF sizes.
    case tooLarge
    /// The writer was already finished.
    case finished
    /// The bytes are not a float32 WAVE file this module understands.
    case malformed(String)

    /// A human sentence.
    public var description: String {
        switch self {
        case .cannotOpen(let path): "cannot open \(path) for writing"
        case .partialSampleFrame(let count, let align): "\(count) bytes is not a whole number of \(align)-byte sample frames"
        case .tooLarge: "WAV data would exceed the 4 GiB RIFF limit"
        case .finished: "the WAV writer is already finished"
        case .malformed(let why): "malformed WAV: \(why)"
        }
    }
}

/// Streams interleaved float32 samples into a WAV file (`WAVE_FORMAT_IEEE_FLOAT`, with a `fact` chunk).
///
/// The header is written first with zero sizes and patched by ``finish()``, so an interrupted
/// recording leaves a file whose sizes say "empty" rather than lie. Not thread-safe: one owner.
public final class WAVWriter {
    /// Where the file is.
    public let path: String
    /// The header as it will be patched at the end (sampleFrames grows with each append).
    public private(set) var header: WAVHeader
    private var handle: FileHandle?

    /// Creates (or truncates) the file at `path` and writes a provisional header.
    public init(path: String, channels: Int = 2, sampleRate: Int = 48_000) throws {
        self.path = path
        self.header = WAVHeader(channels: channels, sampleRate: sampleRate)
        guard FileManager.default.createFile(atPath: path, contents: Data(header.encoded())),
              let handle = FileHandle(forWritingAtPath: path)
        else { throw WAVError.cannotOpen(path: path) }
        try handle.seekToEnd()
        self.handle = handle
    }

    deinit {
        try? handle?.close()
    }

    /// Sample frames written so far.
    public var sampleFrames: Int { header.sampleFrames }

    /// Appends raw little-endian float32 interleaved samples (the wire's audio payload as is).
    public func append(float32LittleEndian bytes: [UInt8]) throws {
        guard let handle else { throw WAVError.finished }
        guard bytes.count % header.blockAlign == 0 else {
            throw WAVError.partialSampleFrame(byteCount: bytes.count, blockAlign: header.blockAlign)
        }
        guard header.dataBytes + bytes.count <= WAVHeader.maxDataBytes else { throw WAVError.tooLarge }
        try handle.write(contentsOf: bytes)
        header.sampleFrames += bytes.count / header.blockAlign
    }

    /// Appends interleaved samples.
    public func append(samples: [Float]) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(samples.count * 4)
        for sample in samples { bytes.appendLE(sample.bitPattern) }
        try append(float32LittleEndian: bytes)
    }

    /// Patches the header sizes and closes the file. Further appends throw ``WAVError/finished``.
    public func finish() throws {
        guard let handle else { return }
        self.handle = nil
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: header.encoded())
        try handle.synchronize()
        try handle.close()
    }
}
