import ArgumentParser
import CamoAgentKit
import CamoProducerKit
import CamoWeb
import Foundation

/// `camo-agent web`: tokens for the page and its API, and the RTSP address for an NVR.
struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tokens for the agent's page and API (browsers, scripts), and the RTSP address for an NVR.",
        subcommands: [WebToken.self, WebTokens.self, WebRevoke.self, WebRTSP.self])
}

/// Options of the `web` commands: only the state directory (they edit its files; the running agent reads them).
struct WebStateOptions: ParsableArguments {
    @Option(name: .long, help: "The agent's state directory.")
    var stateDir: String = AgentPaths.defaultStateDirectory()
}

struct WebToken: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mints a token for the page and the API (shown once; the agent keeps only its hash).",
        discussion: "Give it to the browser's login form, or send it as `Authorization: Bearer TOKEN`. The running agent accepts it at once; `camo-agent web revoke ID` withdraws it.")

    @OptionGroup var state: WebStateOptions
    @Option(help: "A name to tell tokens apart (the device or person it is for).") var name = "browser"

    func run() throws {
        let store = WebTokenStore(directory: URL(fileURLWithPath: state.stateDir))
        do {
            let minted = try store.mint(name: name)
            print("id \(minted.id) name \(name)")
            print("token \(minted.token)")
            print("Shown only now: the agent keeps its SHA-256 hash. Revoke it with: camo-agent web revoke \(minted.id)")
        } catch {
            throw ValidationError("Cannot mint a token in \(state.stateDir): \(error)")
        }
    }
}

struct WebTokens: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tokens", abstract: "Lists the page's tokens (names and ids, never the tokens).")

    @OptionGroup var state: WebStateOptions

    func run() throws {
        let tokens: [WebTokenRecord]
        do {
            tokens = try WebTokenStore(directory: URL(fileURLWithPath: state.stateDir)).list()
        } catch {
            throw ValidationError("Cannot read the tokens in \(state.stateDir): \(error)")
        }
        if tokens.isEmpty {
            print("no tokens; mint one with: camo-agent web token --name NAME")
            return
        }
        let formatter = ISO8601DateFormatter()
        for token in tokens {
            print("\(token.id)  \(token.name)  created \(formatter.string(from: token.created))")
        }
    }
}

struct WebRevoke: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke", abstract: "Revokes a token by its id: its requests and its browser sessions stop working at once.")

    @OptionGroup var state: WebStateOptions
    @Argument(help: "The token's id (camo-agent web tokens lists them).") var id: String

    func run() throws {
        let store = WebTokenStore(directory: URL(fileURLWithPath: state.stateDir))
        let revoked: Bool
        do {
            revoked = try store.revoke(id: id)
        } catch {
            throw ValidationError("Cannot revoke \(id) in \(state.stateDir): \(error)")
        }
        guard revoked else {
            throw ValidationError("No token has the id \(id); `camo-agent web tokens` lists them.")
        }
        print("revoked \(id)")
    }
}

struct WebRTSP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtsp", abstract: "Prints the RTSP address with its user and password, for an NVR or a restreamer.")

    @OptionGroup var options: AgentOptions

    func run() throws {
        let loader: AgentConfigurationLoader
        do {
            loader = try options.load()
        } catch {
            throw ValidationError("\(error)")
        }
        let configuration = loader.configuration
        guard configuration.rtsp else { throw ValidationError("RTSP is off (rtsp false / --no-rtsp).") }
        guard let password = configuration.rtspPassword ?? RTSPPassword.saved(stateDirectory: configuration.stateDir) else {
            throw ValidationError("No RTSP password yet: the agent makes one the first time it starts with RTSP on (\(configuration.stateDir)/rtsp-password), or set rtspPassword in the config file.")
        }
        let host = configuration.rtspHost == "0.0.0.0" ? ProcessInfo.processInfo.hostName : configuration.rtspHost
        // User and password percent-encoded as a URL's userinfo wants (a password may hold @, : or /).
        var allowed = CharacterSet.urlUserAllowed
        allowed.remove(charactersIn: ":@/")
        let user = configuration.rtspUser.addingPercentEncoding(withAllowedCharacters: allowed) ?? configuration.rtspUser
        let secret = password.addingPercentEncoding(withAllowedCharacters: allowed) ?? password
        print("rtsp://\(user):\(secret)@\(host):\(configuration.rtspPort)/camo")
    }
}
