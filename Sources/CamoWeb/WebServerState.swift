/// Everything the server changes while it runs, behind one lock: leases, browser logins, the login limiter and
/// the counters `/metrics` shows.
struct WebServerState: Sendable {
    var leases: LiveLeaseBook
    var sessions = WebSessionBook()
    var limiter = LoginRateLimiter()
    /// Responses sent, by status code.
    var responses: [Int: Int] = [:]
    /// Rejected tokens (bearer or login).
    var authFailures = 0
    /// Leases that ran out.
    var leasesExpired = 0
    /// Viewers started.
    var viewersStarted = 0
}
