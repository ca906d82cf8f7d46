import Foundation

/// What a finished command printed and how it ended.
public struct CommandResult: Sendable, Equatable {
    /// The exit status (127 when the program could not be started).
    public var status: Int32
    /// What it wrote to standard output.
    public var output: String
    /// What it wrote to standard error.
    public var errors: String
    /// Whether the program was not found (then nothing ran).
    public var programMissing: Bool

    /// A result with the given status and text.
    public init(status: Int32, output: String = "", errors: String = "", programMissing: Bool = false) {
        self.status = status
        self.output = output
        self.errors = errors
        self.programMissing = programMissing
    }

    /// A command that exited with 0 after printing `output`.
    public static func success(_ output: String = "") -> CommandResult { CommandResult(status: 0, output: output) }

    /// The result for a program that is not installed.
    public static func missing(_ program: String) -> CommandResult {
        CommandResult(status: 127, errors: "\(program): command not found", programMissing: true)
    }

    /// Whether it exited with 0.
    public var succeeded: Bool { status == 0 }

    /// Standard error, else standard output, trimmed: the command's own words for what went wrong.
    public var message: String {
        let errorText = errors.trimmingCharacters(in: .whitespacesAndNewlines)
        return errorText.isEmpty ? output.trimmingCharacters(in: .whitespacesAndNewlines) : errorText
    }
}
