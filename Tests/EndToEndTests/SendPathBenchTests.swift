import Testing

import Foundation

/// The cost of one frame on the send path (issue #14), from the release camo-bench: a 1080p BGRA frame fragmented,
/// sealed and framed allocates nothing on the heap in steady state (its malloc counter). The speed ratios are printed
/// beside the bare seals of the same run, never judged here (a shared machine's figures move).
@Suite("camo-bench: the send path allocates nothing per frame", .timeLimit(.minutes(2)))
struct SendPathBenchTests {
    @Test("--send-only: 0 heap allocations per 1080p frame; the send path beside AES.GCM.seal, EVP and openssl speed (printed)")
    func noAllocationsPerFrame() throws {
        let bench = try Binaries.path("camo-bench")
        guard bench.contains("/release/") else {
            print("send path: skipped; camo-bench's counts are taken on the release build only (scripts/test runs it with CAMO_BIN_DIR=.build-release/release)")
            return
        }
        let result = try run(bench, ["--send-only", "--send-frames", "40", "--json"])
        #expect(result.status == 0, "\(result)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let send = try #require(object?["send"] as? [String: Any], "\(result)")
        print("send path: \(send)")
        let allocations = try #require(send["allocationsPerFrame"] as? Double, "\(send)")
        #expect(allocations == 0, "the send path allocated \(allocations) times per frame in steady state")
        let ratio = try #require(send["sendOverFastestSeal"] as? Double, "\(send)")
        #expect(ratio > 0, "\(send)")
    }
}
