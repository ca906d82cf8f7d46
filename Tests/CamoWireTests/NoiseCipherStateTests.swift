import Crypto
import Testing

@testable import CamoWire

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Noise cipher state")
struct NoiseCipherStateTests {
    @Test func nonceLayouts() {
        let n: UInt64 = 0x0102_0304_0506_0708
        #expect(NoiseCipherState.nonceBytes(n, cipher: .aesGCM) == [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(NoiseCipherState.nonceBytes(n, cipher: .chaChaPoly) == [0, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1])
    }

    @Test(arguments: [NoiseCipher.aesGCM, .chaChaPoly])
    func nonceExhaustionThrows(_ cipher: NoiseCipher) throws {
        var sender = try NoiseCipherState(cipher: cipher, key: [UInt8](repeating: 3, count: 32))
        var receiver = sender
        sender.setNonce(UInt64.max - 1)
        receiver.setNonce(UInt64.max - 1)
        let last = try sender.encrypt(ad: [1], plaintext: [9, 9])
        #expect(try receiver.decrypt(ad: [1], ciphertext: last) == [9, 9])
        #expect(sender.nonce == UInt64.max)
        #expect(throws: NoiseError.nonceExhausted) { try sender.encrypt(ad: [], plaintext: [1]) }
        #expect(throws: NoiseError.nonceExhausted) { try receiver.decrypt(ad: [], ciphertext: last) }
    }

    @Test(arguments: [NoiseCipher.aesGCM, .chaChaPoly])
    func encryptAppendsAndFailuresKeepTheNonce(_ cipher: NoiseCipher) throws {
        var sender = try NoiseCipherState(cipher: cipher, key: [UInt8](repeating: 4, count: 32))
        var receiver = sender
        var out: [UInt8] = [0xAA]
        try sender.encrypt(ad: [], plaintext: [1, 2, 3][...], into: &out)
        #expect(out.count == 1 + 3 + 16 && out[0] == 0xAA)
        var tampered = Array(out.dropFirst())
        tampered[0] ^= 1
        #expect(throws: NoiseError.decryptionFailed) { try receiver.decrypt(ad: [], ciphertext: tampered) }
        #expect(throws: NoiseError.decryptionFailed) { try receiver.decrypt(ad: [], ciphertext: [1, 2]) }
        #expect(receiver.nonce == 0)
        #expect(try receiver.decrypt(ad: [], ciphertext: out.dropFirst()) == [1, 2, 3])
        #expect(receiver.nonce == 1)
        // A non-contiguous collection works too.
        let lazy = (1...5).lazy.map { UInt8($0) }
        let sealed = try sender.encrypt(ad: [], plaintext: lazy)
        #expect(try receiver.decrypt(ad: [], ciphertext: sealed) == [1, 2, 3, 4, 5])
    }

    /// The seal and open go through OpenSSL's libcrypto; swift-crypto (BoringSSL), a second implementation, must agree
    /// byte for byte, in both directions, for every length around the block and record sizes, with and without AD.
    @Test(arguments: [NoiseCipher.aesGCM, .chaChaPoly])
    func libcryptoAgreesWithSwiftCrypto(_ cipher: NoiseCipher) throws {
        var generator = SystemRandomNumberGenerator()
        let keyBytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let key = SymmetricKey(data: keyBytes)
        var sender = try NoiseCipherState(cipher: cipher, key: keyBytes)
        var receiver = sender
        for (index, length) in [0, 1, 15, 16, 17, 63, 64, 65, 1000, 65_517, 65_535].enumerated() {
            let plaintext = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let ad: [UInt8] = index % 2 == 0 ? [] : (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let nonce = NoiseCipherState.nonceBytes(UInt64(index), cipher: cipher)
            let reference: [UInt8]
            switch cipher {
            case .aesGCM:
                let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: ad)
                reference = Array(box.ciphertext) + Array(box.tag)
            case .chaChaPoly:
                let box = try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(data: nonce), authenticating: ad)
                reference = Array(box.ciphertext) + Array(box.tag)
            }
            let sealed = try sender.encrypt(ad: ad, plaintext: plaintext)
            #expect(sealed == reference, "length \(length)")
            #expect(try receiver.decrypt(ad: ad, ciphertext: reference) == plaintext, "length \(length)")
        }
    }

    /// A record's pieces (fragment header, message header, data) sealed without joining them equal the joined seal.
    @Test func threePiecesSealAsOne() throws {
        var joined = try NoiseCipherState(cipher: .aesGCM, key: [UInt8](repeating: 7, count: 32))
        var pieces = joined
        let a: [UInt8] = [1, 2], b: [UInt8] = Array(3...40), c: [UInt8] = Array(repeating: 9, count: 70_000)
        let expected = try joined.encrypt(ad: [5], plaintext: a + b + c)
        var out: [UInt8] = [0xEE]
        try [UInt8(5)].withUnsafeBytes { ad in
            try a.withUnsafeBytes { a in
                try b.withUnsafeBytes { b in
                    try c.withUnsafeBytes { c in try pieces.encrypt(ad: ad, a, b, c, appendingTo: &out) }
                }
            }
        }
        #expect(out.first == 0xEE && Array(out.dropFirst()) == expected)
        #expect(pieces.nonce == 1)
    }

    @Test func keysAreChecked() {
        #expect(throws: NoiseError.self) { try NoiseKeyPair(privateKey: [1, 2, 3]) }
        #expect(throws: NoiseError.self) { try NoiseCipherState(cipher: .aesGCM, key: [1]) }
        #expect(NoiseKeyPair.generate().publicKey.count == 32)
        #expect(NoiseProtocolName("Noise_XX_25519_AESGCM_SHA512") == nil)
        #expect(NoiseProtocolName("Noise_IK_25519_AESGCM_SHA256") == nil)
        #expect(NoiseProtocolName("Noise_XXpsk3_25519_ChaChaPoly_SHA256")?.pattern == .xxpsk3)
    }

    @Test func handshakeMisuseThrows() throws {
        var state = NoiseHandshakeState(
            protocol: NoiseProtocolName(pattern: .kk), initiator: true, prologue: [], localStatic: TestKeys.studio,
            remoteStatic: nil, psk: nil)
        #expect(throws: NoiseError.self) { try state.writeMessage(payload: []) }
        var xx = NoiseHandshakeState(
            protocol: NoiseProtocolName(pattern: .xx), initiator: false, prologue: [], localStatic: TestKeys.agent,
            remoteStatic: nil, psk: nil)
        #expect(throws: NoiseError.self) { try xx.writeMessage(payload: []) }  // not the responder's turn
        #expect(throws: NoiseError.self) { try xx.readMessage([1, 2, 3]) }  // too short
    }
}
