import Foundation

/// One HTTP request as the router sees it: complete, its body already bounded.
struct WebRequest: Sendable {
    /// The method, upper case ("GET").
    var method: String
    /// The path without the query ("/whep/sessions/ab12").
    var path: String
    /// Header fields (names compared case-insensitively through ``header(_:)``).
    var headers: [(name: String, value: String)]
    /// The body.
    var body: [UInt8]
    /// The client's address as text ("127.0.0.1"), or "unknown".
    var clientAddress: String

    /// The first value of header `name`, if present.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The media type of the body, lower case, without parameters ("application/sdp").
    var mediaType: String? {
        guard let value = header("Content-Type") else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The value of cookie `name`, if the request carries it.
    func cookie(_ name: String) -> String? {
        for field in headers where field.name.caseInsensitiveCompare("Cookie") == .orderedSame {
            for pair in field.value.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    /// The token of an `Authorization: Bearer <token>` header, if present.
    var bearerToken: String? {
        guard let value = header("Authorization") else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// Whether the request came from a loopback address.
    var isLoopback: Bool { ClientAddress.isLoopback(host: clientAddress) }
}

/// One HTTP response from the router.
struct WebResponse: Sendable {
    /// The status code.
    var status: Int
    /// Header fields (Content-Length is added when written).
    var headers: [(name: String, value: String)]
    /// The body.
    var body: [UInt8]
    /// A body sent piece by piece after `body` until it ends (server-sent events); the connection closes after it.
    var stream: AsyncStream<[UInt8]>?

    /// A response with `status`, `headers` and `body`.
    init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [], stream: AsyncStream<[UInt8]>? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream
    }

    /// A JSON response with an encoded value.
    static func json<Value: Encodable>(_ status: Int, _ value: Value, headers: [(name: String, value: String)] = []) -> WebResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)).map { Array($0) } ?? Array("{}".utf8)
        return WebResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// A JSON response with a body already encoded.
    static func jsonData(_ status: Int, _ body: Data) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(body))
    }

    /// `{"error": message}` with `status`.
    static func error(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> WebResponse {
        json(status, ["error": message], headers: headers)
    }

    /// The response for a backend or lease error.
    static func error(_ error: WebError) -> WebResponse {
        Self.error(error.httpStatus, error.message)
    }

    /// The first value of header `name`, if present.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
