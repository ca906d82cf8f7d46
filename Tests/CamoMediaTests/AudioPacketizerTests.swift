import CamoMedia
import CamoTestSupport
import Testing

@Suite("AudioPacketizer: exact packets, no sample lost or doubled")
struct AudioPacketizerTests {
    static let start: UInt64 = 1_000_000_000

    /// A stream of distinct sample values cut into chunks of the given sizes; chunk times follow the
    /// stream (sample s at start + s * 1e9 / 48000).
    static func chunks(sizes: [Int]) -> (chunks: [AudioChunk], samples: [Float]) {
        var chunks: [AudioChunk] = []
        var all: [Float] = []
        var frame = 0
        for size in sizes {
            let samples = (0..<(size * 2)).map { Float(frame * 2 + $0) }
            let time = start + UInt64(frame) * 1_000_000_000 / 48_000
            chunks.append(AudioChunk(samples: samples, firstSampleTime: time))
            all.append(contentsOf: samples)
            frame += size
        }
        return (chunks, all)
    }

    /// The documented time of sample frame `s`: its chunk's time plus its offset in the chunk.
    static func expectedTime(ofFrame s: Int, chunkSizes: [Int]) -> UInt64 {
        var first = 0
        for size in chunkSizes {
            if s < first + size {
                let chunkTime = start + UInt64(first) * 1_000_000_000 / 48_000
                return chunkTime + UInt64(s - first) * 1_000_000_000 / 48_000
            }
            first += size
        }
        Issue.record("sample \(s) beyond the stream")
        return 0
    }

    static func randomSizes(count: Int, seed: UInt64) -> [Int] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in Int.random(in: 1...3000, using: &generator) }
    }

    @Test(arguments: [128, 441, 480, 512, 1024, 2048, 4800])
    func packetsAreExactlyNFramesAndLoseNothing(n: Int) throws {
        let sizes = Self.randomSizes(count: 200, seed: UInt64(n))
        let (chunks, input) = Self.chunks(sizes: sizes)
        var packetizer = try AudioPacketizer(samplesPerPacket: n)
        var output: [Float] = []
        var sequence: UInt64 = 0
        for chunk in chunks {
            packetizer.append(chunk)
            while let packet = packetizer.nextPacket() {
                #expect(packet.sampleFrames == n)
                #expect(packet.samples.count == n * 2)
                #expect(packet.sequence == sequence)
                let firstFrame = output.count / 2
                #expect(packet.firstSampleTime == Self.expectedTime(ofFrame: firstFrame, chunkSizes: sizes))
                let ideal = Self.start + UInt64(firstFrame) * 1_000_000_000 / 48_000
                #expect(packet.firstSampleTime <= ideal && ideal - packet.firstSampleTime <= 1)
                output.append(contentsOf: packet.samples)
                sequence += 1
            }
        }
        let total = sizes.reduce(0, +)
        #expect(packetizer.bufferedSampleFrames == total % n)
        #expect(output.count == (total / n) * n * 2)
        #expect(output == Array(input.prefix(output.count)))
    }

    @Test(arguments: [UInt64(7), 99, 1234])
    func changingNMidStreamTakesEffectAtTheNextPacket(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let sizes = Self.randomSizes(count: 300, seed: seed)
        let (chunks, input) = Self.chunks(sizes: sizes)
        var packetizer = try AudioPacketizer(samplesPerPacket: 480)
        var requested = 480
        var output: [Float] = []
        var packets = 0
        for (index, chunk) in chunks.enumerated() {
            packetizer.append(chunk)
            // Change the size at odd points: sometimes between chunks, sometimes between packets.
            if index % 7 == 3 {
                requested = Int.random(in: 64...4800, using: &generator)
                try packetizer.setSamplesPerPacket(requested)
            }
            while let packet = packetizer.nextPacket() {
                #expect(packet.sampleFrames == requested)
                #expect(packet.samples.count == requested * 2)
                #expect(packet.sequence == UInt64(packets))
                #expect(packet.firstSampleTime == Self.expectedTime(ofFrame: output.count / 2, chunkSizes: sizes))
                output.append(contentsOf: packet.samples)
                packets += 1
                if packets % 5 == 2 {
                    requested = [64, 333, 1001, 48_000, 441][(packets / 5) % 5]
                    try packetizer.setSamplesPerPacket(requested)
                }
            }
        }
        #expect(packets > 50)
        #expect(output.count / 2 + packetizer.bufferedSampleFrames == sizes.reduce(0, +))
        #expect(output == Array(input.prefix(output.count)))
    }

    @Test func outOfRangeSizesAreRefused() throws {
        for n in [0, 1, 63, 48_001, -5, Int.max] {
            #expect(throws: ContractError.samplesRequiredOutOfRange(n)) { try AudioPacketizer(samplesPerPacket: n) }
        }
        var packetizer = try AudioPacketizer(samplesPerPacket: 64)
        #expect(throws: ContractError.samplesRequiredOutOfRange(48_001)) { try packetizer.setSamplesPerPacket(48_001) }
        #expect(packetizer.samplesPerPacket == 64)
        _ = try AudioPacketizer(samplesPerPacket: 48_000)
    }

    @Test func nothingComesOutUntilAWholePacketIsBuffered() throws {
        var packetizer = try AudioPacketizer(samplesPerPacket: 100)
        packetizer.append(AudioChunk(samples: [Float](repeating: 1, count: 198), firstSampleTime: 0))
        #expect(packetizer.nextPacket() == nil)
        #expect(packetizer.bufferedSampleFrames == 99)
        packetizer.append(AudioChunk(samples: [2, 2], firstSampleTime: 99 * 1_000_000_000 / 48_000))
        let next = packetizer.nextPacket()
        let packet = try #require(next)
        #expect(packet.sampleFrames == 100)
        #expect(packet.firstSampleTime == 0)
        #expect(packetizer.bufferedSampleFrames == 0)
    }
}
