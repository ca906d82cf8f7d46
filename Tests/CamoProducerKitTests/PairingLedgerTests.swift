@testable import CamoProducerKit
import CamoWire
import Foundation
import Testing

/// The controller's pairing bookkeeping as a plain value: one attempt at a time, numbered, the first ending wins,
/// and the last endings remembered.
@Suite("Pairing ledger (no sockets)")
struct PairingLedgerTests {
    static let second = PairingWindowTests.second
    static let payload = PairingWindowTests.payload
    static let studio = PairedStudio(id: "studio-1", name: "Studio One", publicKey: [UInt8](repeating: 9, count: 32), pairedAt: Date())

    static func openWindow(_ ledger: inout PairingLedger, at now: UInt64 = 0) -> Result<PairingAttempt, PairingFailure> {
        ledger.begin { $0.window = PairingWindow(payload: Self.payload, openedAt: now) }
    }

    @Test func oneAttemptAtATimeNumberedFromOne() throws {
        var ledger = PairingLedger()
        #expect(ledger.status(at: 0) == nil, "no status before the first attempt")
        let first = try Self.openWindow(&ledger).get()
        #expect(first.id == 1 && ledger.current?.id == 1)
        let second = Self.openWindow(&ledger)
        guard case .failure(.alreadyOpen(let name)) = second else {
            Issue.record("a second attempt while one is open must be refused, got \(second)")
            return
        }
        #expect(name == "Studio One", "the refusal names the open window's studio")
        #expect(ledger.lastAttempt == 1, "a refused attempt takes no number")
    }

    @Test func aScanInProgressRefusesAWindow() throws {
        var ledger = PairingLedger()
        let scan = try ledger.begin { $0.scan = PairingAttempt.Scan(deadline: 30 * Self.second, decode: { _ in [] }) }.get()
        #expect(ledger.status(at: 10 * Self.second)?.phase == .scanning)
        #expect(ledger.status(at: 10 * Self.second)?.remainingSeconds == 20)
        guard case .failure(.alreadyOpen(let name)) = Self.openWindow(&ledger) else {
            Issue.record("a window while scanning must be refused")
            return
        }
        #expect(name == "a scanned code")
        #expect(ledger.attempt(scan.id) != nil && ledger.attempt(scan.id + 1) == nil)
    }

    @Test func theFirstEndingWinsAndIsRemembered() throws {
        var ledger = PairingLedger()
        let attempt = try Self.openWindow(&ledger).get()
        let ended = ledger.finish(attempt: attempt.id, .success(Self.studio), at: 3 * Self.second)
        #expect(ended?.id == attempt.id)
        #expect(ledger.current == nil)
        let again = ledger.finish(attempt: attempt.id, .failure(.cancelled), at: 4 * Self.second)
        #expect(again == nil, "an attempt ends once")
        let status = try #require(ledger.status(at: 5 * Self.second))
        #expect(status.phase == .paired && status.studioId == "studio-1" && status.studioName == "Studio One")
        #expect(status.remainingSeconds == nil && status.port == nil, "a finished attempt has no time left and no port")
        let unknown = ledger.finish(attempt: 99, .failure(.cancelled), at: 0)
        #expect(unknown == nil, "an unknown attempt is not ended")
    }

    @Test func aWindowThatAlreadyDecidedIsNotEndedTwice() throws {
        var ledger = PairingLedger()
        let attempt = try Self.openWindow(&ledger, at: 0).get()
        // The window times out by itself (its outcome is set), then a late success tries to end it.
        var window = try #require(ledger.current?.window)
        let expired = window.expire(at: 30 * Self.second)
        #expect(expired)
        ledger.current?.window = window
        let late = ledger.finish(attempt: attempt.id, .success(Self.studio), at: 31 * Self.second)
        #expect(late == nil, "the window already decided: a second ending is refused")
        let ended = ledger.finish(attempt: attempt.id, .failure(.timedOut(seconds: 30)), at: 31 * Self.second, alreadyDecided: true)
        #expect(ended != nil)
        let status = try #require(ledger.status(attempt: attempt.id, at: 31 * Self.second))
        #expect(status.phase == .failed && status.failureCode == "timedOut", "\(status)")
    }

    @Test func theLastEightEndingsAreKept() throws {
        var ledger = PairingLedger()
        for _ in 1...10 {
            let attempt = try Self.openWindow(&ledger).get()
            _ = ledger.finish(attempt: attempt.id, .failure(.cancelled), at: 0)
        }
        #expect(ledger.lastAttempt == 10)
        #expect(ledger.finished.map(\.attempt) == Array(3...10), "the oldest endings are let go first")
        #expect(ledger.status(attempt: 2, at: 0) == nil && ledger.status(attempt: 3, at: 0)?.phase == .failed)
        #expect(ledger.status(at: 0)?.attempt == 10, "without an attempt in progress, the status is the last ending")
    }
}
