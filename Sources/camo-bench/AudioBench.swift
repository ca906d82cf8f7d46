import CamoCapture
import CamoMedia
import CamoWire
import Foundation

/// The agent's per-packet audio cost: microphone bytes → float32 stereo → ``AudioPacketizer`` → audio message
/// bytes (everything before encryption), and the sample conversion alone, beside a memcpy of one packet's
/// float32 stereo bytes in the same process. Input arrives as the microphone source reads it: 10 ms periods of
/// 480 frames, each converted into a fresh `[Float]`.
enum AudioBench {
    /// One input layout's figures, in nanoseconds per packet of `samplesPerPacket` sample frames.
    struct Row {
        /// The device's sample format.
        var format: MicrophoneSampleFormat
        /// The device's channel count.
        var channels: Int
        /// Convert + chunk + packetize + message bytes.
        var pathNs: Double
        /// The converter alone, into a reused buffer.
        var conversionNs: Double
        /// memcpy of one packet's float32 stereo bytes (the same figure on every row).
        var memcpyNs: Double
        /// Sample frames per packet.
        var samplesPerPacket: Int

        var input: String { "\(format.rawValue) \(channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels)ch")" }
        var pathOverMemcpy: Double { pathNs / memcpyNs }
        var conversionOverMemcpy: Double { conversionNs / memcpyNs }
        /// The share of one core that 48 kHz of this input costs on the whole path.
        var pathCoreShare: Double { AudioBench.coreShare(nsPerPacket: pathNs, samplesPerPacket: samplesPerPacket) }
        /// The share of one core that 48 kHz of this input costs in conversion alone.
        var conversionCoreShare: Double { AudioBench.coreShare(nsPerPacket: conversionNs, samplesPerPacket: samplesPerPacket) }

        var json: [String: Any] {
            [
                "input": input, "format": format.rawValue, "channels": channels,
                "pathNsPerPacket": pathNs, "conversionNsPerPacket": conversionNs,
                "pathOverMemcpy": pathOverMemcpy, "conversionOverMemcpy": conversionOverMemcpy,
                "pathCoreShareAt48k": pathCoreShare, "conversionCoreShareAt48k": conversionCoreShare,
            ]
        }
    }

    /// The whole run: one row per input layout and the shared memcpy reference.
    struct Result {
        var samplesPerPacket: Int
        var packets: Int
        var repeats: Int
        var memcpyNs: Double
        var rows: [Row]

        var json: [String: Any] {
            [
                "samplesPerPacket": samplesPerPacket, "periodFrames": AudioBench.periodFrames,
                "packetsPerRepeat": packets, "repeats": repeats, "packetBytes": samplesPerPacket * 8,
                "packetsPerSecond": Double(MediaContract.sampleRate) / Double(samplesPerPacket),
                "memcpyNsPerPacket": memcpyNs, "inputs": rows.map(\.json),
            ]
        }
    }

    /// Frames per microphone read: one 10 ms period at 48 kHz.
    static let periodFrames = 480
    /// Timed runs per figure; the best one counts.
    static let repeats = 5
    /// The input layouts measured.
    static let inputs: [(MicrophoneSampleFormat, Int)] = [(.s32, 2), (.s16, 2), (.s16, 1)]

    /// CPU share of one core for 48 kHz at `nsPerPacket` (packets per second = 48000 / N).
    static func coreShare(nsPerPacket: Double, samplesPerPacket: Int) -> Double {
        nsPerPacket * (Double(MediaContract.sampleRate) / Double(samplesPerPacket)) / 1e9
    }

    /// Measures every input layout over about `packets` packets of `samplesPerPacket` frames per timed run.
    static func run(samplesPerPacket: Int, packets: Int) throws -> Result {
        guard packets > 0 else { throw ConversionBench.Failure(description: "--audio-packets must be positive") }
        // Whole periods covering `packets` packets.
        let periods = (packets * samplesPerPacket + periodFrames - 1) / periodFrames
        var rows: [Row] = []
        for (format, channels) in inputs {
            let device = deviceBytes(format: format, channels: channels, frames: periodFrames)
            let path = try pathNs(
                format: format, channels: channels, device: device, periods: periods, samplesPerPacket: samplesPerPacket)
            let conversion = conversionNs(
                format: format, channels: channels, device: device, periods: periods, samplesPerPacket: samplesPerPacket)
            rows.append(Row(
                format: format, channels: channels, pathNs: path, conversionNs: conversion, memcpyNs: .nan,
                samplesPerPacket: samplesPerPacket))
        }
        // The reference last, with the core already busy (no ramp-up), and ten times the packets: it is short.
        let memcpy = memcpyNs(samplesPerPacket: samplesPerPacket, packets: packets * 10)
        for i in rows.indices { rows[i].memcpyNs = memcpy }
        return Result(samplesPerPacket: samplesPerPacket, packets: packets, repeats: repeats, memcpyNs: memcpy, rows: rows)
    }

    /// Prints the table.
    static func print(_ result: Result) {
        let n = result.samplesPerPacket
        let perSecond = Double(MediaContract.sampleRate) / Double(n)
        Swift.print(String(
            format: "audio, ns per packet of %d frames (%d periods of %d frames in; best of %d runs of ~%d packets; 48 kHz = %.3f packets/s):",
            n, (result.packets * n + periodFrames - 1) / periodFrames, periodFrames, result.repeats, result.packets, perSecond))
        Swift.print("  input              path  convert  path/memcpy  convert/memcpy  path core%  convert core%")
        for row in result.rows {
            let name = row.input + String(repeating: " ", count: max(0, 14 - row.input.count))
            Swift.print(
                "  " + name
                    + String(
                        format: " %8.0f %8.0f  %10.2fx  %13.2fx  %9.4f%%  %11.4f%%", row.pathNs, row.conversionNs,
                        row.pathOverMemcpy, row.conversionOverMemcpy, row.pathCoreShare * 100, row.conversionCoreShare * 100))
        }
        let memcpyName = "memcpy \(n * 8) B"
        Swift.print(
            "  " + memcpyName + String(repeating: " ", count: max(0, 14 - memcpyName.count))
                + String(format: " %8.0f", result.memcpyNs) + String(repeating: " ", count: 8) + "-"
                + String(format: "  %10.2fx", 1.0) + String(repeating: " ", count: 14) + "-"
                + String(format: "  %9.4f%%", coreShare(nsPerPacket: result.memcpyNs, samplesPerPacket: n) * 100))
        Swift.print("  path: MicrophoneSampleConverter into a fresh [Float] per period, AudioChunk, AudioPacketizer.append/nextPacket,")
        Swift.print("        AppMessage.audio(AudioMessage(samples:)).encoded() (everything before encryption);")
        Swift.print("  convert: the converter alone into a reused buffer; memcpy: one packet's float32 stereo bytes.")
    }

    // MARK: Input

    /// One period as the device delivers it: a 440 Hz tone with some noise, little-endian, interleaved.
    static func deviceBytes(format: MicrophoneSampleFormat, channels: Int, frames: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frames * channels * format.bytesPerSample)
        var state: UInt32 = 12345
        for frame in 0..<frames {
            for channel in 0..<channels {
                state = state &* 1_664_525 &+ 1_013_904_223
                let noise = Double(Int32(bitPattern: state)) / 2_147_483_648.0 * 0.01
                let value = 0.5 * sin(2 * Double.pi * 440 * Double(frame) / 48_000 + Double(channel)) + noise
                switch format {
                case .s16:
                    withUnsafeBytes(of: Int16(value * 32_767).littleEndian) { bytes.append(contentsOf: $0) }
                case .s32:
                    withUnsafeBytes(of: Int32(value * 2_147_483_647).littleEndian) { bytes.append(contentsOf: $0) }
                case .s24Packed:
                    withUnsafeBytes(of: Int32(value * 8_388_607).littleEndian) { bytes.append(contentsOf: $0[0..<3]) }
                case .float32:
                    withUnsafeBytes(of: Float(value).bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
                }
            }
        }
        return bytes
    }

    // MARK: Methods

    /// The agent's path: per period, convert into a fresh array (as `MicrophoneSource` does), wrap it in an
    /// ``AudioChunk``, append it to the session's packetizer, and turn every packet out into message bytes
    /// (as `SessionHandler.deliverAudio` does). Nanoseconds per packet: the run's time over the frames in / N.
    static func pathNs(
        format: MicrophoneSampleFormat, channels: Int, device: [UInt8], periods: Int, samplesPerPacket: Int
    ) throws -> Double {
        let converter = MicrophoneSampleConverter(format: format, channels: channels)
        var packetizer = try AudioPacketizer(samplesPerPacket: samplesPerPacket)
        var time: UInt64 = 1_000_000_000
        var sequence: UInt32 = 0
        var checksum = 0
        var packetsOut = 0
        let ns = device.withUnsafeBytes { raw in
            best(periods: periods, samplesPerPacket: samplesPerPacket) { count in
                for _ in 0..<count {
                    var samples: [Float] = []
                    samples.reserveCapacity(periodFrames * 2)
                    converter.convert(raw, frames: periodFrames, appendingTo: &samples)
                    packetizer.append(AudioChunk(samples: samples, firstSampleTime: time))
                    time &+= 10_000_000
                    while let packet = packetizer.nextPacket() {
                        let bytes = AppMessage.audio(AudioMessage(
                            sequence: sequence, firstSampleTime: packet.firstSampleTime, samples: packet.samples)).encoded()
                        sequence &+= 1
                        packetsOut += 1
                        checksum &+= bytes.count &+ Int(bytes[bytes.count - 1 - Int(sequence & 0xff)])
                    }
                }
            }
        }
        // Every frame in came out in whole packets but the remainder, and the result was used.
        precondition(packetsOut > 0 && checksum != 0 && packetizer.bufferedSampleFrames < samplesPerPacket)
        return ns
    }

    /// The converter alone: each period converted into the same preallocated buffer.
    static func conversionNs(
        format: MicrophoneSampleFormat, channels: Int, device: [UInt8], periods: Int, samplesPerPacket: Int
    ) -> Double {
        let converter = MicrophoneSampleConverter(format: format, channels: channels)
        var output = [Float](repeating: 0, count: periodFrames * 2)
        var checksum: UInt32 = 0
        var round = 0
        let ns = device.withUnsafeBytes { raw in
            output.withUnsafeMutableBufferPointer { out in
                best(periods: periods, samplesPerPacket: samplesPerPacket) { count in
                    for _ in 0..<count {
                        converter.convert(raw, frames: periodFrames, into: out)
                        round = (round &+ 7) % out.count
                        checksum &+= out[round].bitPattern  // keep the conversion observable
                    }
                }
            }
        }
        precondition(checksum != 1)
        return ns
    }

    /// memcpy of one packet's float32 stereo bytes (N × 8) per packet.
    static func memcpyNs(samplesPerPacket: Int, packets: Int) -> Double {
        var source = [Float](repeating: 0.25, count: samplesPerPacket * 2)
        var destination = [Float](repeating: 0, count: source.count)
        var checksum: UInt32 = 0
        var bestNs = Double.infinity
        for pass in 0..<(repeats + 1) {
            let count = pass == 0 ? max(1, packets / 10) : packets
            let start = seconds()
            for i in 0..<count {
                source[i % source.count] = Float(i & 0xff)  // a changed source each time: the copy cannot be hoisted
                destination.withUnsafeMutableBytes { d in source.withUnsafeBytes { s in d.copyMemory(from: s) } }
                checksum &+= destination[(i &* 7) % destination.count].bitPattern
            }
            let elapsed = seconds() - start
            if pass > 0 { bestNs = min(bestNs, elapsed / Double(count) * 1e9) }
        }
        precondition(checksum != 1)
        return bestNs
    }

    /// Nanoseconds per packet: `body(count)` processes `count` periods; one warm-up run of a tenth of `periods`,
    /// then the best of ``repeats`` timed runs of `periods`, each divided by the packets its frames make.
    static func best(periods: Int, samplesPerPacket: Int, _ body: (Int) -> Void) -> Double {
        body(max(1, periods / 10))
        let packets = Double(periods * periodFrames) / Double(samplesPerPacket)
        var bestNs = Double.infinity
        for _ in 0..<repeats {
            let start = seconds()
            body(periods)
            bestNs = min(bestNs, (seconds() - start) / packets * 1e9)
        }
        return bestNs
    }
}
