import CamoSystem
import Foundation
import Logging

/// Why `camo-agent usb up|down` refused or failed. Every case says what to do.
public enum USBGadgetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// configfs is not mounted and could not be mounted.
    case noConfigfs(String)
    /// configfs has no usb_gadget directory: libcomposite is missing.
    case noLibcomposite(String)
    /// The machine has no USB device controller.
    case noUDC
    /// The UDC asked for does not exist.
    case udcNotFound(String, available: [String])
    /// Our gadget already exists.
    case alreadyUp(udc: String)
    /// There is no gadget of ours to take down.
    case notUp
    /// The NCM function could not be created (usb_f_ncm missing).
    case noNCMFunction(String)
    /// Binding to the UDC failed (another gadget holds it, say).
    case cannotBind(udc: String, String)
    /// Unbinding from the UDC failed; nothing was removed.
    case cannotUnbind(udc: String, String)
    /// Another step failed; everything made so far was removed again (or what remains is named).
    case failed(String, leftBehind: [String])

    public var description: String {
        switch self {
        case .noConfigfs(let detail):
            "configfs is not available (\(detail)). It is needed to make a USB gadget: check that the kernel has CONFIG_CONFIGFS_FS and that /sys/kernel/config can be mounted (run as root)."
        case .noLibcomposite(let detail):
            "The kernel's USB gadget support (libcomposite) is not available (\(detail)). Install the kernel modules for your kernel, or run `modprobe libcomposite` as root and see why it fails."
        case .noUDC:
            "This machine has no USB device controller (nothing in /sys/class/udc), so it cannot act as a USB device. Use a board with a USB device or OTG port (on a Raspberry Pi, add dtoverlay=dwc2 to config.txt and reboot), or stream over the network."
        case .udcNotFound(let name, let available):
            "There is no USB device controller called \(name) (available: \(available.isEmpty ? "none" : available.joined(separator: ", "))). Use one of those, or leave the name out to take the first one."
        case .alreadyUp(let udc):
            "The camo USB gadget is already up (\(udc.isEmpty ? "made but not bound to a controller" : "bound to \(udc)")). Run `camo-agent usb status` to see it, or `camo-agent usb down` first."
        case .notUp:
            "The camo USB gadget is not up, so there is nothing to take down. `camo-agent usb status` shows the state."
        case .noNCMFunction(let detail):
            "The kernel cannot make a CDC-NCM network function (\(detail)): the usb_f_ncm module is missing. Install the kernel modules for your kernel. Nothing was left behind."
        case .cannotBind(let udc, let detail):
            "Could not bind the gadget to \(udc) (\(detail)). Is another gadget bound to it? `ls /sys/kernel/config/usb_gadget` shows them. Nothing was left behind."
        case .cannotUnbind(let udc, let detail):
            "Could not unbind the gadget from \(udc) (\(detail)); nothing was removed. Try `echo > /sys/kernel/config/usb_gadget/camo-agent/UDC` as root, then `camo-agent usb down` again."
        case .failed(let detail, let leftBehind):
            leftBehind.isEmpty
                ? "Making the USB gadget failed (\(detail)); everything made so far was removed again. The kernel log (dmesg) may say why; fix that and run `camo-agent usb up` again."
                : "Making or removing the USB gadget failed (\(detail)), and these could not be removed: \(leftBehind.joined(separator: ", ")). Remove them by hand (rmdir, deepest first)."
        }
    }
}

/// What is true about the gadget now.
public struct USBGadgetStatus: Sendable, Equatable, Codable {
    /// Whether our gadget directory exists.
    public var present: Bool
    /// The UDC it is bound to ("" when not bound).
    public var udc: String
    /// The UDC's state ("configured" once a USB host has set it up), when bound.
    public var udcState: String?
    /// The gadget's network interface, once bound.
    public var interface: String?
    /// Whether the interface has carrier (a host is connected and the link is up).
    public var carrier: Bool?
    /// The IPv4 address the agent's end takes.
    public var agentIPv4: String
    /// The IPv4 address the studio's end takes.
    public var studioIPv4: String
    /// The USB device controllers on this machine.
    public var controllers: [String]
}

/// Makes and removes the agent's configfs USB gadget: one configuration with one CDC-NCM function.
///
/// `up` checks everything it can before it makes anything, makes the gadget step by step and, when a step fails,
/// removes what it made in reverse order, so no half-made gadget is left behind. `down` unbinds and removes it.
public struct USBGadget: Sendable {
    /// Where configfs is mounted.
    public var configfs = "/sys/kernel/config"
    /// The class directory listing USB device controllers.
    public var udcClass = "/sys/class/udc"
    /// The class directory of network interfaces.
    public var netClass = "/sys/class/net"
    /// The gadget directory name under usb_gadget.
    public var name = "camo-agent"
    /// The function instance name (`ncm.<instance>`).
    public var functionName = "ncm.camo"
    /// The identity written into the gadget.
    public var identity: USBLinkIdentity
    /// The filesystem.
    public var filesystem: any GadgetFilesystem
    /// Loads a kernel module or mounts configfs (see ``KernelStep``); returns nil on success or why it failed.
    public var kernel: @Sendable (KernelStep) -> String?
    /// How often binding is tried while the kernel answers EBUSY. Right after a UDC driver loads,
    /// /sys/class/udc/NAME exists a moment before its gadget is on the gadget bus, and binding in that moment fails
    /// with EBUSY ("couldn't find an available UDC or it's busy"); a unit started by the UDC's appearance hits
    /// exactly that. Measured in the VM: `modprobe dummy_hcd` then `usb up` at once.
    public var bindAttempts = 20
    /// The pause between two tries to bind (100 ms; tests make it instant).
    public var bindRetryPause: @Sendable () -> Void = { usleep(100_000) }

    /// Something `up` may need the kernel to do before the gadget can be made.
    public enum KernelStep: Sendable, Equatable {
        /// Mount configfs at the given path.
        case mountConfigfs(String)
        /// Load a module.
        case loadModule(String)
    }

    /// A gadget manager for `identity` on `filesystem`.
    public init(identity: USBLinkIdentity, filesystem: any GadgetFilesystem = SystemGadgetFilesystem(),
                kernel: @escaping @Sendable (KernelStep) -> String? = USBGadget.systemKernel) {
        self.identity = identity
        self.filesystem = filesystem
        self.kernel = kernel
    }

    var gadgetsDirectory: String { configfs + "/usb_gadget" }
    var gadgetDirectory: String { gadgetsDirectory + "/" + name }
    var functionDirectory: String { gadgetDirectory + "/functions/" + functionName }
    var configDirectory: String { gadgetDirectory + "/configs/c.1" }

    /// The USB device controllers, sorted.
    public var controllers: [String] { filesystem.list(udcClass).sorted() }

    /// The gadget's state now.
    public func status() -> USBGadgetStatus {
        let present = filesystem.exists(gadgetDirectory)
        let udc = present ? (filesystem.read(gadgetDirectory + "/UDC") ?? "") : ""
        var status = USBGadgetStatus(
            present: present, udc: udc, udcState: nil, interface: nil, carrier: nil,
            agentIPv4: identity.agentIPv4, studioIPv4: identity.studioIPv4, controllers: controllers)
        if !udc.isEmpty { status.udcState = filesystem.read(udcClass + "/" + udc + "/state") }
        if present, let interface = interfaceName() {
            status.interface = interface
            status.carrier = filesystem.read(netClass + "/" + interface + "/carrier").map { $0 == "1" }
        }
        return status
    }

    /// The name of the gadget's network interface, once the function is bound and the kernel made it.
    public func interfaceName() -> String? {
        guard let name = filesystem.read(functionDirectory + "/ifname"), !name.isEmpty, !name.contains("%"),
              !name.contains("unnamed"), filesystem.exists(netClass + "/" + name)
        else { return nil }
        return name
    }

    /// Makes the gadget and binds it to `udc` (default: the first controller). Returns the UDC it bound to.
    @discardableResult
    public func up(udc requested: String? = nil, logger: Logger) throws(USBGadgetError) -> String {
        // Everything that can be checked first is checked before anything is made.
        try ensureConfigfs(logger: logger)
        if filesystem.exists(gadgetDirectory) {
            throw .alreadyUp(udc: filesystem.read(gadgetDirectory + "/UDC") ?? "")
        }
        let available = controllers
        guard !available.isEmpty else { throw .noUDC }
        let udc: String
        if let requested {
            guard available.contains(requested) else { throw .udcNotFound(requested, available: available) }
            udc = requested
        } else {
            udc = available[0]
        }

        var undo: [Undo] = []
        do throws(GadgetFilesystemError) {
            try makeDirectory(gadgetDirectory, &undo)
            try filesystem.write(USBLinkIdentity.hex(identity.vendorId), to: gadgetDirectory + "/idVendor")
            try filesystem.write(USBLinkIdentity.hex(identity.productId), to: gadgetDirectory + "/idProduct")
            try filesystem.write(USBLinkIdentity.hex(identity.deviceRelease), to: gadgetDirectory + "/bcdDevice")
            try filesystem.write("0x0200", to: gadgetDirectory + "/bcdUSB")
            let strings = gadgetDirectory + "/strings/0x409"
            try makeDirectory(strings, &undo)
            try filesystem.write(identity.manufacturer, to: strings + "/manufacturer")
            try filesystem.write(identity.product, to: strings + "/product")
            try filesystem.write(identity.serialNumber, to: strings + "/serialnumber")
            try makeDirectory(configDirectory, &undo)
            try makeDirectory(configDirectory + "/strings/0x409", &undo)
            try filesystem.write("CDC NCM (camo-agent)", to: configDirectory + "/strings/0x409/configuration")
            try filesystem.write("250", to: configDirectory + "/MaxPower")
        } catch {
            throw rollback(undo, because: "\(error)", logger: logger)
        }
        do throws(GadgetFilesystemError) {
            try makeDirectory(functionDirectory, &undo)
        } catch {
            _ = kernel(.loadModule("usb_f_ncm"))
            do throws(GadgetFilesystemError) {
                try makeDirectory(functionDirectory, &undo)
            } catch {
                let leftBehind = undoAll(undo, logger: logger)
                if !leftBehind.isEmpty { throw .failed("\(error)", leftBehind: leftBehind) }
                throw .noNCMFunction("\(error)")
            }
        }
        do throws(GadgetFilesystemError) {
            try filesystem.write(USBLinkIdentity.formatMAC(identity.agentMAC), to: functionDirectory + "/dev_addr")
            try filesystem.write(USBLinkIdentity.formatMAC(identity.studioMAC), to: functionDirectory + "/host_addr")
            let link = configDirectory + "/" + functionName
            try filesystem.makeLink(at: link, to: functionDirectory)
            undo.append(.link(link))
        } catch {
            throw rollback(undo, because: "\(error)", logger: logger)
        }
        do throws(GadgetFilesystemError) {
            try bind(to: udc, logger: logger)
        } catch {
            let leftBehind = undoAll(undo, logger: logger)
            if !leftBehind.isEmpty { throw .failed("\(error)", leftBehind: leftBehind) }
            throw .cannotBind(udc: udc, "\(error)")
        }
        logger.info("USB gadget up", metadata: ["udc": "\(udc)", "gadget": "\(gadgetDirectory)"])
        return udc
    }

    /// Writes `udc` to the gadget's UDC file, trying again while the kernel answers EBUSY (see ``bindAttempts``).
    private func bind(to udc: String, logger: Logger) throws(GadgetFilesystemError) {
        var attempt = 1
        while true {
            do throws(GadgetFilesystemError) {
                try filesystem.write(udc, to: gadgetDirectory + "/UDC")
                if attempt > 1 { logger.info("The UDC took the gadget after \(attempt) tries (EBUSY before)", metadata: ["udc": "\(udc)"]) }
                return
            } catch where error.code == EBUSY && attempt < bindAttempts {
                attempt += 1
                bindRetryPause()
            }
        }
    }

    /// Unbinds and removes the gadget. Returns what it removed, in order.
    @discardableResult
    public func down(logger: Logger) throws(USBGadgetError) -> [String] {
        guard filesystem.exists(gadgetDirectory) else { throw .notUp }
        var removed: [String] = []
        if let udc = filesystem.read(gadgetDirectory + "/UDC"), !udc.isEmpty {
            do throws(GadgetFilesystemError) {
                try filesystem.write("", to: gadgetDirectory + "/UDC")
                removed.append("binding to \(udc)")
            } catch {
                throw .cannotUnbind(udc: udc, "\(error)")
            }
        }
        // Whatever is there, deepest first: links in the configurations, their strings, the configurations,
        // the functions, the gadget's strings, the gadget.
        var undo: [Undo] = [.directory(gadgetDirectory)]
        for language in filesystem.list(gadgetDirectory + "/strings") {
            undo.append(.directory(gadgetDirectory + "/strings/" + language))
        }
        for function in filesystem.list(gadgetDirectory + "/functions") {
            undo.append(.directory(gadgetDirectory + "/functions/" + function))
        }
        for config in filesystem.list(gadgetDirectory + "/configs") {
            let directory = gadgetDirectory + "/configs/" + config
            undo.append(.directory(directory))
            for language in filesystem.list(directory + "/strings") {
                undo.append(.directory(directory + "/strings/" + language))
            }
            for entry in filesystem.list(directory) where filesystem.isLink(directory + "/" + entry) {
                undo.append(.link(directory + "/" + entry))
            }
        }
        let leftBehind = undoAll(undo, logger: logger)
        guard leftBehind.isEmpty else { throw .failed("removing the gadget", leftBehind: leftBehind) }
        removed += undo.reversed().map(\.path)
        logger.info("USB gadget down", metadata: ["gadget": "\(gadgetDirectory)"])
        return removed
    }

    // MARK: Steps

    enum Undo {
        case directory(String)
        case link(String)

        var path: String {
            switch self {
            case .directory(let path), .link(let path): path
            }
        }
    }

    private func makeDirectory(_ path: String, _ undo: inout [Undo]) throws(GadgetFilesystemError) {
        try filesystem.makeDirectory(path)
        undo.append(.directory(path))
    }

    /// Undoes `undo` in reverse; returns the paths that could not be removed.
    private func undoAll(_ undo: [Undo], logger: Logger) -> [String] {
        var leftBehind: [String] = []
        for item in undo.reversed() {
            do throws(GadgetFilesystemError) {
                switch item {
                case .directory(let path): try filesystem.removeDirectory(path)
                case .link(let path): try filesystem.removeLink(path)
                }
            } catch {
                if error.code == ENOENT { continue }
                logger.error("Cannot remove a part of the USB gadget", metadata: ["error": "\(error)"])
                leftBehind.append(item.path)
            }
        }
        return leftBehind
    }

    private func rollback(_ undo: [Undo], because reason: String, logger: Logger) -> USBGadgetError {
        .failed(reason, leftBehind: undoAll(undo, logger: logger))
    }

    private func ensureConfigfs(logger: Logger) throws(USBGadgetError) {
        if filesystem.exists(gadgetsDirectory) { return }
        if filesystem.list(configfs).isEmpty {
            if let failure = kernel(.mountConfigfs(configfs)) {
                throw .noConfigfs("\(configfs) is empty and mounting configfs there failed: \(failure)")
            }
        }
        if filesystem.exists(gadgetsDirectory) { return }
        if let failure = kernel(.loadModule("libcomposite")) {
            throw .noLibcomposite("\(gadgetsDirectory) is missing and `modprobe libcomposite` failed: \(failure)")
        }
        guard filesystem.exists(gadgetsDirectory) else {
            throw .noLibcomposite("\(gadgetsDirectory) is still missing after loading libcomposite")
        }
    }

    /// Loads modules with `modprobe` and mounts configfs with mount(2).
    public static let systemKernel: @Sendable (KernelStep) -> String? = { step in
        switch step {
        case .mountConfigfs(let path):
            return mount("none", path, "configfs", 0, nil) == 0 ? nil : SystemCallError.message(errno)
        case .loadModule(let module):
            let process = Process()
            let candidates = ["/usr/sbin/modprobe", "/sbin/modprobe"]
            guard let modprobe = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
                return "modprobe is not installed (package kmod)"
            }
            process.executableURL = URL(fileURLWithPath: modprobe)
            process.arguments = ["-q", module]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            do { try process.run() } catch { return "\(error)" }
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                let text = message.trimmingCharacters(in: .whitespacesAndNewlines)
                return text.isEmpty ? "modprobe \(module) exited with \(process.terminationStatus)" : text
            }
            return nil
        }
    }
}
