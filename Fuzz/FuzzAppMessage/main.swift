import CamoWire
import FuzzSupport

// Every message decoder, on a decrypted message's bytes (what a paired peer could send after the handshake).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppMessage(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    _ = try? AppMessage.decode(bytes)
    return 0
}

runFuzzDriver { fuzzAppMessage($0, $1) }
