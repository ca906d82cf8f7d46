import Foundation

/// The contents of `audio.json`: every received audio packet's place in `audio.wav` and its timestamp, so the
/// capture time of any sample can be read back (`firstSampleTime + offset / 48000 s`).
public struct AudioIndex: Sendable, Equatable, Codable {
    /// One received packet.
    public struct Packet: Sendable, Equatable, Codable {
        /// The agent's packet counter.
        public var sequence: UInt32
        /// Sample frames in the packet.
        public var frames: Int
        /// Index in `audio.wav` of the packet's first sample frame.
        public var offset: Int
        /// Capture time of the first sample frame (agent monotonic ns).
        public var firstSampleTime: UInt64

        /// A packet record from its parts.
        public init(sequence: UInt32, frames: Int, offset: Int, firstSampleTime: UInt64) {
            self.sequence = sequence
            self.frames = frames
            self.offset = offset
            self.firstSampleTime = firstSampleTime
        }
    }

    /// Sample frames per second of `audio.wav` (48000).
    public var sampleRate: Int
    /// Every packet in arrival order.
    public var packets: [Packet]

    /// An index from its parts.
    public init(sampleRate: Int = 48_000, packets: [Packet]) {
        self.sampleRate = sampleRate
        self.packets = packets
    }

    /// The JSON written to `audio.json`.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    /// Reads `audio.json`.
    public static func decode(_ data: Data) throws -> AudioIndex {
        try JSONDecoder().decode(AudioIndex.self, from: data)
    }
}
