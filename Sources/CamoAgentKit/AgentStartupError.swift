/// Why the agent could not start: what it was doing, with which path, and what to do.
public struct AgentStartupError: Error, Sendable, CustomStringConvertible {
    /// What the agent was doing (`creating the state directory`, say).
    public var step: String
    /// The file or directory involved, if any.
    public var path: String?
    /// The underlying error's text.
    public var reason: String
    /// What the user can do about it.
    public var remedy: String

    /// An error from its parts.
    public init(step: String, path: String? = nil, reason: String, remedy: String) {
        self.step = step
        self.path = path
        self.reason = reason
        self.remedy = remedy
    }

    public var description: String {
        "Could not start: \(step)\(path.map { " (\($0))" } ?? ""): \(reason). \(remedy)"
    }
}
