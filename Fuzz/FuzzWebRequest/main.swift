import Foundation
import FuzzSupport

@testable import CamoWeb

// The web server's own reading of a request, short of the router (which needs the NIO server module): the media type,
// the session cookie, the bearer token and the client address of any request; the token checked against the token
// file (web-tokens.json, itself read from any bytes in the second form) and the login cookie looked up; and the
// webhook URL (config key webhookURL, `camo-agent events webhook`).
//
// Input: byte 0 picks the form (modulo 3). 0: a request as "METHOD PATH", header lines "Name: value", an empty line
// and the body; the client address is the X-Fuzz-Client header's value. 1: the token file's bytes. 2: a webhook URL.

let directory = URL(fileURLWithPath: FuzzDirectory.path)
/// The token the token file below holds (its SHA-256), as `camo-agent web token` mints them.
let knownToken = "Hx3lA9m1Z0q7o2QkV3nTt6yJc8d5eWbR4sPuFgLiKhM"
let tokenFile = Array("""
    {"tokens":[{"created":"2026-11-27T08:00:00Z","id":"a1b2c3","name":"phone","sha256":"\(WebTokenStore.hashHex(knownToken))"}],"version":1}
    """.utf8)


func request(_ text: String) -> WebRequest {
    let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) } ?? (text, "")
    var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let first = lines.isEmpty ? [] : lines.removeFirst().split(separator: " ", maxSplits: 1).map(String.init)
    var headers: [(name: String, value: String)] = []
    for line in lines {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }
    return WebRequest(
        method: first.first ?? "GET", path: first.count > 1 ? first[1] : "/", headers: headers, body: Array(body.utf8),
        clientAddress: headers.first { $0.name == "X-Fuzz-Client" }?.value ?? "unknown")
}

/// What the router does with a request before it routes it: is it from here, who is it (bearer, cookie, login body).
func authenticate(_ request: WebRequest, tokens: WebTokenStore, sessions: WebSessionBook) {
    _ = request.isLoopback
    _ = request.mediaType
    _ = request.header("Last-Event-ID").flatMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
    if let bearer = request.bearerToken { _ = tokens.verify(token: bearer) }
    if let cookie = request.cookie(WebSessionBook.cookieName), let id = sessions.tokenID(session: cookie) {
        _ = tokens.contains(id: id)
    }
    // A login's token, as a form sends it or as JSON's string would hold it.
    let body = String(decoding: request.body, as: UTF8.self)
    _ = tokens.verify(token: body.trimmingCharacters(in: .whitespacesAndNewlines))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebRequest(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let rest = UnsafeBufferPointer(start: start + 1, count: count - 1)
    switch start[0] % 3 {
    case 0:
        FuzzDirectory.write(tokenFile, as: WebTokenStore.fileName)
        let tokens = WebTokenStore(directory: directory)
        var sessions = WebSessionBook(maxSessions: 4)
        _ = sessions.open(tokenID: "a1b2c3")
        authenticate(request(String(decoding: rest, as: UTF8.self)), tokens: tokens, sessions: sessions)
    case 1:
        FuzzDirectory.write(rest, as: WebTokenStore.fileName)
        let tokens = WebTokenStore(directory: directory)
        _ = try? tokens.list()
        _ = tokens.verify(token: knownToken)
        _ = tokens.contains(id: "a1b2c3")
        _ = try? tokens.revoke(id: "a1b2c3")
    default:
        if let url = try? WebhookURL(String(decoding: rest, as: UTF8.self)) { _ = url.description }
    }
    return 0
}

/// Seeds: requests as the page, curl and the tests send them, the token file as minting writes it, webhook URLs.
func writeSeeds() throws {
    let requests = [
        "POST /login\nContent-Type: application/json\nX-Fuzz-Client: 192.168.1.20\n\n{\"token\": \"\(knownToken)\"}",
        "POST /login\nContent-Type: application/x-www-form-urlencoded\nX-Fuzz-Client: ::ffff:127.0.0.1\n\ntoken=\(knownToken)",
        "GET /api/status\nAuthorization: Bearer \(knownToken)\nX-Fuzz-Client: 10.0.0.7\n\n",
        "GET /api/events\nCookie: theme=dark; camo_session=abc; other=1\nLast-Event-ID: 42\nX-Fuzz-Client: [::1]\n\n",
        "POST /whep\nContent-Type: application/sdp; charset=utf-8\nX-Fuzz-Client: 127.0.0.1\n\nv=0\r\n",
    ]
    for (index, text) in requests.enumerated() { FuzzSeeds.write([0] + Array(text.utf8), name: "request-\(index)") }
    FuzzDirectory.clear()
    let store = WebTokenStore(directory: directory)
    _ = try store.mint(name: "phone")
    _ = try store.mint(name: "home assistant")
    FuzzSeeds.write([1] + Array(try Data(contentsOf: directory.appendingPathComponent(WebTokenStore.fileName))), name: "token-file")
    for (index, url) in [WebhookURL.example, "http://192.168.1.5/hook?x=1&y=%20", "https://[fe80::1]:8443/a/b"].enumerated() {
        FuzzSeeds.write([2] + Array(url.utf8), name: "webhook-\(index)")
    }
}

if FuzzSeeds.directory != nil {
    do { try writeSeeds() } catch { fatalError("seeds: \(error)") }
    exit(0)
}

runFuzzDriver { fuzzWebRequest($0, $1) }
