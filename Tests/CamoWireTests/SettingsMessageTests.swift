import CamoWire
import Foundation
import Testing

/// The settings messages of protocol 1.2: JSON bodies behind a u32 length, read strictly.
@Suite("Protocol 1.2: settings messages")
struct SettingsMessageTests {
    static let descriptor = SettingDescriptor(
        name: "viewport", label: "Viewport", group: "image", kind: .rectangle,
        value: .rectangle(SettingRectangle(x1: 320, y1: 180, x2: 960, y2: 540, width: 1280, height: 720)),
        defaultValue: .rectangle(SettingRectangle(x1: 0, y1: 0, x2: 1280, y2: 720, width: 1280, height: 720)))

    @Test func everySettingsMessageRoundTrips() throws {
        let messages: [AppMessage] = [
            .settingsRequest,
            .settings(SettingsSnapshot(reason: .change, revision: 9, studioMayWrite: false, changedBy: "studio A", settings: [
                Self.descriptor,
                SettingDescriptor(name: "nightVision", label: "Night vision", group: "lights", kind: .choice, choices: ["off", "on", "auto"],
                                  supported: false, note: "no infrared light"),
                SettingDescriptor(name: "powerSource", label: "Power", group: "power", kind: .info,
                                  value: .facts(["source": "battery", "chargeLevel": "warning"]), writable: false),
            ])),
            .settingsWrite(SettingsWrite(requestId: 3, values: ["brightness": .int(200), "imageFlipHorizontal": .bool(true), "nightVision": .text("auto")])),
            .settingsResult(SettingsResult(requestId: 3, applied: [Self.descriptor], refused: [SettingRefusal(name: "x", reason: "no")])),
        ]
        for message in messages {
            #expect(try AppMessage.decode(message.encoded()) == message, "\(message.type)")
        }
        #expect(AppMessageType.settingsWrite.sentByStudio == true && AppMessageType.settings.sentByStudio == false)
    }

    @Test func malformedBodiesAreRefusedNamingTheProblem() throws {
        func body(_ type: AppMessageType, _ json: String, length: Int? = nil) -> [UInt8] {
            let bytes = Array(json.utf8)
            let n = UInt32(length ?? bytes.count)
            return [type.rawValue, UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + bytes
        }
        func error(_ bytes: [UInt8]) -> WireError? {
            do {
                _ = try AppMessage.decode(bytes)
                return nil
            } catch {
                return error
            }
        }
        #expect(error(body(.settingsWrite, #"{"requestId": 1, "values": {}}"#))?.reason.contains("sets nothing") == true)
        #expect(error(body(.settingsWrite, #"{"values": {"a": 1}}"#))?.reason.contains("requestId") == true)
        #expect(error(body(.settingsWrite, #"{"requestId": 1, "values": {"a": 1.5}}"#))?.code == .badRequest)
        #expect(error(body(.settingsWrite, #"{"requestId": 1, "values": {"a": [1]}}"#))?.code == .badRequest)
        #expect(error(body(.settingsWrite, "not json"))?.code == .badRequest)
        #expect(error(body(.settingsWrite, "{}", length: 10))?.code == .protocolViolation, "a length beyond the message")
        #expect(error(body(.settingsWrite, "{}", length: 300_000))?.code == .limitExceeded)
        let many = (0..<257).map { "\"s\($0)\": 1" }.joined(separator: ",")
        #expect(error(body(.settingsWrite, #"{"requestId": 1, "values": {\#(many)}}"#))?.reason.contains("at most 256") == true)
        #expect(error([AppMessageType.settingsRequest.rawValue, 0]) != nil, "settingsRequest has no body")
        // A 1.2 hello with an unknown purpose.
        var hello = AppMessage.studioHello(StudioHello(versionMinor: 2, studioId: "s", studioName: "n", audioSamplesRequired: 480)).encoded()
        hello[hello.count - 1] = 7
        #expect(error(hello)?.reason.contains("purpose 7") == true)
    }

    @Test func commandLineValuesParseByKind() {
        let flag = SettingDescriptor(name: "f", label: "", group: "image", kind: .bool)
        #expect(flag.parse("on") == .bool(true) && flag.parse("0") == .bool(false) && flag.parse("maybe") == .text("maybe"))
        let number = SettingDescriptor(name: "n", label: "", group: "camera", kind: .int)
        #expect(number.parse(" 42 ") == .int(42) && number.parse("50hz") == .text("50hz"))
        let rectangle = SettingDescriptor(name: "viewport", label: "", group: "image", kind: .rectangle)
        #expect(rectangle.parse("320,180-960,540") == .rectangle(SettingRectangle(x1: 320, y1: 180, x2: 960, y2: 540)))
        #expect(rectangle.parse("0,0,640,360@1280x720") == .rectangle(SettingRectangle(x1: 0, y1: 0, x2: 640, y2: 360, width: 1280, height: 720)))
        #expect(rectangle.parse("-5,0-10,10") == .text("-5,0-10,10"))
    }
}
