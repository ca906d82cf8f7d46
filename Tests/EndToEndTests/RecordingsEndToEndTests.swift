import Foundation
import Glibc
import Testing

/// Recordings in the running agent, seen from outside: the synthetic moving block makes motion events, the agent
/// cuts clips of the shared H.264 rendition as the recording mode says, ffprobe reads every clip, `camo-agent clips`
/// and `GET /api/clips` list them and serve the same bytes, a SIGKILL mid-write leaves an index and files that agree,
/// and bad settings and a full disk are reported without stopping the agent.
@Suite("End to end: recordings", .serialized, .timeLimit(.minutes(3)))
struct RecordingsEndToEndTests {
    /// The picture recordings take (a debug agent keeps 30 fps at this size).
    static let size = ["--live-size", "320x180"]

    @Test("event-based clips of test:block: each starts with its pre-roll, lasts pre-roll + the event within one GOP (2 s), never passes the longest clip, has H.264 and AAC that ffprobe counts; camo-agent clips and GET /api/clips list them, GET /api/clips/ID gives the file's bytes; a paired studio lists and fetches them (camo-studio clips), an unpaired one is refused; images mode keeps a JPEG per event; transportStatus inactive is the video off")
    func eventClips() throws {
        guard let curl = tool("curl"), let ffprobe = tool("ffprobe") else { return }
        let scratch = try Scratch("rec-events")
        let agentBinary = try Binaries.path("camo-agent")
        let agentName = PairingEndToEndTests.unique("rec-agent")
        let agent = try AgentProcess(scratch: scratch, extra: [
            "--name", agentName, "--camera", "test:block", "--web", "--web-host", "127.0.0.1", "--web-port", "0", "--web-loopback-without-token",
        ] + Self.size)
        defer { agent.stop() }
        let live = try LiveViewEndToEndTests.liveStatus(agent)
        let pageURL = try #require(live["pageURL"] as? String, "the page is off: \(live)")
        let webPort = try #require(URLComponents(string: pageURL)?.port, "no port in \(pageURL)")
        // Short events (10 s, 2 s apart), and a clip per event with 3 s of pre-roll. Motion off and on again ends the
        // event that began at start (under the old time control) and starts one under the new.
        try Self.set(agent, [
            ("motionTimeControl.maxDuration", "10"), ("motionTimeControl.blindDuration", "2"), ("recordingTriggerOptions.maxPreRollLen", "3"),
            ("recordingTriggerOptions.maxDuration", "30"), ("recordingTriggerOptions.blindDuration", "0"), ("selectedRecordingMode", "eventBased"),
            ("enabledEventTriggers", "none"), ("enabledEventTriggers", "motion"),
        ])
        // The first clip is the event cut short by turning motion off; the second's pre-roll is what the feed had since
        // the mode was chosen; the third has its full pre-roll.
        var listing: Listing?
        try waitFor("three clips", seconds: 60) {
            listing = try Self.clips(agent)
            return (listing?.clips.count ?? 0) >= 3
        }
        let clips = try #require(listing).clips
        let events = try Self.events(agent)
        for clip in clips {
            let probe = try Self.probe(ffprobe, clip.path(in: agent))
            print(String(format: "recording %d: %.2f s, pre-roll %.2f s, events %@, %@ %d frames, audio %@ (%@)", clip.id, clip.duration,
                         clip.preRoll ?? -1, "\(clip.eventIDs)", probe.video ?? "-", probe.frames, probe.audio ?? "none", clip.endReason ?? "-"))
            #expect(clip.kind == "video" && clip.mode == "eventBased" && clip.trigger == "motion" && clip.hasAudio)
            #expect(clip.endReason == "eventEnded", "\(clip.endReason ?? "nil")")
            #expect(clip.duration <= 30)
            #expect(probe.video == "h264" && probe.audio == "aac" && probe.width == 320 && probe.height == 180, "\(probe)")
            #expect(abs(Double(probe.frames) - clip.duration * 30) <= 3, "\(probe.frames) frames in \(clip.duration) s")
            #expect(clip.mode(in: agent) == 0o600, "a recording is readable by others: \(String(clip.mode(in: agent), radix: 8))")
            // Pre-roll + activity: from the clip's own first frame to the end of its last event. (A clip that began
            // after its event, chosen while the event ran, has no pre-roll: its length is not that.)
            guard (clip.preRoll ?? 0) > 0 else { continue }
            let spans = clip.eventIDs.compactMap { events[$0] }
            guard let start = spans.map(\.start).min(), let end = spans.compactMap(\.end).max(), let preRoll = clip.preRoll else {
                Issue.record("recording \(clip.id)'s events \(clip.eventIDs) are not all known and ended: \(events)")
                continue
            }
            let expected = preRoll + Double(end - start) / 1e9
            #expect(abs(clip.duration - expected) < 2, "recording \(clip.id): \(clip.duration) s, pre-roll + activity \(expected) s")
        }
        let withPreRoll = clips.filter { ($0.preRoll ?? 0) >= 3 }
        #expect(!withPreRoll.isEmpty && withPreRoll.allSatisfy { ($0.preRoll ?? 0) < 3 + 2 }, "pre-rolls: \(clips.map { $0.preRoll ?? -1 })")

        // The page's API: the same list, the same bytes, clear errors.
        let api = try run(curl, ["-sk", "https://127.0.0.1:\(webPort)/api/clips"])
        let apiListing = try JSONSerialization.jsonObject(with: Data(api.stdout.utf8)) as? [String: Any]
        let apiIDs = (apiListing?["clips"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        #expect(Set(clips.map(\.id)).isSubset(of: Set(apiIDs)), "GET /api/clips: \(api.stdout.prefix(500))")
        let first = try #require(clips.last)
        let downloaded = scratch.path + "/download.mp4"
        let fetch = try run(curl, ["-sk", "-o", downloaded, "-w", "%{http_code} %{content_type}", "https://127.0.0.1:\(webPort)/api/clips/\(first.id)"])
        #expect(fetch.stdout == "200 video/mp4", "\(fetch)")
        #expect(FileManager.default.contentsEqual(atPath: downloaded, andPath: first.path(in: agent)), "the download differs from the file")
        let missing = try run(curl, ["-sk", "-w", " %{http_code}", "https://127.0.0.1:\(webPort)/api/clips/999999"])
        #expect(missing.stdout.hasSuffix(" 404") && missing.stdout.contains("there is no recording 999999"), "\(missing)")
        let bad = try run(curl, ["-sk", "-w", " %{http_code}", "https://127.0.0.1:\(webPort)/api/clips/abc"])
        #expect(bad.stdout.hasSuffix(" 400"), "\(bad)")
        // The table.
        let table = try run(agentBinary, ["clips", "--state-dir", agent.stateDir])
        #expect(table.status == 0 && table.stdout.contains("mode eventBased") && table.stdout.contains(first.file), "\(table)")

        // A paired studio lists them and fetches one over its session (protocol 1.4, pieces of 256 KiB, several in
        // flight); a recording that is not there and an unpaired studio are refused with the reason.
        try Repository.avahiUp()
        let studioState = scratch.path + "/studio"
        let (pairing, payload) = try PairingEndToEndTests.studioPair(scratch: scratch, state: studioState, name: "Clips-Studio")
        let paired = try run(agentBinary, ["pair", "--file", payload, "--state-dir", agent.stateDir])
        #expect(paired.status == 0, "camo-agent pair: \(paired)")
        #expect(pairing.wait(seconds: 15) == 0, "camo-studio pair: \(pairing.stderr)")
        let studioBinary = try Binaries.path("camo-studio")
        let target = ["--agent", agentName, "--connect", "127.0.0.1:\(agent.port)", "--state-dir", studioState]
        let studioList = try run(studioBinary, ["clips", "--json"] + target)
        let studioIDs = ((try? JSONSerialization.jsonObject(with: Data(studioList.stdout.utf8))) as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        #expect(studioList.status == 0 && Set(clips.map(\.id)).isSubset(of: Set(studioIDs)), "camo-studio clips: \(studioList)")
        let table2 = try run(studioBinary, ["clips"] + target)
        #expect(table2.status == 0 && table2.stdout.contains("motion") && table2.stdout.contains("\(first.id)  "), "\(table2)")
        // The largest, so it comes in several pieces.
        let largest = try #require(clips.max { $0.bytes < $1.bytes })
        let viaStudio = scratch.path + "/via-studio.mp4"
        let fetched = try run(studioBinary, ["clips", "--fetch", "\(largest.id)", "--out", viaStudio] + target)
        #expect(fetched.status == 0 && fetched.stdout.contains("written to \(viaStudio)"), "\(fetched)")
        #expect(FileManager.default.contentsEqual(atPath: viaStudio, andPath: largest.path(in: agent)), "the studio's copy differs from the file")
        print("camo-studio clips --fetch \(largest.id): \(largest.bytes) bytes, \((largest.bytes + 262_143) / 262_144) pieces")
        let gonePath = scratch.path + "/gone.mp4"
        let gone = try run(studioBinary, ["clips", "--fetch", "999999", "--out", gonePath] + target)
        #expect(gone.status == 1 && gone.stderr.contains("there is no recording 999999"), "\(gone)")
        #expect(!FileManager.default.fileExists(atPath: gonePath) && !FileManager.default.fileExists(atPath: gonePath + ".partial"))
        let unpaired = try run(studioBinary, ["clips", "--connect", "127.0.0.1:\(agent.port)"])
        #expect(unpaired.status == 1 && unpaired.stderr.contains("only a paired studio"), "\(unpaired)")

        // Images: a JPEG of the picture the studios see, for the next event (motion off and on starts one at once).
        try Self.set(agent, [("selectedRecordingMode", "images"), ("enabledEventTriggers", "none"), ("enabledEventTriggers", "motion")])
        var still: Clip?
        try waitFor("a still", seconds: 20) {
            still = try Self.clips(agent).clips.first { $0.kind == "image" }
            return still != nil
        }
        let image = try #require(still)
        #expect(image.mode == "images" && image.trigger == "motion" && image.file.hasSuffix(".jpg") && !image.hasAudio)
        let stillProbe = try Self.probe(ffprobe, image.path(in: agent))
        // At the picture's full size (the synthetic camera's 1280x720), not the clips' rendition.
        #expect(stillProbe.video == "mjpeg" && stillProbe.width == 1280 && stillProbe.height == 720, "\(stillProbe)")
        let stillFetch = try run(curl, ["-sk", "-o", "/dev/null", "-w", "%{http_code} %{content_type}", "https://127.0.0.1:\(webPort)/api/clips/\(image.id)"])
        #expect(stillFetch.stdout == "200 image/jpeg", "\(stillFetch)")

        // The camera-wide transport status: inactive is the video off (live view refused with the reason, no new
        // events), active brings it all back.
        try Self.set(agent, [("transportStatus", "inactive")])
        let refused = try run(curl, [
            "-sk", "-X", "POST", "-H", "Content-Type: application/sdp", "--data", "v=0", "-w", " %{http_code}", "https://127.0.0.1:\(webPort)/whep",
        ])
        #expect(refused.stdout.hasSuffix(" 503") && refused.stdout.contains("transportStatus"), "\(refused)")
        #expect(try agent.status()["paused"] as? Bool == true)
        func starts() throws -> Int {
            try run(agentBinary, ["events", "--state-dir", agent.stateDir, "--json"]).stdout.split(separator: "\n").filter { $0.contains(#""kind":"started""#) }.count
        }
        let startsWhileOff = try starts()
        Thread.sleep(forTimeInterval: 4)
        #expect(try starts() == startsWhileOff, "an event started while the video was off")
        try Self.set(agent, [("transportStatus", "active")])
        try waitFor("an event once the video is back", seconds: 20) { try starts() > startsWhileOff }
        #expect(try agent.status()["paused"] as? Bool == false)
    }

    @Test("the longest clip caps an event that goes on (10 s of a 30 s event); audio muted for recordings: no audio track; SIGKILL in the middle of a continuous segment, restart: the partial file is removed, the index and the files agree, every clip plays")
    func capMuteAndCrash() throws {
        guard let ffprobe = tool("ffprobe") else { return }
        let scratch = try Scratch("rec-crash")
        var agent = try AgentProcess(scratch: scratch, extra: ["--camera", "test:block"] + Self.size)
        try Self.set(agent, [
            ("motionTimeControl.maxDuration", "30"), ("recordingTriggerOptions.maxPreRollLen", "0"), ("recordingTriggerOptions.maxDuration", "10"),
            ("recordingMicrophoneMuted", "true"), ("selectedRecordingMode", "eventBased"),
        ])
        var listing: Listing?
        try waitFor("a capped clip", seconds: 30) {
            listing = try Self.clips(agent)
            return !(listing?.clips.isEmpty ?? true)
        }
        let capped = try #require(listing?.clips.first)
        let cappedProbe = try Self.probe(ffprobe, capped.path(in: agent))
        print(String(format: "capped recording: %.3f s, %d frames, %d bytes, %@", capped.duration, cappedProbe.frames, capped.bytes, capped.endReason ?? "-"))
        #expect(capped.endReason == "maxLength")
        #expect(capped.duration <= 10 && capped.duration > 9.9, "\(capped.duration) s")
        #expect(!capped.hasAudio && cappedProbe.video == "h264" && cappedProbe.audio == nil, "\(cappedProbe)")
        #expect(cappedProbe.frames <= 300 && cappedProbe.frames >= 297, "\(cappedProbe.frames) frames")

        // Continuous 10 s segments; killed 5 s into the second.
        try Self.set(agent, [("recordingTriggerOptions.segmentDuration", "10"), ("recordingMicrophoneMuted", "false"), ("selectedRecordingMode", "continuous")])
        try waitFor("a continuous segment", seconds: 30) { try Self.clips(agent).clips.contains { $0.mode == "continuous" } }
        Thread.sleep(forTimeInterval: 5)
        let recordings = agent.stateDir + "/recordings"
        let partials = try FileManager.default.contentsOfDirectory(atPath: recordings).filter { $0.hasSuffix(".partial") }
        #expect(partials.count == 1, "the segment being written: \(partials)")
        kill(agent.pid, SIGKILL)
        agent.process.waitUntilExit()

        agent = try AgentProcess(scratch: scratch, extra: ["--camera", "test:block"] + Self.size)
        defer { agent.stop() }
        let after = try Self.clips(agent)
        print("after SIGKILL: recovery \(after.recovery), \(after.clips.count) clips")
        #expect(after.recovery["partialFilesRemoved"] == 1, "\(after.recovery)")
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: recordings).filter { $0.hasSuffix(".mp4") })
        // The restarted agent goes on recording (continuous): its new partial is not in either list.
        #expect(files == Set(after.clips.map(\.file)), "files \(files.sorted()) index \(after.clips.map(\.file).sorted())")
        for clip in after.clips {
            let probe = try Self.probe(ffprobe, clip.path(in: agent))
            #expect(probe.status == 0 && probe.video == "h264" && probe.frames > 0, "recording \(clip.id): \(probe)")
        }
    }

    @Test("refused with a reason, nothing changed: an event mode without the detectors, a longest clip not in the list, an unknown mode; a full disk loses that clip with the error shown while the agent streams on; --no-recordings says so")
    func badInput() throws {
        let scratch = try Scratch("rec-bad")
        let agentBinary = try Binaries.path("camo-agent")
        do {
            let agent = try AgentProcess(scratch: scratch, extra: ["--no-events"] + Self.size, stateName: "noevents")
            defer { agent.stop() }
            let eventMode = try run(agentBinary, ["settings", "--state-dir", agent.stateDir, "selectedRecordingMode", "eventBased"])
            #expect(eventMode.status != 0 && eventMode.stderr.contains("needs the event detectors"), "\(eventMode)")
            let length = try run(agentBinary, ["settings", "--state-dir", agent.stateDir, "recordingTriggerOptions.maxDuration", "20"])
            #expect(length.status != 0 && length.stderr.contains("10, 15, 30, 60, 120, 180"), "\(length)")
            let unknown = try run(agentBinary, ["settings", "--state-dir", agent.stateDir, "selectedRecordingMode", "forever"])
            #expect(unknown.status != 0 && unknown.stderr.contains("continuous"), "\(unknown)")
            #expect(try Self.clips(agent).mode == "liveView")
        }
        do {
            let agent = try AgentProcess(scratch: scratch, extra: ["--no-recordings"] + Self.size, stateName: "norecordings")
            defer { agent.stop() }
            let clips = try run(agentBinary, ["clips", "--state-dir", agent.stateDir])
            #expect(clips.status != 0 && clips.stderr.contains("--no-recordings"), "\(clips)")
        }
        // A 256 kB disk: the first segment (about 1 MB) cannot be kept.
        guard getuid() == 0 else {
            print("recordings: the full-disk case needs root to mount a small tmpfs; skipped (CI runs as root)")
            return
        }
        let disk = scratch.path + "/small"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk])
        try #require(mounted.status == 0, "mount: \(mounted)")
        defer { _ = try? run("/bin/umount", ["-l", disk]) }
        let agent = try AgentProcess(scratch: scratch, extra: ["--recordings-dir", disk, "--live-bitrate-kbps", "4000"] + Self.size, stateName: "full")
        defer { agent.stop() }
        try Self.set(agent, [("recordingTriggerOptions.segmentDuration", "10"), ("selectedRecordingMode", "continuous")])
        var listing: Listing?
        try waitFor("a lost recording", seconds: 30) {
            listing = try Self.clips(agent)
            return (listing?.failed ?? 0) >= 1
        }
        print("full disk: \(listing?.lastError ?? "no error")")
        // The next segment fails the same way; the agent lives on through both.
        try waitFor("a second lost recording", seconds: 30) { (try Self.clips(agent).failed) >= 2 }
        #expect(listing?.lastError?.contains("space") == true || listing?.lastError?.contains("No space") == true, "\(listing?.lastError ?? "nil")")
        #expect(agent.process.isRunning)
        #expect((try? agent.status())?["state"] != nil, "the agent stopped answering")
    }

    /// A CMAF ingest receiver over HTTPS: each PUT's body is stored under its name in the store directory unless the
    /// `fail` file exists (then it answers 500); each request appends `<status> <path> <bytes> <Authorization>` to the log.
    static let ingest = """
        import http.server, os, ssl, sys
        port, cert, key, store, fail, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'
            def do_PUT(self):
                body = self.rfile.read(int(self.headers['Content-Length']))
                status = 500 if os.path.exists(fail) else 201
                if status == 201:
                    with open(os.path.join(store, os.path.basename(self.path)), 'wb') as out:
                        out.write(body)
                with open(log_path, 'a') as log:
                    log.write('%d %s %d %s\\n' % (status, self.path, len(body), self.headers.get('Authorization', '-')))
                self.send_response(status)
                self.send_header('Content-Length', '0')
                self.end_headers()
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(('127.0.0.1', port), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.serve_forever()
        """

    /// A CA (`NAME-ca.pem`) and a certificate it signed for 127.0.0.1 (`NAME-server.pem`, `NAME-server.key`).
    static func makeCA(_ name: String, in directory: String) throws {
        let openssl = "/usr/bin/openssl"
        let base = directory + "/" + name
        for arguments in [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", base + "-ca.key", "-out", base + "-ca.pem",
             "-days", "2", "-subj", "/CN=camo test CA \(name)"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", base + "-server.key", "-out", base + "-server.csr",
             "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", base + "-server.csr", "-CA", base + "-ca.pem", "-CAkey", base + "-ca.key", "-CAcreateserial", "-days", "2",
             "-out", base + "-server.pem", "-extfile", base + "-ext.cnf"],
        ] {
            try "subjectAltName=IP:127.0.0.1\n".write(toFile: base + "-ext.cnf", atomically: true, encoding: .utf8)
            let result = try run(openssl, arguments)
            try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }

    static func startIngest(_ scratch: Scratch, name: String, port: Int) throws -> (process: Process, store: String, fail: String, log: String) {
        let script = scratch.path + "/ingest.py"
        try Self.ingest.write(toFile: script, atomically: true, encoding: .utf8)
        let store = scratch.path + "/\(name)-store", fail = scratch.path + "/\(name)-fail", log = scratch.path + "/\(name).log"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "\(port)", scratch.path + "/\(name)-server.pem", scratch.path + "/\(name)-server.key", store, fail, log]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        return (process, store, fail, log)
    }

    @Test("push transports: every recording reaches an HTTPS ingest with its own CA as CMAF that ffprobe reads, through a minute of HTTP 500 (nothing lost, nothing dropped), with the bearer token, which never shows; a server whose certificate comes from another CA gets nothing; a local directory gets copies; http:// and a missing directory are refused")
    func pushTransports() throws {
        guard let ffprobe = tool("ffprobe") else { return }
        let scratch = try Scratch("rec-push")
        let agentBinary = try Binaries.path("camo-agent")
        try Self.makeCA("good", in: scratch.path)
        try Self.makeCA("other", in: scratch.path)
        let goodPort = EventDeliveryTests.freePort(), otherPort = goodPort + 1
        let good = try Self.startIngest(scratch, name: "good", port: goodPort)
        defer { EventDeliveryTests.end(good.process) }
        let other = try Self.startIngest(scratch, name: "other", port: otherPort)
        defer { EventDeliveryTests.end(other.process) }
        let copies = scratch.path + "/copies"
        try FileManager.default.createDirectory(atPath: copies, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: good.fail, contents: nil)  // 500 until removed
        let failingSince = Date()

        let agent = try AgentProcess(scratch: scratch, extra: ["--camera", "test:block"] + Self.size)
        defer { agent.stop() }
        func transports(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try run(agentBinary, ["transports", "--state-dir", agent.stateDir] + arguments)
        }
        let token = "sekret-\(UUID().uuidString.prefix(8))"
        let goodCA = scratch.path + "/good-ca.pem"
        for arguments in [
            ["add", "https://127.0.0.1:\(goodPort)/ingest/camo", "--ca", goodCA, "--token", token],
            ["add", "https://127.0.0.1:\(otherPort)/ingest/camo", "--ca", goodCA],
            ["add", copies],
        ] {
            let added = try transports(arguments)
            try #require(added.status == 0, "transports \(arguments): \(added)")
        }
        let plain = try transports(["add", "http://127.0.0.1:\(goodPort)/ingest"])
        #expect(plain.status != 0 && plain.stderr.contains("must be https://"), "\(plain)")
        // A directory that is not there, or a file, is refused when it is added (not at the first push).
        let missing = try transports(["add", scratch.path + "/no-such-dir"])
        #expect(missing.status != 0 && missing.stderr.contains("does not exist"), "\(missing)")
        let aFile = try transports(["add", goodCA])
        #expect(aFile.status != 0 && aFile.stderr.contains("not a directory"), "\(aFile)")
        try Self.set(agent, [("recordingTriggerOptions.segmentDuration", "10"), ("selectedRecordingMode", "continuous")])

        // A minute of 500s from the ingest while segments are kept (and retried, backing off to 30 s), then it recovers.
        try waitFor("a minute of recordings", seconds: 100) {
            try Self.clips(agent).clips.count >= 5 && Date().timeIntervalSince(failingSince) >= 60
        }
        let failing = try String(contentsOfFile: good.log, encoding: .utf8)
        let refusals = failing.split(separator: "\n").filter { $0.hasPrefix("500 ") }.count
        #expect(refusals >= 5, "the ingest was tried \(refusals) times in a minute of failing: \(failing)")
        try FileManager.default.removeItem(atPath: good.fail)
        print(String(format: "push: the ingest answered 500 for %.0f s (%d tries); then 200", Date().timeIntervalSince(failingSince), refusals))
        let kept = try Self.clips(agent).clips
        try waitFor("every kept recording at the ingest", seconds: 60) {
            kept.allSatisfy { FileManager.default.fileExists(atPath: good.store + "/" + $0.file) }
        }
        for clip in kept {
            #expect(FileManager.default.contentsEqual(atPath: good.store + "/" + clip.file, andPath: clip.path(in: agent)), "\(clip.file) differs")
            let probe = try Self.probe(ffprobe, good.store + "/" + clip.file)
            #expect(probe.status == 0 && probe.video == "h264" && probe.audio == "aac", "\(clip.file): \(probe)")
            #expect(FileManager.default.contentsEqual(atPath: copies + "/" + clip.file, andPath: clip.path(in: agent)), "the directory's copy of \(clip.file)")
        }
        let log = try String(contentsOfFile: good.log, encoding: .utf8)
        #expect(log.split(separator: "\n").filter { $0.hasPrefix("201 ") }.allSatisfy { $0.hasSuffix("Bearer \(token)") }, "\(log)")
        #expect(log.contains("201 /ingest/camo/"), "\(log)")

        let listing = try transports(["--json"])
        #expect(!listing.stdout.contains(token) && listing.stdout.contains("(set)"), "the token shows: \(listing.stdout)")
        #expect(!agent.log.contains(token), "the token is in the agent's log")
        let list = try JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [[String: Any]] ?? []
        let untrusted = list.first { $0["id"] as? Int == 2 }?["delivery"] as? [String: Any]
        print("push: good \(list.first?["delivery"] ?? "-"); other CA: \(untrusted ?? [:])")
        let goodDelivery = list.first { $0["id"] as? Int == 1 }?["delivery"] as? [String: Any]
        #expect(goodDelivery?["dropped"] as? Int == 0 && goodDelivery?["failed"] as? Int == 0, "\(goodDelivery ?? [:])")
        #expect((goodDelivery?["delivered"] as? Int ?? 0) >= kept.count, "\(goodDelivery ?? [:])")
        #expect(untrusted?["delivered"] as? Int == 0 && (untrusted?["lastError"] as? String)?.contains("TLS") == true, "\(untrusted ?? [:])")
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.store).isEmpty, "the other CA's server got a recording")

        // Inactive: nothing more is pushed to it; remove; an unknown id.
        let inactive = try transports(["status", "1", "inactive"])
        #expect(inactive.status == 0 && inactive.stdout.contains("inactive"), "\(inactive)")
        let removed = try transports(["remove", "2"])
        #expect(removed.status == 0 && !removed.stdout.contains("\(otherPort)"), "\(removed)")
        let unknown = try transports(["remove", "9"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no push transport 9"), "\(unknown)")
    }

    // MARK: Helpers

    struct Clip {
        var id: Int
        var file: String
        var kind: String
        var mode: String
        var trigger: String?
        var eventIDs: [Int]
        var preRoll: Double?
        var duration: Double
        var hasAudio: Bool
        var endReason: String?
        var bytes: Int

        func path(in agent: AgentProcess) -> String { agent.stateDir + "/recordings/" + file }

        func mode(in agent: AgentProcess) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path(in: agent)))?[.posixPermissions] as? Int) ?? -1
        }
    }

    struct Listing {
        var mode: String
        var failed: Int
        var lastError: String?
        var recovery: [String: Int]
        var clips: [Clip]
    }

    /// Sets each name to its value with `camo-agent settings`, in order.
    static func set(_ agent: AgentProcess, _ values: [(String, String)]) throws {
        for (name, value) in values {
            let result = try run(try Binaries.path("camo-agent"), ["settings", "--state-dir", agent.stateDir, name, value])
            try #require(result.status == 0, "settings \(name) \(value): \(result)")
        }
    }

    /// `camo-agent clips --json`, parsed.
    static func clips(_ agent: AgentProcess) throws -> Listing {
        let result = try run(try Binaries.path("camo-agent"), ["clips", "--json", "--state-dir", agent.stateDir])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            let status = object["recording"] as? [String: Any], let list = object["clips"] as? [[String: Any]]
        else { throw CheckError("camo-agent clips --json: \(result)") }
        let clips = list.compactMap { item -> Clip? in
            guard let id = item["id"] as? Int, let file = item["file"] as? String, let kind = item["kind"] as? String,
                let mode = item["mode"] as? String, let duration = item["durationSeconds"] as? Double
            else { return nil }
            return Clip(
                id: id, file: file, kind: kind, mode: mode, trigger: item["trigger"] as? String, eventIDs: item["eventIDs"] as? [Int] ?? [],
                preRoll: item["preRollSeconds"] as? Double, duration: duration, hasAudio: item["hasAudio"] as? Bool ?? false,
                endReason: item["endReason"] as? String, bytes: item["bytes"] as? Int ?? 0)
        }
        return Listing(
            mode: status["mode"] as? String ?? "", failed: status["failed"] as? Int ?? 0, lastError: status["lastError"] as? String,
            recovery: status["recovery"] as? [String: Int] ?? [:], clips: clips)
    }

    /// Every event the agent kept, by id: its start and (once ended) end, ns.
    static func events(_ agent: AgentProcess) throws -> [Int: (start: UInt64, end: UInt64?)] {
        let result = try run(try Binaries.path("camo-agent"), ["events", "--state-dir", agent.stateDir, "--json"])
        var events: [Int: (start: UInt64, end: UInt64?)] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let event = object["event"] as? [String: Any], let id = event["id"] as? Int, let start = (event["start"] as? NSNumber)?.uint64Value
            else { continue }
            events[id] = (start, (event["end"] as? NSNumber)?.uint64Value ?? events[id]?.end)
        }
        return events
    }

    struct Probe {
        var status: Int32
        var video: String?
        var audio: String?
        var width = 0
        var height = 0
        var frames = 0
    }

    /// ffprobe's streams of a file, video frames counted.
    static func probe(_ ffprobe: String, _ path: String) throws -> Probe {
        let result = try run(ffprobe, ["-v", "error", "-count_frames", "-show_streams", "-of", "json", path])
        var probe = Probe(status: result.status)
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        for stream in object?["streams"] as? [[String: Any]] ?? [] {
            if stream["codec_type"] as? String == "video" {
                probe.video = stream["codec_name"] as? String
                probe.width = stream["width"] as? Int ?? 0
                probe.height = stream["height"] as? Int ?? 0
                probe.frames = Int(stream["nb_read_frames"] as? String ?? "") ?? 0
            } else if stream["codec_type"] as? String == "audio" {
                probe.audio = stream["codec_name"] as? String
            }
        }
        return probe
    }
}
