import Foundation

/// What powers this host, read once from the kernel's power-supply class (`/sys/class/power_supply`): wired power,
/// the host's own battery, its charge and whether it is charging. The host side of the camera model's PowerSource
/// (`wiredPresent`, `batPresent`, `batChargeLevel`, charging state).
///
/// Only supplies that power the host count. The kernel marks a peripheral's battery (a wireless mouse, a keyboard, a
/// gamepad) with `scope` = `Device`; those entries are ignored, whatever their type. A missing `scope`, `System` or
/// `Unknown` is the host's, as upower reads it. Entries of type `UPS` are ignored too (they describe a UPS, not
/// the host), and so are batteries whose `present` is 0 (an empty battery bay).
///
/// A host with no battery of its own is wired, whatever else it reports: a desktop, a server or a VM often has no
/// power-supply entry at all, and runs from the wall all the same. ``wiredAssumed`` says when that is the only
/// reason ``wiredPresent`` is true.
public struct PowerSource: Sendable, Equatable, Codable {
    /// What the host runs on now.
    public enum Source: String, Sendable, Equatable, Codable {
        /// External power (mains, USB, a dock), with or without a battery.
        case wired
        /// Its battery alone.
        case battery
    }

    /// How much charge is left, in the camera model's three steps.
    public enum ChargeLevel: String, Sendable, Equatable, Codable {
        /// Enough: more than 20 %, and `capacity_level` (when known) Normal, High or Full.
        case ok
        /// Low: `capacity_level` Low, or 6 to 20 %.
        case warning
        /// Nearly empty: `capacity_level` Critical, or 5 % or less.
        case critical

        /// 0 for ok, 1 for warning, 2 for critical.
        var severity: Int {
            switch self {
            case .ok: return 0
            case .warning: return 1
            case .critical: return 2
            }
        }
    }

    /// What the battery is doing, from its `status` attribute.
    public enum ChargingState: String, Sendable, Equatable, Codable {
        /// `Charging`.
        case charging
        /// `Discharging`: the host runs from it.
        case discharging
        /// `Full`.
        case full
        /// `Not charging`: plugged in but held (a charge threshold, a hot battery).
        case notCharging
        /// `Unknown`, a missing or unreadable attribute, or anything else.
        case unknown
    }

    /// Whether external power is present: a host supply that is not a battery (type `Mains`, `USB`, `USB_C`,
    /// `USB_PD`, `Wireless`, ...) reports `online` other than 0, or the host battery is charging, or the host has no
    /// battery at all (then ``wiredAssumed`` is true as well).
    public var wiredPresent: Bool
    /// True when ``wiredPresent`` rests only on the host having no battery: no supply said that it is online.
    public var wiredAssumed: Bool
    /// Whether the host has a battery of its own (at least one entry in ``batteries``).
    public var batteryPresent: Bool
    /// The charge left, when a battery is present and says enough to tell: the worse of what the kernel's
    /// `capacity_level` says (Critical → critical, Low → warning, Normal/High/Full → ok) and what ``batteryPercent``
    /// says (``chargeLevel(percent:)``). Either alone decides when the other is unknown.
    ///
    /// The worse of the two, because `capacity_level` lags: ACPI reports Normal until the firmware's alarm (often
    /// 5 to 10 %), and some drivers (test_power among them) always report Normal. With several batteries, the
    /// kernel's word is the mildest of theirs (one full battery is enough), and the percentage is the combined one.
    public var batteryChargeLevel: ChargeLevel?
    /// The charge left in percent (0...100), when known. Several batteries are combined by energy (or charge) when
    /// every one reports it, else their percentages are averaged.
    public var batteryPercent: Int?
    /// What the battery is doing, when a battery is present. With several: charging if any is, else discharging if
    /// any is, else full if all are, else not charging if any is, else unknown.
    public var chargingState: ChargingState?
    /// The names of the host's batteries under the power-supply directory (e.g. `BAT0`), sorted.
    public var batteries: [String]

    /// Creates a reading from its parts.
    public init(
        wiredPresent: Bool, wiredAssumed: Bool = false, batteryPresent: Bool, batteryChargeLevel: ChargeLevel? = nil,
        batteryPercent: Int? = nil, chargingState: ChargingState? = nil, batteries: [String] = []
    ) {
        self.wiredPresent = wiredPresent
        self.wiredAssumed = wiredAssumed
        self.batteryPresent = batteryPresent
        self.batteryChargeLevel = batteryChargeLevel
        self.batteryPercent = batteryPercent
        self.chargingState = chargingState
        self.batteries = batteries
    }

    /// What the host runs on now: ``Source/wired`` when ``wiredPresent``, else ``Source/battery``.
    public var source: Source { wiredPresent ? .wired : .battery }

    /// Reads the power supplies under `root` (one directory, or a link to one, per supply, as the kernel lays them
    /// out). Never fails: a missing or unreadable directory reads as a host without supplies (wired, assumed), and a
    /// missing, unreadable or garbled attribute as unknown.
    public static func read(root: String = "/sys/class/power_supply") -> PowerSource {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
        var externalOnline = false
        var batteries: [Battery] = []
        for name in names where !name.hasPrefix(".") {
            let directory = root + "/" + name
            // Type and scope first: a peripheral's attributes are never read (some, such as a HID battery's
            // capacity, make the kernel ask the device, which can take seconds).
            guard let type = attribute(directory, "type"), isHostScope(attribute(directory, "scope")) else { continue }
            switch type {
            case "Battery":
                if let present = attribute(directory, "present").flatMap(Int.init), present == 0 { continue }
                batteries.append(Battery(name: name, directory: directory))
            case "UPS":
                continue
            default:
                if let online = attribute(directory, "online").flatMap(Int.init), online != 0 { externalOnline = true }
            }
        }
        guard !batteries.isEmpty else {
            return PowerSource(wiredPresent: true, wiredAssumed: !externalOnline, batteryPresent: false)
        }
        let state = combinedState(batteries.map(\.state))
        let percent = combinedPercent(batteries)
        // The kernel's word for the set: the mildest battery's, known only when every battery gave one.
        let kernelLevels = batteries.compactMap(\.kernelLevel)
        let fromKernel = kernelLevels.count == batteries.count ? kernelLevels.min(by: { $0.severity < $1.severity }) : nil
        let fromPercent = percent.map(chargeLevel(percent:))
        let level = [fromKernel, fromPercent].compactMap { $0 }.max { $0.severity < $1.severity }
        return PowerSource(
            wiredPresent: externalOnline || state == .charging, wiredAssumed: false, batteryPresent: true,
            batteryChargeLevel: level, batteryPercent: percent, chargingState: state, batteries: batteries.map(\.name))
    }

    /// The camera model's level for a percentage: 5 % or less critical, 20 % or less warning, else ok.
    public static func chargeLevel(percent: Int) -> ChargeLevel {
        percent <= 5 ? .critical : percent <= 20 ? .warning : .ok
    }

    // MARK: Reading

    /// One host battery's attributes.
    private struct Battery {
        var name: String
        var state: ChargingState
        var percent: Int?
        var kernelLevel: ChargeLevel?
        /// energy_now/energy_full (µWh) or charge_now/charge_full (µAh), when both are readable.
        var amount: (now: Int, full: Int)?

        init(name: String, directory: String) {
            self.name = name
            state = PowerSource.chargingState(PowerSource.attribute(directory, "status"))
            percent = PowerSource.attribute(directory, "capacity").flatMap(Int.init).flatMap { $0 < 0 ? nil : min($0, 100) }
            switch PowerSource.attribute(directory, "capacity_level") {
            case "Critical": kernelLevel = .critical
            case "Low": kernelLevel = .warning
            case "Normal", "High", "Full": kernelLevel = .ok
            default: kernelLevel = nil
            }
            for (now, full) in [("energy_now", "energy_full"), ("charge_now", "charge_full")] {
                if let current = PowerSource.attribute(directory, now).flatMap(Int.init),
                   let capacity = PowerSource.attribute(directory, full).flatMap(Int.init), current >= 0, capacity > 0 {
                    amount = (current, capacity)
                    break
                }
            }
        }
    }

    /// A supply of the host: `scope` missing, `System` or `Unknown`; not `Device` (a peripheral's).
    private static func isHostScope(_ scope: String?) -> Bool { scope != "Device" }

    private static func chargingState(_ status: String?) -> ChargingState {
        switch status {
        case "Charging": return .charging
        case "Discharging": return .discharging
        case "Full": return .full
        case "Not charging": return .notCharging
        default: return .unknown
        }
    }

    private static func combinedState(_ states: [ChargingState]) -> ChargingState {
        if states.contains(.charging) { return .charging }
        if states.contains(.discharging) { return .discharging }
        if states.allSatisfy({ $0 == .full }) { return .full }
        if states.contains(.notCharging) { return .notCharging }
        return .unknown
    }

    private static func combinedPercent(_ batteries: [Battery]) -> Int? {
        if batteries.count == 1 { return batteries[0].percent }
        let amounts = batteries.compactMap(\.amount)
        if amounts.count == batteries.count {
            let now = amounts.reduce(0) { $0 + $1.now }, full = amounts.reduce(0) { $0 + $1.full }
            return min(100, Int((Double(now) * 100 / Double(full)).rounded()))
        }
        let percents = batteries.compactMap(\.percent)
        guard !percents.isEmpty else { return nil }
        return Int((Double(percents.reduce(0, +)) / Double(percents.count)).rounded())
    }

    /// One attribute's text without the trailing newline; nil when missing, unreadable, empty or not text.
    private static func attribute(_ directory: String, _ name: String) -> String? {
        guard let text = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
