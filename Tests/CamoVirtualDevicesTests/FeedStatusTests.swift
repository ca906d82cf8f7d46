import CamoVirtualDevices
import Foundation
import Testing

/// The feed status files `camo-studio camera` writes and `camo-studio status` reads.
@Suite("feed status")
struct FeedStatusTests {
    /// A fresh scratch folder; the feeds directory is made inside it by the first write.
    func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "camo-feeds-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A pid no process can have (above the kernel's largest pid_max, 2^22).
    let deadPID: Int32 = 99_999_999

    func sample(pid: Int32 = getpid(), updatedAt: Date = Date(timeIntervalSince1970: 1_800_000_000)) -> FeedStatus {
        FeedStatus(
            pid: pid, agentName: "desk", agentID: "a1b2", address: "192.168.1.20:47800", state: .streaming,
            videoDevice: "/dev/video10", videoFormat: "YUYV 1280x720 at 30 fps", microphoneDevice: "hw:CamoMic,1,0",
            framesWritten: 9_000, reconnectingFramesWritten: 30, reconnects: 0,
            last: .init(framesPerSecond: 29.94, kilobitsPerSecond: 4_200.2, latencyMilliseconds: 41.3), updatedAt: updatedAt)
    }

    @Test("the summary line names the agent, device, format, state, figures and microphone")
    func summaryLine() {
        #expect(sample().summary == "desk → /dev/video10 (YUYV 1280x720 at 30 fps, streaming, 29.9 fps, 4200 kbit/s, 41 ms) and hw:CamoMic,1,0")
        var connecting = sample()
        connecting.state = .connecting
        connecting.last = nil
        connecting.microphoneDevice = nil
        #expect(connecting.summary == "desk → /dev/video10 (YUYV 1280x720 at 30 fps, connecting)")
        var reconnecting = sample()
        reconnecting.state = .reconnecting
        reconnecting.reconnects = 2
        reconnecting.last?.latencyMilliseconds = nil
        #expect(reconnecting.summary == "desk → /dev/video10 (YUYV 1280x720 at 30 fps, reconnecting, 29.9 fps, 4200 kbit/s, 2 reconnects) and hw:CamoMic,1,0")
        var sound = sample()
        sound.microphoneDevice = "pipewire:camo-desk"
        sound.microphoneDriftPPM = -12.4
        sound.microphoneBufferMilliseconds = 120
        sound.microphoneUnderruns = 0
        #expect(sound.summary.hasSuffix(" and pipewire:camo-desk (drift -12 ppm, buffer 120 ms)"), "\(sound.summary)")
        sound.microphoneUnderruns = 3
        #expect(sound.summary.hasSuffix(" and pipewire:camo-desk (drift -12 ppm, buffer 120 ms, 3 underruns)"), "\(sound.summary)")
    }

    @Test("write then list gives back the same status, in an owner-only PID.json with no temporary left")
    func writeAndList() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let directory = folder + "/camo-studio/feeds"
        let file = FeedStatusFile(directory: directory)
        #expect(file.path == directory + "/\(getpid()).json")
        try file.write(sample())
        var status = sample()
        status.framesWritten += 30
        try file.write(status)
        #expect(FeedStatusFile.list(directory: directory) == [status])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["\(getpid()).json"])
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let directoryMode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? NSNumber
        #expect(directoryMode?.intValue == 0o700)
        let json = try String(contentsOfFile: file.path, encoding: .utf8)
        #expect(json.contains("\"state\" : \"streaming\""))
        #expect(json.contains("\"updatedAt\" : \"2027-01-15T08:00:00Z\""))
    }

    @Test("remove deletes the file, and list then finds nothing")
    func removeAtExit() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = FeedStatusFile(directory: folder + "/feeds")
        try file.write(sample())
        file.remove()
        file.remove()
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(FeedStatusFile.list(directory: folder + "/feeds").isEmpty)
    }

    @Test("list skips and deletes the files of processes that are gone, and leftover temporaries of them")
    func deadProcessesAreCleanedUp() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let directory = folder + "/feeds"
        let live = FeedStatusFile(directory: directory)
        let dead = FeedStatusFile(directory: directory, pid: deadPID)
        try live.write(sample())
        try dead.write(sample(pid: deadPID))
        _ = FileManager.default.createFile(atPath: directory + "/.\(deadPID).json.tmp", contents: Data("{".utf8))
        _ = FileManager.default.createFile(atPath: directory + "/notes.txt", contents: Data())
        #expect(FeedStatusFile.list(directory: directory).map(\.pid) == [getpid()])
        #expect(!FileManager.default.fileExists(atPath: dead.path))
        #expect(!FileManager.default.fileExists(atPath: directory + "/.\(deadPID).json.tmp"))
        #expect(FileManager.default.fileExists(atPath: directory + "/notes.txt"), "only status files are touched")
        #expect(FileManager.default.fileExists(atPath: live.path))
    }

    @Test("an unreadable file of a running process is skipped, not deleted")
    func corruptFileIsSkipped() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = FeedStatusFile(directory: folder)
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("{ half".utf8))
        #expect(FeedStatusFile.list(directory: folder).isEmpty)
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    @Test("list of a missing directory is empty")
    func missingDirectory() {
        #expect(FeedStatusFile.list(directory: "/nonexistent/camo-studio/feeds").isEmpty)
    }

    @Test("the directory is $XDG_RUNTIME_DIR/camo-studio/feeds, else /tmp/camo-studio-UID/feeds")
    func defaultDirectory() {
        #expect(FeedStatusFile.defaultDirectory(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/camo-studio/feeds")
        #expect(FeedStatusFile.defaultDirectory(environment: [:]) == "/tmp/camo-studio-\(getuid())/feeds")
        #expect(FeedStatusFile.defaultDirectory(environment: ["XDG_RUNTIME_DIR": ""]) == "/tmp/camo-studio-\(getuid())/feeds")
    }

    @Test("a directory that is a link is refused (the /tmp fallback is shared)")
    func linkedDirectoryIsRefused() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/elsewhere", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/feeds", withDestinationPath: folder + "/elsewhere")
        #expect(throws: (any Error).self) { try FeedStatusFile(directory: folder + "/feeds").write(sample()) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/elsewhere").isEmpty)
    }

    @Test("status lines: the feeds (a stale one marked), else 'no camera' with the loopback devices and cards")
    func reportLines() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let fresh = sample(updatedAt: now.addingTimeInterval(-1))
        let stale = sample(pid: 2, updatedAt: now.addingTimeInterval(-42))
        let devices = LoopbackModuleState(
            parameters: [:], requestedNumbers: [10, -1], exclusiveCaps: [true, false],
            devices: [VideoNode(number: 10, name: "Camo", isLoopback: true)])
        let card = LoopbackSoundCard(index: 1, id: "CamoMic")
        #expect(VirtualDevicesReport(feeds: [fresh, stale], loopback: devices, soundCards: [card]).lines(now: now) == [
            fresh.summary, stale.summary + " (not updated for 42 s)",
        ])
        #expect(VirtualDevicesReport(feeds: [], loopback: devices, soundCards: [card]).lines(now: now) == [
            "no camo-studio camera is running",
            "v4l2loopback devices: /dev/video10 \"Camo\" (exclusive_caps on)",
            "snd-aloop card CamoMic: programs record from hw:CamoMic,1,0",
        ])
        #expect(VirtualDevicesReport(feeds: [], loopback: nil, soundCards: []).lines(now: now) == ["no camo-studio camera is running"])
    }

    @Test("gather reads the loopback state through the host")
    func gatherThroughTheHost() throws {
        let folder = try scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let host = FakeLoopbackHost()
        host.loadLoopback([(10, false, "Camo")])
        host.addVideoNode(0, name: "vivid-000-vid-cap")
        host.loadAloop(id: "CamoMic", index: 1)
        let report = VirtualDevicesReport.gather(directory: folder, host: host)
        #expect(report.feeds.isEmpty)
        #expect(report.loopback?.devices == [VideoNode(number: 10, name: "Camo", isLoopback: true)], "vivid's node is not a loopback one")
        #expect(report.soundCards == [LoopbackSoundCard(index: 1, id: "CamoMic")])
        #expect(report.lines()[1] == "v4l2loopback devices: /dev/video10 \"Camo\" (exclusive_caps off: Chrome does not list it)")
    }
}
