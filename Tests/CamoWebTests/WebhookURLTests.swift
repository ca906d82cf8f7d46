import Testing

@testable import CamoWeb

/// The configured URL: what is accepted, and the sentence for everything else.
@Suite("Webhook URL")
struct WebhookURLTests {
    @Test func homeAssistantURL() throws {
        let url = try WebhookURL("https://homeassistant.local:8123/api/webhook/camo")
        #expect(url.scheme == .https)
        #expect(url.host == "homeassistant.local")
        #expect(url.port == 8123)
        #expect(url.pathAndQuery == "/api/webhook/camo")
        #expect(url.hostHeader == "homeassistant.local:8123")
        #expect(!url.hostIsIPAddress)
        #expect(url.description == "https://homeassistant.local:8123/api/webhook/camo")
    }

    @Test func defaultsAndNormalizing() throws {
        let plain = try WebhookURL("HTTP://Hub.Example")
        #expect(plain.scheme == .http)
        #expect(plain.host == "hub.example")
        #expect(plain.port == 80)
        #expect(plain.pathAndQuery == "/")
        #expect(plain.hostHeader == "hub.example")
        #expect(plain.description == "http://hub.example/")
        let secure = try WebhookURL("https://hub.example:443?token=abc%20d")
        #expect(secure.port == 443)
        #expect(secure.pathAndQuery == "/?token=abc%20d")
        #expect(secure.description == "https://hub.example/?token=abc%20d")
    }

    @Test func addresses() throws {
        let v4 = try WebhookURL("http://192.168.1.5:1880/camo?zone=door")
        #expect(v4.host == "192.168.1.5")
        #expect(v4.hostIsIPAddress)
        #expect(v4.pathAndQuery == "/camo?zone=door")
        let v6 = try WebhookURL("http://[FE80::1]:8080/hook")
        #expect(v6.host == "fe80::1")
        #expect(v6.port == 8080)
        #expect(v6.hostIsIPAddress)
        #expect(v6.hostHeader == "[fe80::1]:8080")
        #expect(try WebhookURL("https://[::1]/").hostHeader == "[::1]")
    }

    @Test(arguments: [
        ("ftp://files.example/camo", "is not http or https: it uses \"ftp\""),
        ("ws://hub.example/", "is not http or https"),
        ("https:///api/webhook", "has no host"),
        ("http://:8080/", "has no host"),
        ("https://home assistant.local/", "contains a space"),
        ("https://hub.example/a b", "contains a space"),
        (" https://hub.example/", "contains a space"),
        ("https://hub.example/\n", "control character"),
        ("", "is empty"),
        ("homeassistant.local:8123/api", "is not an absolute URL"),
        ("https://hub.example:0/", "port that is not a number from 1 to 65535"),
        ("https://hub.example:65536/", "port that is not a number from 1 to 65535"),
        ("https://hub.example:abc/", "port that is not a number"),
        ("https://hub.example:/", "port that is not a number"),
        ("https://hub.example/#top", "fragment"),
        ("https://hüb.example/", "not ASCII"),
        ("https://hub!.example/", "characters a host name cannot have"),
        ("http://fe80::1/", "more than one colon"),
        ("http://[fe80::1/", "without a closing ]"),
        ("http://[fe80::1]x/", "not a :port"),
        ("http://[zz]/", "IPv6 address that is not valid"),
    ])
    func refusedWithASentence(text: String, problem: String) {
        #expect {
            _ = try WebhookURL(text)
        } throws: { error in
            guard case WebhookError.invalidURL(let sentence) = error else { return false }
            return sentence.hasPrefix("The webhook URL ") && sentence.contains(problem)
                && sentence.hasSuffix("set webhookURL to e.g. https://homeassistant.local:8123/api/webhook/camo")
        }
    }

    @Test func credentialsAreRefusedAndNotRepeated() {
        #expect {
            _ = try WebhookURL("https://admin:hunter2@hub.example:8123/api")
        } throws: { error in
            guard case WebhookError.invalidURL(let sentence) = error else { return false }
            return sentence.contains("user name or password") && !sentence.contains("hunter2") && !sentence.contains("admin")
                && sentence.contains("https://…@hub.example:8123/api")
        }
        #expect(throws: WebhookError.self) { try WebhookURL("http://token@hub.example/") }
    }
}
