import CamoAgentKit
import Foundation
import Testing

@Suite("systemd notifications")
struct SystemdNotifierTests {
    @Test func sendsToTheSocketNamedByNotifySocket() async throws {
        let listener = try NotifyListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "4000000"])
        #expect(notifier.watchdogInterval == .seconds(4))
        #expect(notifier.notify("READY=1\nSTATUS=hello"))
        let messages = await listener.receive(seconds: 2) { !$0.isEmpty }
        #expect(messages == ["READY=1\nSTATUS=hello"])
    }

    @Test func outsideSystemdNothingIsSent() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(notifier.socketPath == nil && notifier.watchdogInterval == nil)
        #expect(!notifier.notify("READY=1"))
    }

    @Test func aWatchdogForAnotherProcessIsNotOurs() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "1000", "WATCHDOG_PID": "1"])
        #expect(getpid() == 1 || notifier.watchdogInterval == nil)
    }
}
