import CamoDoorbell
import Testing

/// The debouncer with explicit kernel times (ms here, ns inside).
@Suite("Button debouncer: edges to presses")
struct ButtonDebouncerTests {
    static func ms(_ value: Double) -> UInt64 { UInt64(value * 1_000_000) }
    static func down(_ at: Double) -> ButtonEdge { ButtonEdge(time: ms(at), pressed: true) }
    static func up(_ at: Double) -> ButtonEdge { ButtonEdge(time: ms(at), pressed: false) }

    /// Feeds `edges`, then settles at `settleAt` ms; every event in order.
    static func run(_ edges: [ButtonEdge], settleAt: Double? = nil, debouncer: ButtonDebouncer = ButtonDebouncer()) -> [ButtonEvent] {
        var debouncer = debouncer
        var events: [ButtonEvent] = []
        for edge in edges { events += debouncer.handle(edge) }
        if let settleAt, let event = debouncer.settle(now: ms(settleAt)) { events.append(event) }
        return events
    }

    @Test("A clean press is reported at its down edge, and its release once the button stayed up 30 ms, with the held time")
    func cleanPress() {
        var debouncer = ButtonDebouncer()
        #expect(debouncer.handle(Self.down(1_000)) == [.pressed(at: Self.ms(1_000))])
        #expect(debouncer.isPressed)
        #expect(debouncer.deadline == nil, "nothing is pending while the button is down")
        #expect(debouncer.handle(Self.up(1_300)).isEmpty)
        #expect(debouncer.deadline == Self.ms(1_330))
        #expect(debouncer.settle(now: Self.ms(1_329)) == nil, "29 ms up is not yet a release")
        let released = debouncer.settle(now: Self.ms(1_330))
        #expect(released == .released(pressedAt: Self.ms(1_000), at: Self.ms(1_300)))
        #expect(released?.held == Self.ms(300))
        #expect(!debouncer.isPressed)
        #expect(debouncer.deadline == nil)
        #expect(debouncer.settle(now: Self.ms(5_000)) == nil, "a release is reported once")
    }

    @Test("Bounce at the press and at the release: one press, released at the last up edge")
    func bouncyPress() {
        let edges = [
            Self.down(100), Self.up(101), Self.down(102.5), Self.up(104), Self.down(106),  // closing contact
            Self.up(400), Self.down(403), Self.up(405), Self.down(412), Self.up(420),  // opening contact
        ]
        let events = Self.run(edges, settleAt: 460)
        #expect(events == [.pressed(at: Self.ms(100)), .released(pressedAt: Self.ms(100), at: Self.ms(420))])
    }

    @Test("A release confirmed by the next edge: two presses 100 ms apart are two presses")
    func twoPresses() {
        let events = Self.run([Self.down(0.5), Self.up(50), Self.down(150), Self.up(200)], settleAt: 231)
        #expect(events == [
            .pressed(at: Self.ms(0.5)), .released(pressedAt: Self.ms(0.5), at: Self.ms(50)),
            .pressed(at: Self.ms(150)), .released(pressedAt: Self.ms(150), at: Self.ms(200)),
        ])
    }

    @Test("Up for 29 ms then down again is still the same press; 30 ms up makes the next down a new press")
    func debounceBoundary() {
        let same = Self.run([Self.down(10), Self.up(100), Self.down(129), Self.up(300)], settleAt: 400)
        #expect(same == [.pressed(at: Self.ms(10)), .released(pressedAt: Self.ms(10), at: Self.ms(300))])
        let two = Self.run([Self.down(10), Self.up(100), Self.down(130), Self.up(300)], settleAt: 400)
        #expect(two == [
            .pressed(at: Self.ms(10)), .released(pressedAt: Self.ms(10), at: Self.ms(100)),
            .pressed(at: Self.ms(130)), .released(pressedAt: Self.ms(130), at: Self.ms(300)),
        ])
    }

    @Test("A release settled by a timeout before a late-read bounce edge: the bounce's down edge is not a new press")
    func bounceAfterSettledRelease() {
        var debouncer = ButtonDebouncer()
        #expect(debouncer.handle(Self.down(0)) == [.pressed(at: 0)])
        #expect(debouncer.handle(Self.up(200)).isEmpty)
        // The watcher's timeout settles at 240 ms; an edge stamped 220 ms was still unread.
        #expect(debouncer.settle(now: Self.ms(240)) == .released(pressedAt: 0, at: Self.ms(200)))
        #expect(debouncer.handle(Self.down(220)).isEmpty, "within 30 ms of the release: its bounce")
        #expect(debouncer.handle(Self.up(225)).isEmpty)
        #expect(debouncer.handle(Self.down(300)) == [.pressed(at: Self.ms(300))], "a real press after it still counts")
    }

    @Test("Repeated edges of one level (a folded bounce) change nothing but the time it was last seen up")
    func repeatedLevels() {
        let events = Self.run([Self.down(0), Self.down(5), Self.up(100), Self.up(120), Self.up(125)], settleAt: 154)
        #expect(events == [.pressed(at: 0)], "up since 125 ms: not yet 30 ms at 154")
        let settled = Self.run([Self.down(0), Self.down(5), Self.up(100), Self.up(120), Self.up(125)], settleAt: 155)
        #expect(settled == [.pressed(at: 0), .released(pressedAt: 0, at: Self.ms(125))])
        #expect(Self.run([Self.up(10), Self.up(20)], settleAt: 100).isEmpty, "up edges while up are nothing")
    }

    @Test("A button already held when watching starts is no press, and its release reports nothing; the next press counts")
    func heldAtStart() {
        let debouncer = ButtonDebouncer(pressedAtStart: true, now: Self.ms(1_000))
        #expect(debouncer.isPressed)
        let events = Self.run([Self.up(1_500), Self.down(2_000), Self.up(2_100)], settleAt: 2_200, debouncer: debouncer)
        #expect(events == [.pressed(at: Self.ms(2_000)), .released(pressedAt: Self.ms(2_000), at: Self.ms(2_100))])
    }

    @Test("An edge stamped before the last one is taken at the last one's time")
    func outOfOrder() {
        let events = Self.run([Self.down(100), Self.up(50)], settleAt: 131)
        #expect(events == [.pressed(at: Self.ms(100)), .released(pressedAt: Self.ms(100), at: Self.ms(100))])
    }

    @Test("Another debounce time: 10 ms", arguments: [(9.0, 1), (10.0, 2)])
    func otherDebounce(gap: Double, presses: Int) {
        let debouncer = ButtonDebouncer(debounce: Self.ms(10))
        let events = Self.run([Self.down(0), Self.up(50), Self.down(50 + gap), Self.up(100)], settleAt: 200, debouncer: debouncer)
        #expect(events.filter { if case .pressed = $0 { true } else { false } }.count == presses)
    }

    @Test("A chattering contact (an edge every 2 ms for 200 ms) is one press")
    func chatter() {
        var edges: [ButtonEdge] = []
        for i in 0..<100 { edges.append(ButtonEdge(time: Self.ms(Double(i) * 2), pressed: i % 2 == 0)) }
        let events = Self.run(edges, settleAt: 500)
        #expect(events == [.pressed(at: 0), .released(pressedAt: 0, at: Self.ms(198))])
    }
}
