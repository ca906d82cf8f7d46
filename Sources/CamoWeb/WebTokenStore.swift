import Crypto
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One access token as the token file keeps it: never the token itself, only its SHA-256.
public struct WebTokenRecord: Codable, Sendable, Equatable {
    /// A short random id that names the token (for `revoke(id:)`).
    public var id: String
    /// What the user called it ("phone", "home assistant").
    public var name: String
    /// SHA-256 of the token's UTF-8 bytes, lowercase hex.
    public var sha256: String
    /// When it was minted.
    public var created: Date
}

/// What went wrong with the token file.
public struct WebTokenStoreError: Error, CustomStringConvertible, Sendable {
    /// A sentence naming the file and what to do.
    public var description: String
}

/// The web access tokens, in `web-tokens.json` in the agent's state directory.
///
/// `mint(name:)` returns the token once; the file keeps only its SHA-256 hash, id, name and creation time.
/// The server checks presented tokens with ``verify(token:)``, which rereads the file whenever it changed (its
/// inode, size or modification time), so `camo-agent web token` in another process takes effect without a restart.
/// Hashes are compared in constant time.
public final class WebTokenStore: Sendable {
    private struct FileContents: Codable {
        var version: Int = 1
        var tokens: [WebTokenRecord] = []
    }

    private struct FileStamp: Equatable {
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }

    private struct Cache {
        var stamp: FileStamp?
        var records: [WebTokenRecord] = []
        var hashes: [(id: String, digest: [UInt8])] = []
    }

    /// The token file's name in the state directory.
    public static let fileName = "web-tokens.json"

    /// The token file.
    public let fileURL: URL
    private let cache = Mutex(Cache())

    /// A store over `web-tokens.json` in `directory` (created when a token is first minted).
    public init(directory: URL) {
        fileURL = directory.appendingPathComponent(Self.fileName)
    }

    /// Makes a new token named `name`: 32 random bytes, base64url. The token is returned here only; keep it.
    public func mint(name: String) throws(WebTokenStoreError) -> (id: String, token: String) {
        var generator = SystemRandomNumberGenerator()
        let token = Self.base64URL((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        let id = (0..<6).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
        let record = WebTokenRecord(id: id, name: name, sha256: Self.hashHex(token), created: Date())
        try withFileLock { () throws(WebTokenStoreError) -> Void in
            var contents = try readFile()
            contents.tokens.append(record)
            try writeFile(contents)
        }
        return (id, token)
    }

    /// The tokens in the file (hashes, never the tokens), oldest first.
    public func list() throws(WebTokenStoreError) -> [WebTokenRecord] {
        try readFile().tokens
    }

    /// Removes token `id`; returns whether it existed. Its bearer and its login cookies stop working at once.
    @discardableResult
    public func revoke(id: String) throws(WebTokenStoreError) -> Bool {
        try withFileLock { () throws(WebTokenStoreError) -> Bool in
            var contents = try readFile()
            let before = contents.tokens.count
            contents.tokens.removeAll { $0.id == id }
            guard contents.tokens.count != before else { return false }
            try writeFile(contents)
            return true
        }
    }

    /// The id of the record whose hash matches `token`, or nil. Rereads the file if it changed; every stored hash is
    /// compared in full, so the time taken does not depend on how much of a hash matched. A file that cannot be
    /// read matches nothing.
    public func verify(token: String) -> String? {
        let digest = Array(SHA256.hash(data: Array(token.utf8)))
        let hashes = currentHashes()
        var found: String?
        for entry in hashes where Self.constantTimeEqual(entry.digest, digest) {
            found = entry.id
        }
        return found
    }

    /// Whether token `id` is still in the file (a cookie's token may have been revoked since login).
    public func contains(id: String) -> Bool {
        currentHashes().contains { $0.id == id }
    }

    // MARK: File

    private func currentHashes() -> [(id: String, digest: [UInt8])] {
        let stamp = Self.stamp(of: fileURL.path)
        if let cached = cache.withLock({ $0.stamp == stamp && stamp != nil ? $0.hashes : nil }) { return cached }
        let records = (try? readFile().tokens) ?? []
        let hashes = records.compactMap { record -> (id: String, digest: [UInt8])? in
            guard let digest = Self.bytes(hex: record.sha256), digest.count == 32 else { return nil }
            return (record.id, digest)
        }
        cache.withLock { $0 = Cache(stamp: stamp, records: records, hashes: hashes) }
        return hashes
    }

    private func readFile() throws(WebTokenStoreError) -> FileContents {
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return FileContents()
        } catch {
            if !FileManager.default.fileExists(atPath: fileURL.path) { return FileContents() }
            throw WebTokenStoreError(description: "cannot read \(fileURL.path): \(error.localizedDescription)")
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(FileContents.self, from: data)
        } catch {
            throw WebTokenStoreError(
                description: "\(fileURL.path) is not a token file (\(error)); move it aside and mint new tokens")
        }
    }

    private func writeFile(_ contents: FileContents) throws(WebTokenStoreError) {
        let directory = fileURL.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(contents)
            let temporary = directory.appendingPathComponent(".\(Self.fileName).\(getpid()).tmp")
            guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
            else { throw WebTokenStoreError(description: "cannot write \(temporary.path)") }
            guard rename(temporary.path, fileURL.path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary.path)
                throw WebTokenStoreError(description: "cannot replace \(fileURL.path): \(reason)")
            }
        } catch let error as WebTokenStoreError {
            throw error
        } catch {
            throw WebTokenStoreError(description: "cannot write \(fileURL.path): \(error.localizedDescription)")
        }
    }

    /// Runs `body` holding an exclusive lock on `web-tokens.json.lock`, so two processes minting at once both keep theirs.
    private func withFileLock<T>(_ body: () throws(WebTokenStoreError) -> T) throws(WebTokenStoreError) -> T {
        let directory = fileURL.deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lockPath = fileURL.path + ".lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw WebTokenStoreError(description: "cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw WebTokenStoreError(description: "cannot lock \(lockPath): \(String(cString: strerror(errno)))")
            }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private static func stamp(of path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        return FileStamp(
            inode: UInt64(info.st_ino), size: Int64(info.st_size), seconds: Int(info.st_mtimespec.tv_sec),
            nanoseconds: Int(info.st_mtimespec.tv_nsec))
        #else
        return FileStamp(
            inode: UInt64(info.st_ino), size: Int64(info.st_size), seconds: Int(info.st_mtim.tv_sec),
            nanoseconds: Int(info.st_mtim.tv_nsec))
        #endif
    }

    // MARK: Encoding

    /// Whether `a` and `b` are equal, looking at every byte whatever differs.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// SHA-256 of `token`'s UTF-8 bytes, lowercase hex.
    static func hashHex(_ token: String) -> String {
        SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func bytes(hex: String) -> [UInt8]? {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(characters.count / 2)
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            result.append(high << 4 | low)
        }
        return result
    }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
