import CamoProducerKit

/// Follows a pairing attempt on a running agent through its control socket until it ends, as `camo-agent pair`
/// shows it: polls the attempt's status, and cancels it once when asked to (Ctrl-C).
public enum PairingFollower {
    /// Polls attempt `first.attempt` every `interval` until it is paired or failed, calling `progress` with each
    /// status (the first one too), and returns the last status.
    /// - Parameter interrupted: when it turns true, the attempt is cancelled on the agent (once); the loop then
    ///   follows it to its end, which says `cancelled`.
    /// - Throws: the control socket's errors, or ``ControlError/pairingLost`` when the agent no longer knows
    ///   the attempt (it was restarted).
    public static func follow(
        socket: String, first: PairingStatus, interval: Duration = .milliseconds(200),
        interrupted: @Sendable () -> Bool = { false }, progress: (PairingStatus) -> Void
    ) async throws -> PairingStatus {
        var status = first
        var cancelSent = false
        while !status.isFinished {
            progress(status)
            try await Task.sleep(for: interval)
            if interrupted(), !cancelSent {
                cancelSent = true
                _ = try? await ControlClient.send(ControlRequest(command: "cancel-pairing"), to: socket)
            }
            let response = try await ControlClient.send(ControlRequest(command: "pairing", value: "\(first.attempt)"), to: socket)
            guard let now = response.pairing, now.attempt == first.attempt else {
                throw ControlError.pairingLost
            }
            status = now
        }
        progress(status)
        return status
    }
}
