import CamoTestSupport
import Testing

@testable import CamoWeb

@Suite("Live view leases")
struct LiveLeaseBookTests {
    private let second: UInt64 = 1_000_000_000
    private let sweepStep: UInt64 = 250_000_000

    /// Sweeps every 250 ms on the manual clock from now to `end`; returns when `id` was reported expired.
    private func sweep(_ book: inout LiveLeaseBook, clock: ManualClock, until end: UInt64, id: String) -> UInt64? {
        while clock.now.nanoseconds < end {
            clock.advance(by: sweepStep)
            if book.expire(now: clock.now.nanoseconds).contains(id) { return clock.now.nanoseconds }
        }
        return nil
    }

    @Test func leaseNotExtendedEndsAtItsDuration() throws {
        let clock = ManualClock(now: 1_000 * second)
        let start = clock.now.nanoseconds
        var book = LiveLeaseBook(durationSeconds: 10)
        _ = try book.start(id: "a", now: start)
        let ended = try #require(sweep(&book, clock: clock, until: start + 20 * second, id: "a"))
        #expect(ended >= start + 10 * second)
        #expect(ended <= start + 11 * second)
        #expect(book.count == 0)
        #expect(book.lease("a") == nil)
    }

    @Test func leaseExtendedEveryFiveSecondsLives() throws {
        let clock = ManualClock(now: 5 * second)
        let start = clock.now.nanoseconds
        var book = LiveLeaseBook(durationSeconds: 10)
        _ = try book.start(id: "a", now: start)
        var nextExtension = start + 5 * second
        while clock.now.nanoseconds < start + 35 * second {
            clock.advance(by: sweepStep)
            #expect(book.expire(now: clock.now.nanoseconds).isEmpty)
            if clock.now.nanoseconds >= nextExtension {
                let lease = try book.extend(id: "a", now: clock.now.nanoseconds)
                #expect(lease.expires == clock.now.nanoseconds + 10 * second)
                nextExtension += 5 * second
            }
        }
        #expect(book.lease("a") != nil)
        // Once the extensions stop, it ends a lease later.
        let lastExtension = nextExtension - 5 * second
        let ended = try #require(sweep(&book, clock: clock, until: lastExtension + 20 * second, id: "a"))
        #expect(ended >= lastExtension + 10 * second && ended <= lastExtension + 11 * second)
    }

    @Test func stopEndsAtOnce() throws {
        var book = LiveLeaseBook(durationSeconds: 10)
        _ = try book.start(id: "a", now: 0)
        let lease = try book.stop(id: "a")
        #expect(lease.id == "a")
        #expect(book.count == 0)
        #expect(book.expire(now: 100 * second).isEmpty)
        #expect(throws: WebError.self) { try book.stop(id: "a") }
    }

    @Test func fifthViewerIsBusyWhileFourHold() throws {
        var book = LiveLeaseBook(durationSeconds: 120, maxViewers: 4)
        for index in 0..<4 { _ = try book.start(id: "v\(index)", now: 0) }
        do {
            _ = try book.start(id: "v4", now: 0)
            Issue.record("a fifth viewer was let in")
        } catch {
            guard case .busy(let message) = error else {
                Issue.record("expected busy, got \(error)")
                return
            }
            #expect(message.contains("4 viewers"))
            #expect(message.contains("--max-viewers"))
            #expect(error.httpStatus == 503)
        }
        book.release(id: "v2")
        _ = try book.start(id: "v4", now: 0)
        #expect(book.count == 4)
    }

    @Test func unknownIdsAreNotFound() throws {
        var book = LiveLeaseBook()
        do {
            _ = try book.extend(id: "nope", now: 0)
            Issue.record("an unknown id was extended")
        } catch {
            #expect(error.httpStatus == 404)
            #expect(error.message.contains("nope"))
        }
        do {
            _ = try book.stop(id: "nope")
            Issue.record("an unknown id was stopped")
        } catch {
            #expect(error.httpStatus == 404)
        }
        let released = book.release(id: "nope")
        #expect(!released)
    }

    @Test func expiredLeaseCannotBeExtended() throws {
        var book = LiveLeaseBook(durationSeconds: 10)
        _ = try book.start(id: "a", now: 0)
        #expect(book.expire(now: 10 * second) == ["a"])
        #expect(throws: WebError.self) { try book.extend(id: "a", now: 10 * second) }
    }
}
