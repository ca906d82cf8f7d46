import CamoEvents
import CamoMedia
import CamoWeb
import Foundation
import Logging

/// The agent's events posted to the configured webhook: each notice as JSON (an ``EventNotice``), signed with the
/// webhook secret (``WebhookSecret``), through ``EventWebhook``'s bounded queue and retries, so a receiver that
/// hangs or fails never holds back the detectors.
enum EventWebhookSink {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// Starts posting `monitor`'s notices to `url`.
    /// - Throws: ``AgentStartupError`` when the URL is unusable or the secret cannot be read or made.
    static func start(
        url: String, configured: String?, stateDirectory: String, monitor: EventMonitor, clock: any MonotonicClock, logger: Logger
    ) throws -> EventWebhook {
        let secret: String
        do {
            secret = try WebhookSecret.loadOrCreate(configured: configured, stateDirectory: stateDirectory)
        } catch {
            throw AgentStartupError(
                step: "reading the webhook secret", path: stateDirectory + "/webhook-secret", reason: "\(error)",
                remedy: "The state directory must be writable by this user, or set webhookSecret in the config file.")
        }
        let webhook: EventWebhook
        do {
            webhook = try EventWebhook(url: url, secret: secret, clock: clock, logger: logger)
        } catch {
            throw AgentStartupError(
                step: "setting up the webhook", reason: "\(error)", remedy: "Fix --webhook-url (config key webhookURL), or leave it out.")
        }
        monitor.addSink { notice in
            guard let body = try? encoder.encode(notice) else { return }
            webhook.post(Array(body), id: "\(notice.event.id)-\(notice.sequence)")
        }
        monitor.reportWebhook { webhook.stats }
        logger.info("Events are posted to the webhook", metadata: ["host": "\(webhook.url.hostHeader)"])
        return webhook
    }
}
