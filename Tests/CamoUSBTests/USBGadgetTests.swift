import CamoUSB
import Foundation
import Synchronization
import Testing

private let gadgetPath = "/cfg/usb_gadget/camo-agent"
private let functionPath = gadgetPath + "/functions/ncm.camo"
private let configPath = gadgetPath + "/configs/c.1"
private let linkPath = configPath + "/ncm.camo"

/// The mutating operations a successful `up` on a clean machine performs, in order.
private let expectedUpOperations: [String] = [
    "mkdir \(gadgetPath)",
    "write \(gadgetPath)/idVendor",
    "write \(gadgetPath)/idProduct",
    "write \(gadgetPath)/bcdDevice",
    "write \(gadgetPath)/bcdUSB",
    "mkdir \(gadgetPath)/strings/0x409",
    "write \(gadgetPath)/strings/0x409/manufacturer",
    "write \(gadgetPath)/strings/0x409/product",
    "write \(gadgetPath)/strings/0x409/serialnumber",
    "mkdir \(configPath)",
    "mkdir \(configPath)/strings/0x409",
    "write \(configPath)/strings/0x409/configuration",
    "write \(configPath)/MaxPower",
    "mkdir \(functionPath)",
    "write \(functionPath)/dev_addr",
    "write \(functionPath)/host_addr",
    "symlink \(linkPath)",
    "write \(gadgetPath)/UDC",
]

/// The directories and links `up` makes (everything else under the gadget is the kernel's).
private let madeByUp: Set<String> = [
    gadgetPath, gadgetPath + "/strings/0x409", configPath, configPath + "/strings/0x409", functionPath, linkPath,
]

/// The nodes of `filesystem` made by hand (mkdir/symlink) under the gadget directory.
private func userNodes(_ filesystem: FakeGadgetFilesystem) -> Set<String> {
    let snapshot = filesystem.snapshot()
    return Set(filesystem.paths(under: gadgetPath).filter { !(snapshot[$0] ?? "").hasSuffix("(auto)") })
}

@Suite("USBGadget up")
struct USBGadgetUpTests {
    @Test("up on a clean machine makes exactly the gadget, writes the identity and binds the first UDC")
    func upMakesTheGadget() throws {
        let filesystem = FakeGadgetFilesystem()
        let kernel = KernelRecorder()
        let gadget = makeGadget(filesystem, kernel: kernel)
        let before = filesystem.snapshot()

        let udc = try gadget.up(logger: quietLogger)

        // The UDC class lists musb-hdrc.2.auto and fe980000.usb (the fake lists them in reverse): the first sorted.
        #expect(udc == "fe980000.usb")
        #expect(kernel.steps.isEmpty)
        #expect(filesystem.mutatingOperations.map(\.description) == expectedUpOperations)
        #expect(userNodes(filesystem) == madeByUp)

        // Nothing changed outside the gadget directory except the interface the kernel made.
        let after = filesystem.snapshot()
        let added = Set(after.keys).subtracting(before.keys)
        #expect(Set(before.keys).isSubset(of: after.keys))
        for (path, value) in before { #expect(after[path] == value, "\(path) changed") }
        #expect(added.allSatisfy { $0.hasPrefix(gadgetPath) || $0.hasPrefix("/net/usb0") })
        #expect(added.contains("/net/usb0/uevent"))

        #expect(filesystem.content(gadgetPath + "/idVendor") == "0x1d6b")
        #expect(filesystem.content(gadgetPath + "/idProduct") == "0x0104")
        #expect(filesystem.content(gadgetPath + "/bcdDevice") == "0x0004")
        #expect(filesystem.content(gadgetPath + "/bcdUSB") == "0x0200")
        #expect(filesystem.content(gadgetPath + "/strings/0x409/manufacturer") == "camo-agent")
        #expect(filesystem.content(gadgetPath + "/strings/0x409/product") == "Camo Agent USB link")
        #expect(filesystem.content(gadgetPath + "/strings/0x409/serialnumber") == testIdentity.serialNumber)
        #expect(filesystem.content(configPath + "/strings/0x409/configuration") == "CDC NCM (camo-agent)")
        #expect(filesystem.content(configPath + "/MaxPower") == "250")
        #expect(filesystem.content(functionPath + "/dev_addr") == USBLinkIdentity.formatMAC(testIdentity.agentMAC))
        #expect(filesystem.content(functionPath + "/host_addr") == USBLinkIdentity.formatMAC(testIdentity.studioMAC))
        #expect(filesystem.content(functionPath + "/dev_addr")?.hasPrefix("02:63:61:") == true)
        #expect(filesystem.snapshot()[linkPath] == "link -> \(functionPath)")
        #expect(filesystem.isLink(linkPath))
        #expect(filesystem.resolve(linkPath) == functionPath)
        #expect(filesystem.content(gadgetPath + "/UDC") == "fe980000.usb")
        #expect(filesystem.content(functionPath + "/ifname") == "usb0")
    }

    @Test("up binds the UDC asked for")
    func upBindsTheRequestedUDC() throws {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)
        let udc = try gadget.up(udc: "musb-hdrc.2.auto", logger: quietLogger)
        #expect(udc == "musb-hdrc.2.auto")
        #expect(filesystem.content(gadgetPath + "/UDC") == "musb-hdrc.2.auto")
        #expect(gadget.status().udc == "musb-hdrc.2.auto")
    }

    @Test("status before and after up")
    func statusReportsTheGadget() throws {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)

        let down = gadget.status()
        #expect(!down.present)
        #expect(down.udc == "")
        #expect(down.udcState == nil)
        #expect(down.interface == nil)
        #expect(down.carrier == nil)
        #expect(down.agentIPv4 == testIdentity.agentIPv4)
        #expect(down.studioIPv4 == testIdentity.studioIPv4)
        #expect(down.controllers == ["fe980000.usb", "musb-hdrc.2.auto"])
        #expect(gadget.interfaceName() == nil)

        try gadget.up(logger: quietLogger)
        let up = gadget.status()
        #expect(up.present)
        #expect(up.udc == "fe980000.usb")
        #expect(up.udcState == "not attached")
        #expect(up.interface == "usb0")
        #expect(up.carrier == false)
        #expect(up.agentIPv4 == testIdentity.agentIPv4)
        #expect(up.studioIPv4 == testIdentity.studioIPv4)
        #expect(up.controllers == ["fe980000.usb", "musb-hdrc.2.auto"])
        #expect(gadget.interfaceName() == "usb0")

        // A USB host configures the gadget and the link comes up.
        filesystem.setContent("/udc/fe980000.usb/state", "configured")
        filesystem.setContent("/net/usb0/carrier", "1")
        let connected = gadget.status()
        #expect(connected.udcState == "configured")
        #expect(connected.carrier == true)

        // Carrier that cannot be read (the interface is down) is unknown, not false.
        filesystem.forceRemove("/net/usb0/carrier")
        #expect(gadget.status().carrier == nil)
        #expect(gadget.status().interface == "usb0")
    }

    @Test("status of a gadget that is made but not bound has no interface")
    func statusOfAnUnboundGadget() throws {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)
        try filesystem.makeDirectory(gadgetPath)
        try filesystem.makeDirectory(functionPath)
        let status = gadget.status()
        #expect(status.present)
        #expect(status.udc == "")
        #expect(status.udcState == nil)
        #expect(status.interface == nil) // ifname is "(unnamed net_device)"
        #expect(status.carrier == nil)

        // Newer kernels show the template until the function is bound.
        filesystem.setContent(functionPath + "/ifname", "usb%d")
        #expect(gadget.interfaceName() == nil)
        // A name whose interface is gone is not reported either.
        filesystem.setContent(functionPath + "/ifname", "usb7")
        #expect(gadget.interfaceName() == nil)
    }

    @Test("up twice: the second says alreadyUp with the UDC and changes nothing")
    func upTwice() throws {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)
        try gadget.up(logger: quietLogger)
        let tree = filesystem.snapshot()
        filesystem.resetLog()

        #expect(upError(gadget) == .alreadyUp(udc: "fe980000.usb"))
        #expect(upError(gadget, udc: "musb-hdrc.2.auto") == .alreadyUp(udc: "fe980000.usb"))
        #expect(filesystem.snapshot() == tree)
        #expect(filesystem.mutatingCount == 0)
    }

    @Test("no UDC: noUDC and nothing made")
    func noUDC() {
        let filesystem = FakeGadgetFilesystem(udcs: [])
        let kernel = KernelRecorder()
        let gadget = makeGadget(filesystem, kernel: kernel)
        let before = filesystem.snapshot()
        #expect(upError(gadget) == .noUDC)
        #expect(upError(gadget, udc: "fe980000.usb") == .noUDC)
        #expect(filesystem.snapshot() == before)
        #expect(filesystem.mutatingCount == 0)
        #expect(kernel.steps.isEmpty)
        #expect(gadget.status().controllers.isEmpty)
    }

    @Test("a UDC name that does not exist: udcNotFound listing the ones there are, nothing made")
    func udcNotFound() {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)
        let before = filesystem.snapshot()
        #expect(upError(gadget, udc: "dummy_udc.0")
            == .udcNotFound("dummy_udc.0", available: ["fe980000.usb", "musb-hdrc.2.auto"]))
        #expect(filesystem.snapshot() == before)
        #expect(filesystem.mutatingCount == 0)
    }

    @Test("a UDC another gadget holds: cannotBind, and nothing of ours is left")
    func udcHeldByAnotherGadget() throws {
        let filesystem = FakeGadgetFilesystem(udcs: ["fe980000.usb"])
        // Someone else's gadget, bound to the only controller.
        let other = "/cfg/usb_gadget/g1"
        try filesystem.makeDirectory(other)
        try filesystem.makeDirectory(other + "/configs/c.1")
        try filesystem.makeDirectory(other + "/functions/ncm.usb0")
        try filesystem.makeLink(at: other + "/configs/c.1/ncm.usb0", to: other + "/functions/ncm.usb0")
        try filesystem.write("fe980000.usb", to: other + "/UDC")
        #expect(filesystem.exists("/net/usb0"))

        let gadget = makeGadget(filesystem)
        let before = filesystem.snapshot()
        let error = upError(gadget)
        guard case .cannotBind(let udc, let detail) = error else {
            Issue.record("expected cannotBind, got \(String(describing: error))")
            return
        }
        #expect(udc == "fe980000.usb")
        #expect(detail.contains("UDC"))
        #expect(filesystem.snapshot() == before)
        #expect(!filesystem.exists(gadgetPath))
        #expect(filesystem.content(other + "/UDC") == "fe980000.usb")
    }

    @Test("a second controller is free: up binds it when asked")
    func udcHeldButAnotherFree() throws {
        let filesystem = FakeGadgetFilesystem()
        let other = "/cfg/usb_gadget/g1"
        try filesystem.makeDirectory(other)
        try filesystem.makeDirectory(other + "/configs/c.1")
        try filesystem.makeDirectory(other + "/functions/ncm.usb0")
        try filesystem.makeLink(at: other + "/configs/c.1/ncm.usb0", to: other + "/functions/ncm.usb0")
        try filesystem.write("fe980000.usb", to: other + "/UDC")

        let gadget = makeGadget(filesystem)
        try gadget.up(udc: "musb-hdrc.2.auto", logger: quietLogger)
        #expect(gadget.status().udc == "musb-hdrc.2.auto")
        #expect(gadget.status().interface == "usb1")
    }
}

@Suite("USBGadget and the kernel: configfs, libcomposite, usb_f_ncm")
struct USBGadgetKernelTests {
    @Test("usb_gadget present: the kernel is not asked for anything")
    func nothingToLoad() throws {
        let filesystem = FakeGadgetFilesystem()
        let kernel = KernelRecorder()
        try makeGadget(filesystem, kernel: kernel).up(logger: quietLogger)
        #expect(kernel.steps.isEmpty)
    }

    @Test("configfs mounted without usb_gadget: libcomposite is loaded, then up goes on")
    func loadsLibcomposite() throws {
        let filesystem = FakeGadgetFilesystem(libcomposite: false)
        filesystem.place("/cfg/nvmet", .directory)
        let kernel = KernelRecorder { step in
            if step == .loadModule("libcomposite") {
                filesystem.place("/cfg/usb_gadget", .directory)
                return nil
            }
            return "unexpected"
        }
        let udc = try makeGadget(filesystem, kernel: kernel).up(logger: quietLogger)
        #expect(udc == "fe980000.usb")
        #expect(kernel.steps == [.loadModule("libcomposite")])
        #expect(filesystem.exists(gadgetPath))
    }

    @Test("libcomposite cannot be loaded: noLibcomposite with modprobe's message, nothing made")
    func libcompositeFails() {
        let filesystem = FakeGadgetFilesystem(libcomposite: false)
        filesystem.place("/cfg/nvmet", .directory)
        let kernel = KernelRecorder { _ in "modprobe: FATAL: Module libcomposite not found" }
        let before = filesystem.snapshot()
        let error = upError(makeGadget(filesystem, kernel: kernel))
        guard case .noLibcomposite(let detail) = error else {
            Issue.record("expected noLibcomposite, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("Module libcomposite not found"))
        #expect(kernel.steps == [.loadModule("libcomposite")])
        #expect(filesystem.snapshot() == before)
        #expect(filesystem.mutatingCount == 0)
    }

    @Test("modprobe succeeds but usb_gadget is still missing: noLibcomposite")
    func libcompositeLoadsButNothingAppears() {
        let filesystem = FakeGadgetFilesystem(libcomposite: false)
        filesystem.place("/cfg/nvmet", .directory)
        let kernel = KernelRecorder { _ in nil }
        let before = filesystem.snapshot()
        let error = upError(makeGadget(filesystem, kernel: kernel))
        guard case .noLibcomposite(let detail) = error else {
            Issue.record("expected noLibcomposite, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("still missing"))
        #expect(filesystem.snapshot() == before)
    }

    @Test("configfs empty and the mount fails: noConfigfs, no module loaded, nothing made")
    func mountFails() {
        let filesystem = FakeGadgetFilesystem(libcomposite: false)
        let kernel = KernelRecorder { _ in "Operation not permitted" }
        let before = filesystem.snapshot()
        let error = upError(makeGadget(filesystem, kernel: kernel))
        guard case .noConfigfs(let detail) = error else {
            Issue.record("expected noConfigfs, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("Operation not permitted"))
        #expect(detail.contains("/cfg"))
        #expect(kernel.steps == [.mountConfigfs("/cfg")])
        #expect(filesystem.snapshot() == before)
        #expect(filesystem.mutatingCount == 0)
    }

    @Test("configfs empty: mounting it shows usb_gadget (libcomposite built in), no module loaded")
    func mountShowsUSBGadget() throws {
        let filesystem = FakeGadgetFilesystem(libcomposite: false)
        let kernel = KernelRecorder { step in
            guard step == .mountConfigfs("/cfg") else { return "unexpected" }
            filesystem.place("/cfg/usb_gadget", .directory)
            return nil
        }
        try makeGadget(filesystem, kernel: kernel).up(logger: quietLogger)
        #expect(kernel.steps == [.mountConfigfs("/cfg")])
        #expect(filesystem.exists(gadgetPath))
    }

    @Test("configfs empty: mount, then load libcomposite")
    func mountThenLoad() throws {
        let filesystem = FakeGadgetFilesystem(libcomposite: false)
        let kernel = KernelRecorder { step in
            if step == .loadModule("libcomposite") { filesystem.place("/cfg/usb_gadget", .directory) }
            return nil
        }
        try makeGadget(filesystem, kernel: kernel).up(logger: quietLogger)
        #expect(kernel.steps == [.mountConfigfs("/cfg"), .loadModule("libcomposite")])
    }

    @Test("no usb_f_ncm: noNCMFunction after trying to load it, and the tree is as before")
    func noNCM() {
        let filesystem = FakeGadgetFilesystem(ncmAvailable: false)
        let kernel = KernelRecorder { _ in "modprobe: FATAL: Module usb_f_ncm not found" }
        let before = filesystem.snapshot()
        let error = upError(makeGadget(filesystem, kernel: kernel))
        guard case .noNCMFunction(let detail) = error else {
            Issue.record("expected noNCMFunction, got \(String(describing: error))")
            return
        }
        #expect(detail.contains(functionPath))
        #expect(kernel.steps == [.loadModule("usb_f_ncm")])
        #expect(filesystem.snapshot() == before)
        // Two attempts at the function, nothing bound.
        #expect(filesystem.mutatingOperations.filter { $0.description == "mkdir \(functionPath)" }.count == 2)
        #expect(!filesystem.mutatingOperations.contains { $0.path.hasSuffix("/UDC") })
    }

    @Test("usb_f_ncm not loaded yet: loading it lets up finish")
    func ncmLoadedOnDemand() throws {
        let filesystem = FakeGadgetFilesystem(ncmAvailable: false)
        let kernel = KernelRecorder { step in
            guard step == .loadModule("usb_f_ncm") else { return "unexpected" }
            filesystem.ncmAvailable = true
            return nil
        }
        try makeGadget(filesystem, kernel: kernel).up(logger: quietLogger)
        #expect(kernel.steps == [.loadModule("usb_f_ncm")])
        #expect(filesystem.content(functionPath + "/ifname") == "usb0")
    }
}

@Suite("USBGadget rollback")
struct USBGadgetRollbackTests {
    @Test("a successful up performs 18 mutating operations")
    func countSteps() throws {
        let filesystem = FakeGadgetFilesystem()
        try makeGadget(filesystem).up(logger: quietLogger)
        #expect(filesystem.mutatingCount == expectedUpOperations.count)
    }

    @Test("a failure at every step of up leaves the tree exactly as before")
    func failureAtEveryStep() throws {
        // Count the steps of a successful run rather than trusting the list above.
        let reference = FakeGadgetFilesystem()
        try makeGadget(reference).up(logger: quietLogger)
        let steps = reference.mutatingCount
        #expect(steps == 18)

        for step in 1...steps {
            let filesystem = FakeGadgetFilesystem()
            let schedule = FailAtStep(step)
            let kernel = KernelRecorder { _ in "modprobe: FATAL: Module usb_f_ncm not found" }
            let gadget = makeGadget(filesystem, kernel: kernel)
            let before = filesystem.snapshot()
            filesystem.failure = schedule.closure

            let error = upError(gadget)
            let failed = try #require(schedule.failed, "step \(step) was never reached")
            let what = "step \(step): \(failed.operation) \(failed.path)"
            #expect(error != nil, "\(what) did not make up fail")
            #expect(filesystem.snapshot() == before, "\(what) left the tree changed")
            #expect(!filesystem.exists(gadgetPath), "\(what) left the gadget")
            #expect(!filesystem.exists("/net/usb0"), "\(what) left an interface")

            switch failed.path {
            case functionPath:
                #expect(error == .noNCMFunction(GadgetFilesystemError("mkdir", functionPath, EIO).description), "\(what)")
                #expect(kernel.steps == [.loadModule("usb_f_ncm")], "\(what)")
            case gadgetPath + "/UDC":
                #expect(error == .cannotBind(udc: "fe980000.usb", GadgetFilesystemError("write", gadgetPath + "/UDC", EIO).description),
                        "\(what)")
            default:
                #expect(error?.leftBehind == [], "\(what): \(String(describing: error))")
                #expect(kernel.steps.isEmpty, "\(what)")
                if case .failed(let detail, _) = error {
                    #expect(detail.contains(failed.path), "\(what): \(detail)")
                }
            }
        }
    }

    @Test("a transient failure making the function is retried after loading usb_f_ncm")
    func transientFunctionFailure() throws {
        let filesystem = FakeGadgetFilesystem()
        let kernel = KernelRecorder { _ in nil }
        let failedOnce = FailOnce(operation: "mkdir", path: functionPath)
        filesystem.failure = failedOnce.closure
        try makeGadget(filesystem, kernel: kernel).up(logger: quietLogger)
        #expect(kernel.steps == [.loadModule("usb_f_ncm")])
        #expect(filesystem.content(gadgetPath + "/UDC") == "fe980000.usb")
    }

    @Test("an rmdir failing during rollback is reported in leftBehind, and only what remains is named")
    func rollbackCannotRemove() {
        let filesystem = FakeGadgetFilesystem()
        let strings = gadgetPath + "/strings/0x409"
        filesystem.failure = { operation, path in
            if operation == "write", path == configPath + "/MaxPower" { return EIO }
            if operation == "rmdir", path == strings { return EBUSY }
            return nil
        }
        let error = upError(makeGadget(filesystem))
        guard case .failed(let detail, let leftBehind) = error else {
            Issue.record("expected failed, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("MaxPower"))
        // The strings directory stays, so the gadget directory cannot go either.
        #expect(leftBehind == [strings, gadgetPath])
        #expect(userNodes(filesystem) == Set(leftBehind))
        #expect(error?.description.contains(strings) == true)
    }

    @Test("rollback after usb_f_ncm is missing, with an rmdir failing: failed, naming what is left")
    func rollbackAfterNoNCMCannotRemove() {
        let filesystem = FakeGadgetFilesystem(ncmAvailable: false)
        filesystem.failure = { operation, path in operation == "rmdir" && path == configPath ? EIO : nil }
        let error = upError(makeGadget(filesystem, kernel: KernelRecorder { _ in "not found" }))
        #expect(error?.leftBehind == [configPath, gadgetPath])
        #expect(userNodes(filesystem) == [configPath, gadgetPath])
    }

    @Test("a UDC that answers EBUSY a few times (its gadget not yet on the bus) is bound on a later try; one that stays busy is refused")
    func bindRetriesWhileBusy() throws {
        let filesystem = FakeGadgetFilesystem()
        let busy = Mutex(2)
        filesystem.failure = { operation, path in
            guard operation == "write", path == gadgetPath + "/UDC" else { return nil }
            return busy.withLock { left in
                guard left > 0 else { return nil }
                left -= 1
                return EBUSY
            }
        }
        let pauses = Mutex(0)
        var gadget = makeGadget(filesystem)
        gadget.bindRetryPause = { pauses.withLock { $0 += 1 } }
        #expect(upError(gadget) == nil)
        #expect(filesystem.content(gadgetPath + "/UDC") == "fe980000.usb")
        #expect(pauses.withLock { $0 } == 2)

        let stuck = FakeGadgetFilesystem()
        stuck.failure = { operation, path in operation == "write" && path == gadgetPath + "/UDC" ? EBUSY : nil }
        var stuckGadget = makeGadget(stuck)
        stuckGadget.bindRetryPause = { pauses.withLock { $0 += 1 } }
        guard case .cannotBind? = upError(stuckGadget) else {
            Issue.record("a UDC busy on every try must be refused")
            return
        }
        #expect(pauses.withLock { $0 } == 2 + stuckGadget.bindAttempts - 1)
        #expect(userNodes(stuck).isEmpty, "nothing left behind")
    }

    @Test("rollback after binding fails, with the link stuck: failed, naming what is left")
    func rollbackAfterBindCannotRemove() {
        let filesystem = FakeGadgetFilesystem()
        filesystem.failure = { operation, path in
            if operation == "write", path == gadgetPath + "/UDC" { return EBUSY }
            if operation == "unlink", path == linkPath { return EIO }
            return nil
        }
        let error = upError(makeGadget(filesystem))
        let leftBehind = error?.leftBehind ?? []
        // The link stays, so the function (its target), the configuration and the gadget stay too.
        #expect(leftBehind == [linkPath, functionPath, configPath, gadgetPath])
        #expect(userNodes(filesystem) == Set(leftBehind))
    }
}

/// Fails one operation on one path once.
final class FailOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    let operation: String
    let path: String

    init(operation: String, path: String) {
        self.operation = operation
        self.path = path
    }

    var closure: @Sendable (String, String) -> Int32? {
        { operation, path in
            self.lock.withLock {
                guard !self.done, operation == self.operation, path == self.path else { return nil }
                self.done = true
                return EIO
            }
        }
    }
}

@Suite("USBGadget down")
struct USBGadgetDownTests {
    @Test("down with nothing up: notUp, nothing touched")
    func downWithNothingUp() {
        let filesystem = FakeGadgetFilesystem()
        let before = filesystem.snapshot()
        #expect(downError(makeGadget(filesystem)) == .notUp)
        #expect(filesystem.snapshot() == before)
        #expect(filesystem.mutatingCount == 0)
    }

    @Test("down after up: nothing of the gadget remains, the interface is gone")
    func downAfterUp() throws {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)
        let before = filesystem.snapshot()
        try gadget.up(logger: quietLogger)
        #expect(filesystem.exists("/net/usb0"))
        filesystem.resetLog()

        let removed = try gadget.down(logger: quietLogger)
        #expect(filesystem.snapshot() == before)
        #expect(!filesystem.exists("/net/usb0"))
        #expect(removed == [
            "binding to fe980000.usb", linkPath, configPath + "/strings/0x409", configPath, functionPath,
            gadgetPath + "/strings/0x409", gadgetPath,
        ])
        // Unbinding comes first, then only removals.
        let operations = filesystem.mutatingOperations.map(\.description)
        #expect(operations.first == "write \(gadgetPath)/UDC")
        #expect(operations.dropFirst().allSatisfy { $0.hasPrefix("rmdir ") || $0.hasPrefix("unlink ") })
        #expect(gadget.status().present == false)
        #expect(downError(gadget) == .notUp)

        // And it can be made again.
        try gadget.up(logger: quietLogger)
        #expect(gadget.status().interface == "usb0")
    }

    @Test("an interrupted earlier run: up says alreadyUp (not bound), down removes everything there")
    func interruptedRun() throws {
        let filesystem = FakeGadgetFilesystem()
        let before = filesystem.snapshot()
        // What an earlier run got done before it was killed, plus a few things it never makes itself.
        try filesystem.makeDirectory(gadgetPath)
        try filesystem.write("0x1d6b", to: gadgetPath + "/idVendor")
        try filesystem.makeDirectory(gadgetPath + "/strings/0x409")
        try filesystem.makeDirectory(gadgetPath + "/strings/0x407")
        try filesystem.makeDirectory(configPath)
        try filesystem.makeDirectory(configPath + "/strings/0x409")
        try filesystem.makeDirectory(gadgetPath + "/configs/c.2")
        try filesystem.makeDirectory(functionPath)
        try filesystem.makeLink(at: linkPath, to: functionPath)
        // A link whose function is gone.
        try filesystem.makeDirectory(gadgetPath + "/functions/ncm.old")
        try filesystem.makeLink(at: gadgetPath + "/configs/c.2/ncm.old", to: gadgetPath + "/functions/ncm.old")
        filesystem.forceRemove(gadgetPath + "/functions/ncm.old")
        #expect(filesystem.isLink(gadgetPath + "/configs/c.2/ncm.old"))
        #expect(filesystem.resolve(gadgetPath + "/configs/c.2/ncm.old") == nil)

        let gadget = makeGadget(filesystem)
        #expect(upError(gadget) == .alreadyUp(udc: ""))
        #expect(gadget.status().present)
        #expect(gadget.status().interface == nil)

        let removed = try gadget.down(logger: quietLogger)
        #expect(filesystem.snapshot() == before)
        #expect(!removed.contains { $0.hasPrefix("binding") })
        #expect(Set(removed) == [
            gadgetPath, gadgetPath + "/strings/0x409", gadgetPath + "/strings/0x407", configPath,
            configPath + "/strings/0x409", gadgetPath + "/configs/c.2", functionPath, linkPath,
            gadgetPath + "/configs/c.2/ncm.old",
        ])
        #expect(removed.last == gadgetPath)
    }

    @Test("an interrupted run that only made the gadget directory")
    func interruptedRunBare() throws {
        let filesystem = FakeGadgetFilesystem()
        let before = filesystem.snapshot()
        try filesystem.makeDirectory(gadgetPath)
        let gadget = makeGadget(filesystem)
        #expect(upError(gadget) == .alreadyUp(udc: ""))
        #expect(try gadget.down(logger: quietLogger) == [gadgetPath])
        #expect(filesystem.snapshot() == before)
    }

    @Test("down cannot unbind: refused naming the UDC and the way to unbind, nothing removed")
    func downCannotUnbind() throws {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)
        let udc = try gadget.up(logger: quietLogger)
        let tree = filesystem.snapshot()
        filesystem.failure = { operation, path in operation == "write" && path.hasSuffix("/UDC") ? EIO : nil }
        let error = downError(gadget)
        guard case .cannotUnbind(let named, _) = error else {
            Issue.record("expected cannotUnbind, got \(String(describing: error))")
            return
        }
        #expect(named == udc)
        #expect(filesystem.snapshot() == tree)
    }

    @Test("down cannot remove a directory: failed, naming what remains, the rest removed")
    func downCannotRemove() throws {
        let filesystem = FakeGadgetFilesystem()
        let gadget = makeGadget(filesystem)
        try gadget.up(logger: quietLogger)
        filesystem.failure = { operation, path in operation == "rmdir" && path == functionPath ? EIO : nil }
        let error = downError(gadget)
        #expect(error?.leftBehind == [functionPath, gadgetPath])
        #expect(userNodes(filesystem) == [functionPath, gadgetPath])
        guard case .failed(let detail, _) = error else { return }
        #expect(detail == "removing the gadget")

        // Once the cause is gone, down finishes the job.
        filesystem.failure = nil
        #expect(try gadget.down(logger: quietLogger) == [functionPath, gadgetPath])
        #expect(!filesystem.exists(gadgetPath))
        #expect(!filesystem.exists("/net/usb0"))
    }
}

@Suite("USBGadgetError descriptions")
struct USBGadgetErrorTests {
    static let all: [USBGadgetError] = [
        .noConfigfs("/sys/kernel/config is empty"),
        .noLibcomposite("modprobe failed"),
        .noUDC,
        .udcNotFound("x", available: ["fe980000.usb"]),
        .udcNotFound("x", available: []),
        .alreadyUp(udc: "fe980000.usb"),
        .alreadyUp(udc: ""),
        .notUp,
        .noNCMFunction("mkdir: No such file or directory"),
        .cannotBind(udc: "fe980000.usb", "write: Device or resource busy"),
        .cannotUnbind(udc: "fe980000.usb", "write: Input/output error"),
        .failed("write: Input/output error", leftBehind: ["/sys/kernel/config/usb_gadget/camo-agent"]),
        .failed("write: Input/output error", leftBehind: []),
    ]

    /// Words (or a backquoted command) that tell the reader what to do.
    static let actions = ["`", "run ", "install", "use ", "leave ", "remove ", "check ", "add "]

    @Test("every description is a sentence that says what to do", arguments: all)
    func describesWhatToDo(_ error: USBGadgetError) {
        let text = error.description
        #expect(!text.isEmpty)
        #expect(text.hasSuffix("."))
        let lowered = text.lowercased()
        // Once a bug: `.failed(_, leftBehind: [])` (every rolled-back failure of `up`) named no step to take.
        #expect(Self.actions.contains { lowered.contains($0) }, "\(text)")
    }

    @Test("spot checks")
    func spotChecks() {
        #expect(USBGadgetError.noLibcomposite("x").description.contains("`modprobe libcomposite`"))
        #expect(USBGadgetError.noUDC.description.contains("dtoverlay=dwc2"))
        #expect(USBGadgetError.alreadyUp(udc: "fe980000.usb").description.contains("`camo-agent usb down`"))
        #expect(USBGadgetError.alreadyUp(udc: "fe980000.usb").description.contains("bound to fe980000.usb"))
        #expect(USBGadgetError.alreadyUp(udc: "").description.contains("not bound"))
        #expect(USBGadgetError.notUp.description.contains("`camo-agent usb status`"))
        #expect(USBGadgetError.udcNotFound("x", available: ["a", "b"]).description.contains("available: a, b"))
        #expect(USBGadgetError.udcNotFound("x", available: []).description.contains("available: none"))
        #expect(USBGadgetError.udcNotFound("x", available: []).description.contains("leave the name out to take the first one"))
        #expect(USBGadgetError.noNCMFunction("d").description.contains("usb_f_ncm"))
        #expect(USBGadgetError.cannotBind(udc: "u", "d").description.contains("ls /sys/kernel/config/usb_gadget"))
        let leftBehind = USBGadgetError.failed("d", leftBehind: ["/a/b", "/a"]).description
        #expect(leftBehind.contains("/a/b, /a"))
        #expect(leftBehind.contains("rmdir"))
        #expect(USBGadgetError.noConfigfs("d").description.contains("CONFIG_CONFIGFS_FS"))
    }

    @Test("GadgetFilesystemError (a SystemCallError) says the operation, the path, the errno's text and its number")
    func filesystemErrorDescription() {
        let error = GadgetFilesystemError("mkdir", "/cfg/x", ENOENT)
        #expect(error.description == "could not mkdir /cfg/x: No such file or directory (errno 2)")
        #expect(error.meansDeviceGone && !GadgetFilesystemError("mkdir", "/cfg/x", EEXIST).meansDeviceGone)
        #expect(error == GadgetFilesystemError("mkdir", "/cfg/x", ENOENT))
        #expect(error != GadgetFilesystemError("mkdir", "/cfg/x", EEXIST))
    }
}
