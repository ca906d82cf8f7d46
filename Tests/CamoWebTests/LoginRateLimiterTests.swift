import CamoTestSupport
import Testing

@testable import CamoWeb

@Suite("Login rate limiter")
struct LoginRateLimiterTests {
    private let second: UInt64 = 1_000_000_000

    @Test func sixthAttemptWithinAMinuteIsRefusedUntilTheWindowPasses() {
        let clock = ManualClock(now: 50 * second)
        var limiter = LoginRateLimiter(limit: 5, window: .seconds(60))
        for _ in 0..<5 {
            #expect(limiter.retryAfter(address: "10.0.0.2", now: clock.now.nanoseconds) == nil)
            limiter.recordFailure(address: "10.0.0.2", now: clock.now.nanoseconds)
            clock.advance(by: second)
        }
        // First failure at 50 s: refused until 110 s.
        #expect(limiter.retryAfterSeconds(address: "10.0.0.2", now: clock.now.nanoseconds) == 55)
        #expect(limiter.retryAfter(address: "10.0.0.3", now: clock.now.nanoseconds) == nil)
        clock.advance(to: 110 * second - 1)
        #expect(limiter.retryAfterSeconds(address: "10.0.0.2", now: clock.now.nanoseconds) == 1)
        clock.advance(to: 110 * second)
        #expect(limiter.retryAfter(address: "10.0.0.2", now: clock.now.nanoseconds) == nil)
    }

    @Test func successForgetsFailures() {
        var limiter = LoginRateLimiter(limit: 2, window: .seconds(60))
        limiter.recordFailure(address: "a", now: 0)
        limiter.recordFailure(address: "a", now: 0)
        #expect(limiter.retryAfter(address: "a", now: 0) != nil)
        limiter.recordSuccess(address: "a")
        #expect(limiter.retryAfter(address: "a", now: 0) == nil)
    }

    @Test func addressesAreBounded() {
        var limiter = LoginRateLimiter(limit: 5, window: .seconds(60), maxAddresses: 100)
        for index in 0..<1_000 { limiter.recordFailure(address: "10.0.\(index / 256).\(index % 256)", now: UInt64(index)) }
        #expect(limiter.addressCount <= 100)
    }
}
