import CamoWire
import Glibc

// The QR pairing payload as scanned or pasted: any text, checked against the fixtures' clock (pairing-fixtures).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPairingPayload(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    _ = try? PairingPayload.parse(text, now: 1_795_000_000)
    return 0
}

// The program's main, should the link take this file's (SwiftPM names it the entry point) rather than libFuzzer's:
// it hands over to libFuzzer's driver all the same.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, { fuzzPairingPayload($0, $1) }))
