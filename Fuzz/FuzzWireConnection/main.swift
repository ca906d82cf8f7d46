import CamoWire
import FuzzSupport

// The agent's side of a connection fed whatever a stranger sends first: the preamble, the records and the Noise
// handshake's first message (XX, KK or XXpsk3), then more records. Nothing may crash; any error is a refusal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireConnection(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    var connection = WireConnection.responder()
    // In two pieces, as TCP may deliver it, so the reassembly of a record split anywhere is reached too.
    let cut = count > 0 ? Int(bytes[0]) % (count + 1) : 0
    _ = try? connection.receive(bytes[..<cut])
    _ = try? connection.receive(bytes[cut...])
    return 0
}

runFuzzDriver { fuzzWireConnection($0, $1) }
