import Foundation
import Logging

/// Writes one captured frame exactly as the driver delivered it (planes back to back) and its layout as JSON,
/// so a test can compare it with what `v4l2-ctl` captures and with ffmpeg's conversion.
enum RawFrameDump {
    struct Layout: Codable {
        var fourcc: String
        var width: Int
        var height: Int
        var bytesPerLine: [Int]
        var planeBytes: [Int]
        var matrix: String
        var range: String
        var sequence: UInt32
    }

    static func write(planes: [UnsafeRawBufferPointer], layout: CaptureLayout, sequence: UInt32, to path: String, logger: Logger) {
        var bytes = Data()
        for plane in planes { bytes.append(contentsOf: plane) }
        let description = Layout(
            fourcc: layout.format.description, width: layout.width, height: layout.height,
            bytesPerLine: layout.planes.map(\.bytesPerLine), planeBytes: planes.map(\.count),
            matrix: "\(layout.colorimetry.matrix)", range: "\(layout.colorimetry.range)", sequence: sequence)
        do {
            try bytes.write(to: URL(fileURLWithPath: path), options: .atomic)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(description).write(to: URL(fileURLWithPath: path + ".json"), options: .atomic)
            logger.info("Wrote the first raw camera frame", metadata: ["path": "\(path)", "bytes": "\(bytes.count)"])
        } catch {
            logger.error("Cannot write the raw frame dump", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
