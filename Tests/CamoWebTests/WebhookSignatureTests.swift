import Testing

@testable import CamoWeb

/// The signature against vectors made with Python's own hmac module (not our code), and the receiver's check.
@Suite("Webhook signature")
struct WebhookSignatureTests {
    static let secret = "whsec_camo_test_secret"
    static let body = Array(#"{"event":"motion","zone":"door"}"#.utf8)
    static let timestamp: Int64 = 1_700_000_000
    /// python3 -c 'import hmac,hashlib;print(hmac.new(b"whsec_camo_test_secret",
    ///     b"1700000000."+b"{\"event\":\"motion\",\"zone\":\"door\"}",hashlib.sha256).hexdigest())'
    static let pythonMAC = "d97f3dcf02e7bb52c5b08dd4174d0ed831e63e18288dfd6fa0e9700a840b060d"

    @Test func matchesPythonsHMAC() throws {
        let signer = try WebhookSignature(secret: Self.secret)
        #expect(signer.mac(body: Self.body, timestamp: Self.timestamp) == Self.pythonMAC)
        #expect(signer.header(body: Self.body, timestamp: Self.timestamp) == "t=1700000000,v1=\(Self.pythonMAC)")
    }

    @Test func matchesPythonForBinaryBodiesAndNonASCIISecrets() throws {
        // python3 -c 'import hmac,hashlib;print(hmac.new("clé".encode(),b"1700000123."+bytes([0,255,10]),
        //     hashlib.sha256).hexdigest())'
        let signer = try WebhookSignature(secret: "clé")
        #expect(
            signer.mac(body: [0, 255, 10], timestamp: 1_700_000_123)
                == "1cfed0300d18eb80e5408a16e56d684472d2132ae6e121f180eb00bcb968d080")
    }

    @Test func headersCarryTheEventIDAndSignature() throws {
        let signer = try WebhookSignature(secret: Self.secret)
        let headers = signer.headers(body: Self.body, id: "evt-42", timestamp: Self.timestamp)
        #expect(headers.map(\.name) == ["X-Camo-Event-Id", "X-Camo-Signature"])
        #expect(headers.map(\.value) == ["evt-42", "t=1700000000,v1=\(Self.pythonMAC)"])
    }

    @Test func anEmptySecretIsRefusedWithASentence() {
        #expect {
            _ = try WebhookSignature(secret: "")
        } throws: { error in
            guard case WebhookError.invalidSecret(let text) = error else { return false }
            return text.contains("webhook secret is empty") && text.contains("openssl rand -hex 32")
        }
    }

    @Test func verifyAcceptsPythonsSignatureWithinTheTolerance() throws {
        let header = "t=1700000000,v1=\(Self.pythonMAC)"
        for now in [Self.timestamp, Self.timestamp + 300, Self.timestamp - 300] {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: now)
        }
        try WebhookSignature.verify(
            header: header, body: Self.body, secret: Self.secret, now: Self.timestamp + 10, tolerance: 10)
        // Spaces after commas, upper-case hex, and fields a later version adds are accepted.
        try WebhookSignature.verify(
            header: "t=1700000000, v2=abc, v1=\(Self.pythonMAC.uppercased())", body: Self.body, secret: Self.secret,
            now: Self.timestamp)
    }

    @Test func verifyRefusesAnOldOrFutureTimestamp() {
        let header = "t=1700000000,v1=\(Self.pythonMAC)"
        #expect(throws: WebhookSignature.Failure.outsideTolerance(age: 301)) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.timestamp + 301)
        }
        #expect(throws: WebhookSignature.Failure.outsideTolerance(age: -11)) {
            try WebhookSignature.verify(
                header: header, body: Self.body, secret: Self.secret, now: Self.timestamp - 11, tolerance: 10)
        }
    }

    @Test func verifyRefusesAnotherSecretAChangedBodyOrAnotherTime() {
        let header = "t=1700000000,v1=\(Self.pythonMAC)"
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: "other", now: Self.timestamp)
        }
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(header: header, body: Self.body + [0x20], secret: Self.secret, now: Self.timestamp)
        }
        #expect(throws: WebhookSignature.Failure.mismatch) {
            try WebhookSignature.verify(
                header: "t=1700000001,v1=\(Self.pythonMAC)", body: Self.body, secret: Self.secret, now: Self.timestamp)
        }
    }

    @Test func oneMatchingSignatureOfSeveralIsEnough() throws {
        // python3 -c 'import hmac,hashlib;print(hmac.new(b"second-secret",
        //     b"1700000000."+b"{\"event\":\"motion\",\"zone\":\"door\"}",hashlib.sha256).hexdigest())'
        let other = "ea00901386255f16744a2296b40072281cbf30c3c932d0ae66b620b8252dfe8e"
        let header = "t=1700000000,v1=\(other),v1=\(Self.pythonMAC)"
        try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.timestamp)
        try WebhookSignature.verify(header: header, body: Self.body, secret: "second-secret", now: Self.timestamp)
    }

    @Test(arguments: [
        "", "t=1700000000", "v1=d97f", "t=abc,v1=d97f3dcf02e7bb52c5b08dd4174d0ed831e63e18288dfd6fa0e9700a840b060d",
        "t=1700000000,v1=zz", "t=1700000000,v1=d97f3dcf",
        "t=1,t=2,v1=d97f3dcf02e7bb52c5b08dd4174d0ed831e63e18288dfd6fa0e9700a840b060d",
        "t=1700000000;v1=d97f3dcf02e7bb52c5b08dd4174d0ed831e63e18288dfd6fa0e9700a840b060d",
    ])
    func malformedHeadersAreRefused(header: String) {
        #expect(throws: WebhookSignature.Failure.malformedHeader) {
            try WebhookSignature.verify(header: header, body: Self.body, secret: Self.secret, now: Self.timestamp)
        }
    }

    @Test func failuresAreSentences() {
        #expect(WebhookSignature.Failure.malformedHeader.description.contains("X-Camo-Signature"))
        #expect(WebhookSignature.Failure.outsideTolerance(age: 400).description.contains("400 s"))
        #expect(WebhookSignature.Failure.mismatch.description.contains("same secret"))
    }
}
