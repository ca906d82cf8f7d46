import ArgumentParser
import CamoAgentKit
import CamoCommandLine
import Foundation

/// `camo-agent transports [add URL | modify ID | remove ID | status ID active|inactive]`: where recordings are pushed.
struct Transports: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists, adds, modifies or removes the push transports the running agent sends its recordings to.",
        discussion: """
            A transport's url is https:// (each recording is PUT to URL/NAME as CMAF or JPEG) or an absolute directory \
            path (each is copied in). Plain http is refused. --ca trusts a CA's PEM file for it besides the system's; \
            --token is sent as Authorization: Bearer and never shown. Examples:
              camo-agent transports add https://nvr.local:8443/ingest/camo --ca /etc/camo/nvr-ca.pem --token SECRET
              camo-agent transports status 1 inactive
            """)

    @OptionGroup var state: StateOptions
    @Argument(help: "add, modify, remove or status; none lists.") var action: String?
    @Argument(help: "add: the url; modify, remove, status: the transport's id.") var target: String?
    @Argument(help: "status: active or inactive.") var status: String?
    @Option(help: "add, modify: the url.") var url: String?
    @Option(help: "add, modify: a PEM file of the CA to trust for it (empty: none).") var ca: String?
    @Option(help: "add, modify: a bearer token to send (empty: none).") var token: String?
    @Flag(help: "Print the transports as JSON.") var json = false

    func validate() throws {
        switch action {
        case nil: break
        case "add": guard target != nil || url != nil else { throw ValidationError("add needs the url: camo-agent transports add https://HOST/PATH") }
        case "modify", "remove":
            guard target.flatMap(Int.init) != nil else { throw ValidationError("\(action!) needs the transport's id (camo-agent transports lists them)") }
        case "status":
            guard target.flatMap(Int.init) != nil, status == "active" || status == "inactive" else {
                throw ValidationError("status needs the transport's id and active or inactive")
            }
        default: throw ValidationError("The actions are add, modify, remove and status; without one the transports are listed.")
        }
    }

    func run() async throws {
        func definition(_ url: String?) throws -> String {
            let definition = PushTransportDefinition(url: url, caFile: ca.map(Self.absolute), token: token)
            return String(decoding: try JSONEncoder().encode(definition), as: UTF8.self)
        }
        let request: ControlRequest
        switch action {
        case "add": request = ControlRequest(command: "transport-add", value: try definition(url ?? target))
        case "modify": request = ControlRequest(command: "transport-modify", name: target, value: try definition(url))
        case "remove": request = ControlRequest(command: "transport-remove", name: target)
        case "status": request = ControlRequest(command: "transport-status", name: target, value: status)
        default: request = ControlRequest(command: "transports")
        }
        let response = try await state.send(request)
        let transports = response.transports ?? []
        if json {
            print(try SettingsText.json(transports))
            return
        }
        guard !transports.isEmpty else {
            print("no push transports (add one: camo-agent transports add https://HOST/PATH)")
            return
        }
        var rows = [["ID", "STATUS", "URL", "CA", "TOKEN", "SENT", "WAITING", "FAILED", "DROPPED", "LAST ERROR"]]
        for transport in transports {
            let delivery = transport.delivery
            rows.append([
                String(transport.id), transport.status.rawValue, transport.url, transport.caFile ?? "-", transport.token ?? "-",
                String(delivery?.delivered ?? 0), String((delivery?.pending ?? 0) + (delivery?.inFlight == true ? 1 : 0)),
                String(delivery?.failed ?? 0), String(delivery?.dropped ?? 0), delivery?.lastError ?? "-",
            ])
        }
        print(TextTable.render(rows))
    }

    /// A path made absolute against the working directory (the agent runs elsewhere).
    static func absolute(_ path: String) -> String {
        path.isEmpty || path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
