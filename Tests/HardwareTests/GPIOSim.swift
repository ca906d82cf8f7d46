import Foundation
import Glibc
import Testing

/// The kernel's GPIO simulator (gpio-sim, configured through configfs) in the VM: one chip labelled
/// `camo-doorbell` with two lines, `doorbell` (line 0: the button, pulled up, so idle high and pressed low) and
/// `chime` (line 1: the wired chime's output, as the consumer drives it). Debian's 6.1 kernel has no gpio-sim of
/// its own; scripts/vm-test builds it once (scripts/build-gpio-sim) and passes its path as CAMO_GPIO_SIM_KO.
final class GPIOSim {
    static let configRoot = "/sys/kernel/config/gpio-sim"
    static let config = configRoot + "/camo-doorbell"

    /// The chip's name (`gpiochipN`) and its sysfs folder (with `sim_gpio0`, `sim_gpio1`).
    private(set) var chip = ""
    private(set) var sysfs = ""

    /// Loads gpio-sim (the kernel's own module, else the one scripts/build-gpio-sim made); nil when loaded, else why
    /// it cannot be.
    static func load() -> String? {
        if (try? shell("grep -q '^gpio_sim ' /proc/modules"))?.status == 0 { return nil }
        let stock = try? shell("modprobe gpio-sim 2>&1")
        if stock?.status == 0 { return nil }
        guard let module = ProcessInfo.processInfo.environment["CAMO_GPIO_SIM_KO"], !module.isEmpty else {
            return "this kernel has no gpio-sim module (modprobe gpio-sim: \((stock?.stdout ?? "").trimmingCharacters(in: .whitespacesAndNewlines))), "
                + "and CAMO_GPIO_SIM_KO is not set: scripts/vm-test builds one with scripts/build-gpio-sim and sets it"
        }
        guard FileManager.default.fileExists(atPath: module) else { return "CAMO_GPIO_SIM_KO=\(module) does not exist" }
        let loaded = try? shell("modprobe configfs 2>/dev/null; insmod '\(module)' 2>&1")
        guard loaded?.status == 0 else {
            return "insmod \(module) failed: \(loaded.map { $0.stdout + $0.stderr } ?? "could not run insmod"); dmesg: "
                + ((try? shell("dmesg | tail -n 5"))?.stdout ?? "")
        }
        return nil
    }

    /// Loads the module, or cancels the running test (printing why) when this kernel cannot have gpio-sim.
    static func requireLoaded() throws {
        if let reason = load() {
            print("HW doorbell: SKIPPED: gpio-sim cannot be loaded: \(reason)")
            try Test.cancel("gpio-sim cannot be loaded: \(reason)")
        }
    }

    /// Creates the chip (removing one left over from an earlier test) and pulls the button up.
    init() throws {
        let script = """
            set -e
            mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
            C=\(Self.config)
            if [ -d $C ]; then echo 0 > $C/live; rmdir $C/bank0/line0 $C/bank0/line1 $C/bank0 $C; fi
            mkdir $C $C/bank0
            echo 2 > $C/bank0/num_lines
            echo camo-doorbell > $C/bank0/label
            mkdir $C/bank0/line0 $C/bank0/line1
            echo doorbell > $C/bank0/line0/name
            echo chime > $C/bank0/line1/name
            echo 1 > $C/live
            """
        let made = try shell(script)
        guard made.status == 0 else { throw HardwareError("gpio-sim: creating the chip failed: \(made)") }
        try locate()
        try write("pull-up", to: sysfs + "/sim_gpio0/pull")
    }

    /// Finds the live chip's names (they change when the chip comes back).
    private func locate() throws {
        let device = try String(contentsOfFile: Self.config + "/dev_name", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        chip = try String(contentsOfFile: Self.config + "/bank0/chip_name", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        sysfs = "/sys/devices/platform/\(device)/\(chip)"
        guard FileManager.default.fileExists(atPath: sysfs + "/sim_gpio1/value") else {
            throw HardwareError("gpio-sim: no \(sysfs)/sim_gpio1/value")
        }
    }

    /// The path of a line's simulated level (what a consumer drives on an output).
    func valuePath(line: Int) -> String { sysfs + "/sim_gpio\(line)/value" }

    /// Presses the button (pulls its line down: a falling edge).
    func press() throws { try write("pull-down", to: sysfs + "/sim_gpio0/pull") }

    /// Releases the button (pulls its line up again).
    func release() throws { try write("pull-up", to: sysfs + "/sim_gpio0/pull") }

    /// Takes the chip away (unplugged) or brings it back (as a new gpiochip, pulled up again).
    func setLive(_ live: Bool) throws {
        try write(live ? "1" : "0", to: Self.config + "/live")
        if live {
            try locate()
            try write("pull-up", to: sysfs + "/sim_gpio0/pull")
        }
    }

    /// Removes the chip.
    func remove() {
        let c = Self.config
        _ = try? shell("[ -d \(c) ] || exit 0; echo 0 > \(c)/live; rmdir \(c)/bank0/line0 \(c)/bank0/line1 \(c)/bank0 \(c)")
    }

    /// `gpioinfo` of the chip, for failure messages.
    func info() -> String { (try? shell("gpioinfo \(chip) 2>&1"))?.stdout ?? "(no gpioinfo)" }

    private func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HardwareError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        guard written >= 0 else { throw HardwareError("cannot write '\(text)' to \(path): \(String(cString: strerror(errno)))") }
    }
}

/// Watches a sysfs value file (a simulated line's level) by reading it every millisecond on its own thread, and
/// keeps each change with its CLOCK_MONOTONIC time.
final class LineWatcher: @unchecked Sendable {  // `state` is only touched under `lock`.
    private let lock = NSLock()
    private var changes: [(value: Int, time: UInt64)] = []
    private var stopping = false
    private let done = DispatchSemaphore(value: 0)
    private(set) var reads = 0

    init(path: String) {
        let thread = Thread { [self] in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            var last: Int?
            var buffer = [UInt8](repeating: 0, count: 8)
            while fd >= 0, !lock.withLock({ stopping }) {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
                let time = Hardware.monotonicNow()
                if n > 0 {
                    let value = buffer[0] == UInt8(ascii: "1") ? 1 : 0
                    lock.withLock {
                        reads += 1
                        if value != last { changes.append((value, time)) }
                    }
                    last = value
                }
                usleep(1_000)
            }
            if fd >= 0 { close(fd) }
            done.signal()
        }
        thread.start()
    }

    /// Every change so far (the first entry is the level when watching began).
    var history: [(value: Int, time: UInt64)] { lock.withLock { changes } }

    func stop() {
        guard !lock.withLock({ defer { stopping = true }; return stopping }) else { return }
        done.wait()
    }
}
