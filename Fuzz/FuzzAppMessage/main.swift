import CamoWire
import Glibc

// Every message decoder, on a decrypted message's bytes (what a paired peer could send after the handshake).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppMessage(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let bytes = [UInt8](UnsafeRawBufferPointer(start: start, count: count))
    _ = try? AppMessage.decode(bytes)
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
exit(LLVMFuzzerRunDriver(&argc, &argv, { fuzzAppMessage($0, $1) }))
