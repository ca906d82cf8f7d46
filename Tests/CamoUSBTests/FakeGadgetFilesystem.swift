import CamoUSB
import Foundation

/// An in-memory model of configfs (USB gadgets) and of the two sysfs class directories `USBGadget` reads, close
/// enough to the kernel's behaviour that ordering mistakes and half-made gadgets show:
///
/// - `mkdir usb_gadget/<g>` makes the gadget's attribute files (`UDC` empty, `idVendor`, ...) and its default
///   directories `strings`, `configs`, `functions`, `os_desc`; `mkdir strings/<lang>`, `configs/<name>.<n>`,
///   `configs/<c>/strings/<lang>` and `functions/ncm.<instance>` make their attributes too. Anything else made
///   under configfs is refused with EPERM, a function other than ncm (or ncm while ``ncmAvailable`` is off) with
///   ENOENT.
/// - Attribute files and default directories (“automatic” nodes) cannot be removed by hand and go with their
///   directory; `rmdir` of a directory that still holds directories or links made by hand fails with ENOTEMPTY,
///   and of a function some configuration still links to with EBUSY (stricter than the kernel, to catch order).
/// - Writing a missing attribute fails with ENOENT (configfs never creates files). Writing a UDC name to `UDC`
///   binds: the name must be listed in the UDC class directory (else ENODEV), not held by another gadget (EBUSY),
///   the gadget must not be bound already (EBUSY) and a configuration must link a function (ENODEV). Binding gives
///   each linked ncm function a network interface `usbN` under the net class directory (uevent with
///   `DEVTYPE=gadget`, carrier `0`), which goes away when the function's directory is removed. Writing "" unbinds
///   (ENODEV when not bound), and so does removing a link from a bound gadget's configuration.
///
/// ``failure`` is asked before every operation; a non-nil errno makes the operation fail with it (read-only
/// operations then report nothing). Every operation is logged in ``operations``.
final class FakeGadgetFilesystem: GadgetFilesystem, @unchecked Sendable {
    enum Kind: Equatable, CustomStringConvertible {
        case directory
        case file(String)
        case link(String)

        var description: String {
            switch self {
            case .directory: "dir"
            case .file(let content): "file \(content.debugDescription)"
            case .link(let target): "link -> \(target)"
            }
        }
    }

    struct Node: Equatable {
        var kind: Kind
        /// Made by the kernel (an attribute or a default directory), not by mkdir/symlink.
        var automatic: Bool
    }

    /// One logged operation.
    struct Operation: Equatable, CustomStringConvertible {
        var name: String
        var path: String
        var description: String { "\(name) \(path)" }
        var isMutating: Bool { FakeGadgetFilesystem.mutatingOperations.contains(name) }
    }

    static let mutatingOperations: Set<String> = ["write", "mkdir", "rmdir", "symlink", "unlink"]

    let configfs: String
    let udcClass: String
    let netClass: String

    private let lock = NSRecursiveLock()
    private var nodes: [String: Node] = [:]
    private var _ncmAvailable = true
    private var _failure: (@Sendable (String, String) -> Int32?)?
    private var _operations: [Operation] = []

    /// A fake with configfs at `configfs` (made as an empty directory; `usb_gadget` in it when
    /// `libcomposite`), the UDC class directory with `udcs` and the net class directory with `lo` and `eth0`.
    init(configfs: String = "/cfg", udcClass: String = "/udc", netClass: String = "/net",
         udcs: [String] = ["musb-hdrc.2.auto", "fe980000.usb"], libcomposite: Bool = true, ncmAvailable: Bool = true) {
        self.configfs = configfs
        self.udcClass = udcClass
        self.netClass = netClass
        self._ncmAvailable = ncmAvailable
        nodes["/"] = Node(kind: .directory, automatic: true)
        place(configfs, .directory)
        if libcomposite { place(configfs + "/usb_gadget", .directory) }
        place(udcClass, .directory)
        for udc in udcs { addUDC(udc) }
        place(netClass, .directory)
        addNetInterface("lo", uevent: "INTERFACE=lo\nIFINDEX=1", carrier: "1")
        addNetInterface("eth0", uevent: "INTERFACE=eth0\nIFINDEX=2", carrier: "1")
    }

    // MARK: Test controls

    /// Whether `mkdir functions/ncm.<x>` works (usb_f_ncm loaded).
    var ncmAvailable: Bool {
        get { lock.withLock { _ncmAvailable } }
        set { lock.withLock { _ncmAvailable = newValue } }
    }

    /// Asked with (operation, path) before every operation; an errno makes it fail.
    var failure: (@Sendable (String, String) -> Int32?)? {
        get { lock.withLock { _failure } }
        set { lock.withLock { _failure = newValue } }
    }

    /// Every operation so far.
    var operations: [Operation] { lock.withLock { _operations } }
    /// The mutating operations so far (write, mkdir, rmdir, symlink, unlink).
    var mutatingOperations: [Operation] { operations.filter(\.isMutating) }
    /// How many mutating operations were done (or attempted) so far.
    var mutatingCount: Int { mutatingOperations.count }

    func resetLog() { lock.withLock { _operations.removeAll() } }

    /// The whole tree: path → what is there.
    func snapshot() -> [String: String] {
        lock.withLock { nodes.mapValues { "\($0.kind)\($0.automatic ? " (auto)" : "")" } }
    }

    /// The paths under `prefix` (itself included).
    func paths(under prefix: String) -> [String] {
        lock.withLock { nodes.keys.filter { $0 == prefix || $0.hasPrefix(prefix + "/") }.sorted() }
    }

    /// The content of a file, without following links or consulting ``failure``.
    func content(_ path: String) -> String? {
        lock.withLock {
            if case .file(let text) = nodes[Self.normalize(path)]?.kind { return text }
            return nil
        }
    }

    /// Puts a node at `path` directly (no checks; parents must exist), as the kernel or a test's setup would.
    func place(_ path: String, _ kind: Kind, automatic: Bool = true) {
        lock.withLock {
            let path = Self.normalize(path)
            precondition(nodes[Self.parent(of: path)] != nil, "no parent for \(path)")
            nodes[path] = Node(kind: kind, automatic: automatic)
        }
    }

    /// Sets a file's content directly.
    func setContent(_ path: String, _ content: String) { place(path, .file(content)) }

    /// Removes `path` and everything under it directly (no checks).
    func forceRemove(_ path: String) {
        lock.withLock {
            let path = Self.normalize(path)
            for key in nodes.keys where key == path || key.hasPrefix(path + "/") { nodes[key] = nil }
        }
    }

    func addUDC(_ name: String, state: String = "not attached") {
        place(udcClass + "/" + name, .directory)
        place(udcClass + "/" + name + "/state", .file(state))
    }

    func addNetInterface(_ name: String, uevent: String, carrier: String = "0") {
        place(netClass + "/" + name, .directory)
        place(netClass + "/" + name + "/uevent", .file(uevent))
        place(netClass + "/" + name + "/carrier", .file(carrier))
    }

    // MARK: GadgetFilesystem

    func exists(_ path: String) -> Bool {
        lock.withLock {
            guard begin("exists", path) == nil, let real = locate(path, followLast: false) else { return false }
            return nodes[real] != nil
        }
    }

    func list(_ path: String) -> [String] {
        lock.withLock {
            guard begin("list", path) == nil, let real = locate(path, followLast: true), nodes[real]?.kind == .directory else {
                return []
            }
            // Deliberately not sorted (readdir order is arbitrary): reverse order.
            return children(of: real).map { Self.name(of: $0) }.sorted(by: >)
        }
    }

    func read(_ path: String) -> String? {
        lock.withLock {
            guard begin("read", path) == nil, let real = locate(path, followLast: true),
                  case .file(let text) = nodes[real]?.kind
            else { return nil }
            return text
        }
    }

    func isLink(_ path: String) -> Bool {
        lock.withLock {
            guard begin("isLink", path) == nil, let real = locate(path, followLast: false),
                  case .link = nodes[real]?.kind
            else { return false }
            return true
        }
    }

    func resolve(_ path: String) -> String? {
        lock.withLock {
            guard begin("resolve", path) == nil, let real = locate(path, followLast: true), nodes[real] != nil else { return nil }
            return real
        }
    }

    func write(_ value: String, to path: String) throws(GadgetFilesystemError) {
        lock.lock()
        defer { lock.unlock() }
        if let code = begin("write", path) { throw GadgetFilesystemError("write", path, code) }
        guard let real = locate(path, followLast: true), let node = nodes[real] else {
            throw GadgetFilesystemError("write", path, ENOENT)
        }
        guard case .file = node.kind else { throw GadgetFilesystemError("write", path, EISDIR) }
        if let gadget = gadgetDirectory(containing: real), real == gadget + "/UDC" {
            if let code = bind(gadget: gadget, udc: value) { throw GadgetFilesystemError("write", path, code) }
            return
        }
        if Self.name(of: real) == "dev_addr" || Self.name(of: real) == "host_addr" {
            guard Self.isMAC(value) else { throw GadgetFilesystemError("write", path, EINVAL) }
        }
        nodes[real]?.kind = .file(value)
    }

    func makeDirectory(_ path: String) throws(GadgetFilesystemError) {
        lock.lock()
        defer { lock.unlock() }
        if let code = begin("mkdir", path) { throw GadgetFilesystemError("mkdir", path, code) }
        guard let real = locate(path, followLast: false) else { throw GadgetFilesystemError("mkdir", path, ENOENT) }
        guard nodes[real] == nil else { throw GadgetFilesystemError("mkdir", path, EEXIST) }
        let parent = Self.parent(of: real)
        guard let parentNode = nodes[parent] else { throw GadgetFilesystemError("mkdir", path, ENOENT) }
        guard parentNode.kind == .directory else { throw GadgetFilesystemError("mkdir", path, ENOTDIR) }
        if let code = configfsMake(real) { throw GadgetFilesystemError("mkdir", path, code) }
    }

    func removeDirectory(_ path: String) throws(GadgetFilesystemError) {
        lock.lock()
        defer { lock.unlock() }
        if let code = begin("rmdir", path) { throw GadgetFilesystemError("rmdir", path, code) }
        guard let real = locate(path, followLast: false), let node = nodes[real] else {
            throw GadgetFilesystemError("rmdir", path, ENOENT)
        }
        guard node.kind == .directory else { throw GadgetFilesystemError("rmdir", path, ENOTDIR) }
        if isInConfigfs(real) && node.automatic { throw GadgetFilesystemError("rmdir", path, EPERM) }
        let below = nodes.filter { $0.key.hasPrefix(real + "/") }
        if below.contains(where: { !$0.value.automatic }) { throw GadgetFilesystemError("rmdir", path, ENOTEMPTY) }
        if nodes.values.contains(where: { if case .link(let target) = $0.kind { target == real } else { false } }) {
            throw GadgetFilesystemError("rmdir", path, EBUSY)
        }
        // A function going away takes its network interface with it.
        if let text = content(real + "/ifname"), text.hasPrefix("usb"), Self.name(of: Self.parent(of: real)) == "functions" {
            forceRemove(netClass + "/" + text)
        }
        forceRemove(real)
    }

    func makeLink(at path: String, to target: String) throws(GadgetFilesystemError) {
        lock.lock()
        defer { lock.unlock() }
        if let code = begin("symlink", path) { throw GadgetFilesystemError("symlink", path, code) }
        guard let real = locate(path, followLast: false) else { throw GadgetFilesystemError("symlink", path, ENOENT) }
        guard nodes[real] == nil else { throw GadgetFilesystemError("symlink", path, EEXIST) }
        let parent = Self.parent(of: real)
        guard nodes[parent]?.kind == .directory else { throw GadgetFilesystemError("symlink", path, ENOENT) }
        let absoluteTarget = Self.normalize(target.hasPrefix("/") ? target : parent + "/" + target)
        if isInConfigfs(real) {
            // Only a configuration links, and only to a function of the same gadget that exists.
            guard let gadget = gadgetDirectory(containing: real), Self.parent(of: parent) == gadget + "/configs" else {
                throw GadgetFilesystemError("symlink", path, EPERM)
            }
            guard let resolved = locate(absoluteTarget, followLast: true), nodes[resolved]?.kind == .directory else {
                throw GadgetFilesystemError("symlink", path, ENOENT)
            }
            guard Self.parent(of: resolved) == gadget + "/functions" else { throw GadgetFilesystemError("symlink", path, EINVAL) }
            nodes[real] = Node(kind: .link(resolved), automatic: false)
        } else {
            nodes[real] = Node(kind: .link(absoluteTarget), automatic: false)
        }
    }

    func removeLink(_ path: String) throws(GadgetFilesystemError) {
        lock.lock()
        defer { lock.unlock() }
        if let code = begin("unlink", path) { throw GadgetFilesystemError("unlink", path, code) }
        guard let real = locate(path, followLast: false), let node = nodes[real] else {
            throw GadgetFilesystemError("unlink", path, ENOENT)
        }
        switch node.kind {
        case .directory: throw GadgetFilesystemError("unlink", path, EISDIR)
        case .file: if isInConfigfs(real) { throw GadgetFilesystemError("unlink", path, EPERM) }
        case .link: break
        }
        // Removing a function from a bound gadget's configuration unbinds the gadget (as the kernel does).
        if case .link = node.kind, let gadget = gadgetDirectory(containing: real), content(gadget + "/UDC") != "" {
            nodes[gadget + "/UDC"]?.kind = .file("")
        }
        nodes[real] = nil
    }

    // MARK: The model

    /// Logs the operation and asks ``failure``. Called with the lock held; the lock is recursive, so the
    /// closure may look at the fake.
    private func begin(_ operation: String, _ path: String) -> Int32? {
        _operations.append(Operation(name: operation, path: path))
        return _failure?(operation, path)
    }

    /// The real path of `path`: dot segments removed and links followed (the last one only when `followLast`);
    /// nil for a link loop or a path through a file.
    private func locate(_ path: String, followLast: Bool) -> String? {
        var pending = Self.components(Self.normalize(path))
        var current = "/"
        var hops = 0
        while !pending.isEmpty {
            let component = pending.removeFirst()
            let next = Self.normalize(current + "/" + component)
            if case .link(let target) = nodes[next]?.kind, followLast || !pending.isEmpty {
                hops += 1
                guard hops < 40 else { return nil }
                let absolute = target.hasPrefix("/") ? target : current + "/" + target
                pending = Self.components(Self.normalize(absolute)) + pending
                current = "/"
                continue
            }
            if !pending.isEmpty, let node = nodes[next], node.kind != .directory { return nil }
            current = next
        }
        return current
    }

    private func children(of directory: String) -> [String] {
        let prefix = directory == "/" ? "/" : directory + "/"
        return nodes.keys.filter { $0 != "/" && $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }
    }

    private func isInConfigfs(_ path: String) -> Bool { path.hasPrefix(configfs + "/") }

    /// The gadget directory (`<configfs>/usb_gadget/<g>`) `path` is in.
    private func gadgetDirectory(containing path: String) -> String? {
        let root = configfs + "/usb_gadget/"
        guard path.hasPrefix(root) else { return nil }
        guard let name = path.dropFirst(root.count).split(separator: "/").first else { return nil }
        return root + name
    }

    /// Makes the user directory `path` (parent exists, path does not) with what the kernel puts in it.
    private func configfsMake(_ path: String) -> Int32? {
        guard isInConfigfs(path) else {
            nodes[path] = Node(kind: .directory, automatic: false)
            return nil
        }
        guard let gadget = gadgetDirectory(containing: path) else { return EPERM }
        let parent = Self.parent(of: path)
        let name = Self.name(of: path)
        var attributes: [String: String] = [:]
        var defaultDirectories: [String] = []
        if path == gadget {
            attributes = [
                "UDC": "", "idVendor": "0x0000", "idProduct": "0x0000", "bcdDevice": "0x0000", "bcdUSB": "0x0000",
                "bDeviceClass": "0x00", "bDeviceSubClass": "0x00", "bDeviceProtocol": "0x00", "bMaxPacketSize0": "0x00",
                "max_speed": "super-speed-plus",
            ]
            defaultDirectories = ["strings", "configs", "functions", "os_desc", "webusb"]
        } else if parent == gadget + "/strings" {
            guard Self.isLanguage(name) else { return EINVAL }
            attributes = ["manufacturer": "", "product": "", "serialnumber": ""]
        } else if parent == gadget + "/configs" {
            let parts = name.split(separator: ".")
            guard parts.count == 2, let number = Int(parts[1]), number > 0 else { return EINVAL }
            attributes = ["MaxPower": "2", "bmAttributes": "0x80"]
            defaultDirectories = ["strings"]
        } else if Self.name(of: parent) == "strings", Self.parent(of: Self.parent(of: parent)) == gadget + "/configs" {
            guard Self.isLanguage(name) else { return EINVAL }
            attributes = ["configuration": ""]
        } else if parent == gadget + "/functions" {
            let parts = name.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, !parts[1].isEmpty else { return EINVAL }
            guard parts[0] == "ncm", _ncmAvailable else { return ENOENT }
            attributes = ["dev_addr": "", "host_addr": "", "ifname": "(unnamed net_device)", "qmult": "5"]
        } else {
            return EPERM
        }
        nodes[path] = Node(kind: .directory, automatic: false)
        for (attribute, value) in attributes { nodes[path + "/" + attribute] = Node(kind: .file(value), automatic: true) }
        for directory in defaultDirectories { nodes[path + "/" + directory] = Node(kind: .directory, automatic: true) }
        return nil
    }

    /// Writes `udc` to the gadget's UDC attribute, the way the kernel binds and unbinds.
    private func bind(gadget: String, udc: String) -> Int32? {
        let current = content(gadget + "/UDC") ?? ""
        if udc.isEmpty {
            guard !current.isEmpty else { return ENODEV }
            nodes[gadget + "/UDC"]?.kind = .file("")
            return nil
        }
        guard current.isEmpty else { return EBUSY }
        guard nodes[udcClass + "/" + udc] != nil else { return ENODEV }
        let gadgets = children(of: configfs + "/usb_gadget").filter { $0 != gadget }
        if gadgets.contains(where: { content($0 + "/UDC") == udc }) { return EBUSY }
        let linkedFunctions = children(of: gadget + "/configs").flatMap { config in
            children(of: config).compactMap { entry -> String? in
                if case .link(let target) = nodes[entry]?.kind, nodes[target]?.kind == .directory { return target }
                return nil
            }
        }
        guard !linkedFunctions.isEmpty else { return ENODEV }
        nodes[gadget + "/UDC"]?.kind = .file(udc)
        for function in linkedFunctions where Self.name(of: function).hasPrefix("ncm.") {
            let existing = content(function + "/ifname") ?? ""
            if existing.hasPrefix("usb"), nodes[netClass + "/" + existing] != nil { continue }
            let interface = (0...).lazy.map { "usb\($0)" }.first { self.nodes[self.netClass + "/" + $0] == nil }!
            nodes[function + "/ifname"]?.kind = .file(interface)
            addNetInterface(interface, uevent: "DEVTYPE=gadget\nINTERFACE=\(interface)", carrier: "0")
        }
        return nil
    }

    // MARK: Paths

    static func components(_ path: String) -> [String] { path.split(separator: "/").map(String.init) }

    static func normalize(_ path: String) -> String {
        var result: [String] = []
        for component in components(path) {
            if component == "." { continue }
            if component == ".." {
                if !result.isEmpty { result.removeLast() }
                continue
            }
            result.append(component)
        }
        return "/" + result.joined(separator: "/")
    }

    static func parent(of path: String) -> String {
        let parts = components(path)
        return "/" + parts.dropLast().joined(separator: "/")
    }

    static func name(of path: String) -> String { components(path).last ?? "/" }

    static func isLanguage(_ name: String) -> Bool {
        name.hasPrefix("0x") && name.count > 2 && UInt16(name.dropFirst(2), radix: 16) != nil
    }

    static func isMAC(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}
