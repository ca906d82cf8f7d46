import Foundation
import Testing

@testable import CamoWeb

@Suite("Web tokens")
struct WebTokenStoreTests {
    @Test func mintedTokenVerifiesAndTheFileHoldsOnlyItsHash() throws {
        let directory = try temporaryStateDirectory()
        let store = WebTokenStore(directory: directory)
        let (id, token) = try store.mint(name: "phone")
        #expect(token.count == 43)  // 32 bytes, base64url without padding
        #expect(!token.contains("+") && !token.contains("/") && !token.contains("="))
        #expect(store.verify(token: token) == id)
        #expect(store.verify(token: token + "x") == nil)
        #expect(store.verify(token: "") == nil)

        let file = try String(contentsOf: directory.appendingPathComponent("web-tokens.json"), encoding: .utf8)
        #expect(!file.contains(token))
        #expect(file.contains(WebTokenStore.hashHex(token)))
        #expect(file.contains("phone"))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("web-tokens.json").path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let records = try store.list()
        #expect(records.map(\.id) == [id])
        #expect(records.first?.name == "phone")
    }

    @Test func revokedTokenStopsVerifying() throws {
        let store = WebTokenStore(directory: try temporaryStateDirectory())
        let first = try store.mint(name: "one")
        let second = try store.mint(name: "two")
        #expect(try store.revoke(id: first.id))
        #expect(try !store.revoke(id: first.id))
        #expect(store.verify(token: first.token) == nil)
        #expect(store.verify(token: second.token) == second.id)
        #expect(!store.contains(id: first.id))
        #expect(store.contains(id: second.id))
    }

    @Test func anotherProcessEditingTheFileIsSeen() throws {
        let directory = try temporaryStateDirectory()
        let server = WebTokenStore(directory: directory)
        let command = WebTokenStore(directory: directory)  // another process: its own store over the same file
        #expect(server.verify(token: "nothing yet") == nil)
        let minted = try command.mint(name: "cli")
        #expect(server.verify(token: minted.token) == minted.id)
        try command.revoke(id: minted.id)
        #expect(server.verify(token: minted.token) == nil)

        // A hand edit that keeps the size and time the same still replaces the file (new inode) through rename;
        // an edit in place changes the modification time.
        let again = try command.mint(name: "cli-2")
        #expect(server.verify(token: again.token) == again.id)
        let url = directory.appendingPathComponent(WebTokenStore.fileName)
        let text = try String(contentsOf: url, encoding: .utf8)
        try text.replacingOccurrences(of: WebTokenStore.hashHex(again.token), with: String(repeating: "0", count: 64))
            .write(to: url, atomically: false, encoding: .utf8)
        #expect(server.verify(token: again.token) == nil)
    }

    @Test func corruptFileMatchesNothingAndMintSaysWhat() throws {
        let directory = try temporaryStateDirectory()
        try Data("not json".utf8).write(to: directory.appendingPathComponent(WebTokenStore.fileName))
        let store = WebTokenStore(directory: directory)
        #expect(store.verify(token: "x") == nil)
        do {
            _ = try store.mint(name: "x")
            Issue.record("minted over a corrupt file")
        } catch {
            #expect(error.description.contains("web-tokens.json"))
        }
    }

    @Test func constantTimeCompareSeesEveryByte() {
        #expect(WebTokenStore.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!WebTokenStore.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!WebTokenStore.constantTimeEqual([9, 2, 3], [1, 2, 3]))
        #expect(!WebTokenStore.constantTimeEqual([1, 2], [1, 2, 3]))
    }

    @Test func sessionBookMapsCookiesToTokens() {
        var book = WebSessionBook(maxSessions: 2)
        let first = book.open(tokenID: "t1")
        let second = book.open(tokenID: "t2")
        #expect(first != second)
        #expect(book.tokenID(session: first) == "t1")
        #expect(book.tokenID(session: "forged") == nil)
        let third = book.open(tokenID: "t3")
        #expect(book.count == 2)
        #expect(book.tokenID(session: first) == nil)  // the oldest went
        #expect(book.tokenID(session: third) == "t3")
        book.close(session: second)
        #expect(book.tokenID(session: second) == nil)
    }
}
