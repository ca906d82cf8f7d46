import CamoDoorbell
import Logging
import Testing

@Suite("Doorbell configuration texts: doorbellButton and externalChime")
struct DoorbellInputTests {
    @Test("Button texts parse into lines and keys", arguments: [
        ("gpio:doorbell", DoorbellInput.gpio(.named("doorbell"), activeLow: true)),
        ("gpio:doorbell:active-high", .gpio(.named("doorbell"), activeLow: false)),
        ("gpio:doorbell:ACTIVE-HIGH", .gpio(.named("doorbell"), activeLow: false)),
        ("gpio:doorbell:active-low", .gpio(.named("doorbell"), activeLow: true)),
        ("gpio:gpiochip0:17", .gpio(.chip("gpiochip0", offset: 17), activeLow: true)),
        ("gpio:0:3:active-high", .gpio(.chip("0", offset: 3), activeLow: false)),
        ("gpio:pinctrl-bcm2711:22", .gpio(.chip("pinctrl-bcm2711", offset: 22), activeLow: true)),
        ("evdev:/dev/input/event3", .evdev(path: "/dev/input/event3", keyCode: nil)),
        ("evdev:/dev/input/event3:148", .evdev(path: "/dev/input/event3", keyCode: 148)),
        ("evdev:/dev/input/by-id/usb-Doorbell-event-kbd:28", .evdev(path: "/dev/input/by-id/usb-Doorbell-event-kbd", keyCode: 28)),
    ])
    func parses(text: String, expected: DoorbellInput) throws {
        let input = try DoorbellInput(parsing: text)
        #expect(input == expected)
        // The description reads back as the same input.
        #expect(try DoorbellInput(parsing: input.description) == expected)
    }

    @Test("Bad button texts are refused with a sentence naming the text and what is expected", arguments: [
        ("doorbell", "must start with gpio: (a GPIO line) or evdev:"),
        ("gpio:", "the line name is empty"),
        ("gpio::3", "the chip is empty"),
        ("gpio:gpiochip0:x", "'x' is not a line offset"),
        ("gpio:gpiochip0:-1", "'-1' is not a line offset"),
        ("gpio:a:b:c", "too many ':'-separated parts"),
        ("evdev:", "must be a path such as /dev/input/event3"),
        ("evdev:event3", "must be a path such as /dev/input/event3"),
        ("evdev:/dev/input/event3:KEY_PROG1", "'KEY_PROG1' is not a key code"),
        ("evdev:/dev/input/event3:0", "'0' is not a key code"),
        ("evdev:/dev/input/event3:99999", "'99999' is not a key code"),
    ])
    func refuses(text: String, reason: String) {
        do {
            _ = try DoorbellInput(parsing: text)
            Issue.record("\(text) was accepted")
        } catch {
            guard case .invalidButton(let got, _) = error else {
                Issue.record("\(text): \(error)")
                return
            }
            #expect(got == text)
            let sentence = error.description
            #expect(sentence.hasPrefix("The doorbell button '\(text)' cannot be used: "), "\(sentence)")
            #expect(sentence.contains(reason), "\(sentence)")
            #expect(sentence.hasSuffix("."))
        }
    }

    @Test("External chime texts: a line name or a chip and offset; anything else is refused")
    func externalChime() throws {
        #expect(try GPIOLineAddress(parsingExternalChime: "gpio:chime") == .named("chime"))
        #expect(try GPIOLineAddress(parsingExternalChime: "gpio:gpiochip1:4") == .chip("gpiochip1", offset: 4))
        #expect(GPIOLineAddress.chip("gpiochip1", offset: 4).description == "gpio:gpiochip1:4")
        for bad in ["chime", "evdev:/dev/input/event1", "gpio:", "gpio:chip:x", "gpio:chime:active-high"] {
            #expect(throws: DoorbellError.self, "\(bad)") { try GPIOLineAddress(parsingExternalChime: bad) }
            do {
                _ = try GPIOLineAddress(parsingExternalChime: bad)
            } catch {
                #expect(error.description.hasPrefix("The external chime '\(bad)' cannot be used: "), "\(error)")
            }
        }
    }

    @Test("A missing line and a missing chip are clear errors at start (this host has no such GPIO)")
    func missingLines() {
        let missingName = DoorbellError.lineNotFound("no-such-doorbell-line")
        #expect(missingName.description.contains("no-such-doorbell-line") && missingName.description.contains("gpioinfo"))
        #expect(throws: DoorbellError.lineNotFound("camo-test-no-such-line")) {
            try ExternalChime(line: .named("camo-test-no-such-line"), logger: .init(label: "test"))
        }
        do {
            _ = try ExternalChime(line: .chip("camo-no-such-chip", offset: 0), logger: .init(label: "test"))
            Issue.record("a missing chip was accepted")
        } catch {
            guard case .chipUnavailable(let chip, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(chip == "camo-no-such-chip")
            #expect(error.description.contains("gpiodetect"))
        }
    }
}
