import CLibCrypto
import CamoWire

/// OpenSSL's EVP AES-256-GCM called directly on the send path's bytes: the same 1080p frame in the same record payloads
/// (65517 bytes), each with its own nonce, sealed into a buffer made once. The cipher's work alone, in this process;
/// the one file of camo-bench that calls libcrypto.
enum EVPSealBench {
    /// The seconds `frames` frames took.
    static func seconds(_ pixels: [UInt8], frames: Int) -> Double {
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("libcrypto could not make a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        let key = [UInt8](repeating: 0x5A, count: 32)
        precondition(EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nil) == 1, "EVP_EncryptInit_ex failed")
        var output = [UInt8](repeating: 0, count: WireLimits.maxFragmentPayload + 16)
        var nonce = [UInt8](repeating: 0, count: 12)
        var counter: UInt64 = 0
        var tags = 0
        let start = camo_bench.seconds()
        pixels.withUnsafeBufferPointer { pixels in
            output.withUnsafeMutableBufferPointer { output in
                for _ in 0..<frames {
                    var offset = 0
                    while offset < pixels.count {
                        let count = min(WireLimits.maxFragmentPayload, pixels.count - offset)
                        withUnsafeBytes(of: counter.bigEndian) { nonce.replaceSubrange(4..<12, with: $0) }
                        counter += 1
                        var written: Int32 = 0
                        var final: Int32 = 0
                        guard EVP_EncryptInit_ex(context, nil, nil, nil, nonce) == 1,
                            EVP_EncryptUpdate(context, output.baseAddress, &written, pixels.baseAddress! + offset, Int32(count)) == 1,
                            EVP_EncryptFinal_ex(context, output.baseAddress! + Int(written), &final) == 1,
                            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, output.baseAddress! + count) == 1
                        else { fatalError("libcrypto failed to seal") }
                        tags &+= Int(output[count])
                        offset += count
                    }
                }
            }
        }
        let elapsed = camo_bench.seconds() - start
        precondition(tags >= 0)
        return elapsed
    }
}
