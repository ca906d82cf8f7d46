import CamoWire
import FuzzSupport

// The QR pairing payload as scanned or pasted: any text, checked against the fixtures' clock (pairing-fixtures).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPairingPayload(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    _ = try? PairingPayload.parse(text, now: 1_795_000_000)
    return 0
}

runFuzzDriver { fuzzPairingPayload($0, $1) }
