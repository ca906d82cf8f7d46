import CamoUSB
import Foundation
import Testing

/// The fake is only worth something if it refuses what the kernel refuses: these check the model itself.
@Suite("FakeGadgetFilesystem models configfs")
struct FakeGadgetFilesystemTests {
    let gadget = "/cfg/usb_gadget/g"

    /// The errno `body` failed with (-1 for an error of another type), nil when it worked.
    private func code(_ body: () throws -> Void) -> Int32? {
        do {
            try body()
            return nil
        } catch {
            return (error as? GadgetFilesystemError)?.code ?? -1
        }
    }

    @Test("mkdir of a gadget makes its attributes and default directories, which cannot be removed by hand")
    func gadgetDirectory() throws {
        let filesystem = FakeGadgetFilesystem()
        try filesystem.makeDirectory(gadget)
        for name in ["UDC", "idVendor", "idProduct", "bcdDevice", "bcdUSB", "bDeviceClass", "strings", "configs",
                     "functions", "os_desc"] {
            #expect(filesystem.exists(gadget + "/" + name), "\(name)")
        }
        #expect(filesystem.read(gadget + "/UDC") == "")
        #expect(code { try filesystem.removeDirectory(gadget + "/strings") } == EPERM)
        #expect(code { try filesystem.removeLink(gadget + "/idVendor") } == EPERM)
        #expect(code { try filesystem.makeDirectory(gadget) } == EEXIST)
        #expect(code { try filesystem.makeDirectory(gadget + "/extra") } == EPERM)
        #expect(code { try filesystem.makeDirectory("/cfg/other") } == EPERM)
        #expect(code { try filesystem.write("x", to: gadget + "/nonexistent") } == ENOENT)
        #expect(code { try filesystem.write("x", to: gadget + "/strings") } == EISDIR)
        #expect(code { try filesystem.makeDirectory("/cfg/usb_gadget/missing/strings/0x409") } == ENOENT)
        // Attributes and default directories go with the gadget.
        try filesystem.removeDirectory(gadget)
        #expect(filesystem.paths(under: gadget).isEmpty)
    }

    @Test("strings, configurations and functions make their attributes; bad names are refused")
    func children() throws {
        let filesystem = FakeGadgetFilesystem()
        try filesystem.makeDirectory(gadget)
        try filesystem.makeDirectory(gadget + "/strings/0x409")
        #expect(filesystem.read(gadget + "/strings/0x409/serialnumber") == "")
        #expect(code { try filesystem.makeDirectory(gadget + "/strings/english") } == EINVAL)
        try filesystem.makeDirectory(gadget + "/configs/c.1")
        #expect(filesystem.exists(gadget + "/configs/c.1/MaxPower"))
        #expect(filesystem.exists(gadget + "/configs/c.1/bmAttributes"))
        #expect(filesystem.list(gadget + "/configs/c.1/strings") == [])
        #expect(code { try filesystem.makeDirectory(gadget + "/configs/c") } == EINVAL)
        try filesystem.makeDirectory(gadget + "/configs/c.1/strings/0x409")
        #expect(filesystem.read(gadget + "/configs/c.1/strings/0x409/configuration") == "")
        try filesystem.makeDirectory(gadget + "/functions/ncm.x")
        #expect(filesystem.read(gadget + "/functions/ncm.x/ifname") == "(unnamed net_device)")
        #expect(filesystem.exists(gadget + "/functions/ncm.x/qmult"))
        #expect(code { try filesystem.makeDirectory(gadget + "/functions/ecm.x") } == ENOENT)
        #expect(code { try filesystem.makeDirectory(gadget + "/functions/ncm") } == EINVAL)
        #expect(code { try filesystem.write("nonsense", to: gadget + "/functions/ncm.x/dev_addr") } == EINVAL)
        filesystem.ncmAvailable = false
        #expect(code { try filesystem.makeDirectory(gadget + "/functions/ncm.y") } == ENOENT)
        // Directories made by hand keep their parents.
        #expect(code { try filesystem.removeDirectory(gadget) } == ENOTEMPTY)
        #expect(code { try filesystem.removeDirectory(gadget + "/configs/c.1") } == ENOTEMPTY)
        #expect(filesystem.list(gadget + "/strings") == ["0x409"])
    }

    @Test("links: only from a configuration to a function of the same gadget; a linked function stays")
    func links() throws {
        let filesystem = FakeGadgetFilesystem()
        try filesystem.makeDirectory(gadget)
        try filesystem.makeDirectory(gadget + "/configs/c.1")
        try filesystem.makeDirectory(gadget + "/functions/ncm.x")
        #expect(code { try filesystem.makeLink(at: gadget + "/l", to: gadget + "/functions/ncm.x") } == EPERM)
        #expect(code { try filesystem.makeLink(at: gadget + "/configs/c.1/l", to: gadget + "/functions/ncm.y") } == ENOENT)
        #expect(code { try filesystem.makeLink(at: gadget + "/configs/c.1/l", to: gadget + "/strings") } == EINVAL)
        try filesystem.makeLink(at: gadget + "/configs/c.1/ncm.x", to: gadget + "/functions/ncm.x")
        #expect(filesystem.isLink(gadget + "/configs/c.1/ncm.x"))
        #expect(filesystem.list(gadget + "/configs/c.1/ncm.x").contains("ifname"))
        #expect(filesystem.read(gadget + "/configs/c.1/ncm.x/ifname") == "(unnamed net_device)")
        #expect(code { try filesystem.removeDirectory(gadget + "/functions/ncm.x") } == EBUSY)
        #expect(code { try filesystem.removeDirectory(gadget + "/configs/c.1") } == ENOTEMPTY)
        #expect(code { try filesystem.removeDirectory(gadget + "/configs/c.1/ncm.x") } == ENOTDIR)
        #expect(code { try filesystem.removeLink(gadget + "/functions/ncm.x") } == EISDIR)
        try filesystem.removeLink(gadget + "/configs/c.1/ncm.x")
        try filesystem.removeDirectory(gadget + "/functions/ncm.x")
        try filesystem.removeDirectory(gadget + "/configs/c.1")
        try filesystem.removeDirectory(gadget)
    }

    @Test("binding: a listed, free UDC and a linked function; the interface comes and goes with the function")
    func binding() throws {
        let filesystem = FakeGadgetFilesystem()
        try filesystem.makeDirectory(gadget)
        try filesystem.makeDirectory(gadget + "/configs/c.1")
        try filesystem.makeDirectory(gadget + "/functions/ncm.x")
        #expect(code { try filesystem.write("fe980000.usb", to: gadget + "/UDC") } == ENODEV) // nothing linked
        try filesystem.makeLink(at: gadget + "/configs/c.1/ncm.x", to: gadget + "/functions/ncm.x")
        #expect(code { try filesystem.write("nope", to: gadget + "/UDC") } == ENODEV)
        #expect(code { try filesystem.write("", to: gadget + "/UDC") } == ENODEV) // not bound
        try filesystem.write("fe980000.usb", to: gadget + "/UDC")
        #expect(filesystem.read(gadget + "/UDC") == "fe980000.usb")
        #expect(filesystem.read(gadget + "/functions/ncm.x/ifname") == "usb0")
        #expect(filesystem.read("/net/usb0/uevent") == "DEVTYPE=gadget\nINTERFACE=usb0")
        #expect(filesystem.read("/net/usb0/carrier") == "0")
        #expect(code { try filesystem.write("musb-hdrc.2.auto", to: gadget + "/UDC") } == EBUSY)

        // Another gadget cannot take the same controller.
        let other = "/cfg/usb_gadget/h"
        try filesystem.makeDirectory(other)
        try filesystem.makeDirectory(other + "/configs/c.1")
        try filesystem.makeDirectory(other + "/functions/ncm.y")
        try filesystem.makeLink(at: other + "/configs/c.1/ncm.y", to: other + "/functions/ncm.y")
        #expect(code { try filesystem.write("fe980000.usb", to: other + "/UDC") } == EBUSY)

        // Unbinding keeps the interface; removing the link of a bound gadget unbinds it.
        try filesystem.write("", to: gadget + "/UDC")
        #expect(filesystem.read(gadget + "/UDC") == "")
        #expect(filesystem.exists("/net/usb0"))
        try filesystem.write("fe980000.usb", to: gadget + "/UDC")
        #expect(filesystem.read(gadget + "/functions/ncm.x/ifname") == "usb0")
        try filesystem.removeLink(gadget + "/configs/c.1/ncm.x")
        #expect(filesystem.read(gadget + "/UDC") == "")
        try filesystem.removeDirectory(gadget + "/functions/ncm.x")
        #expect(!filesystem.exists("/net/usb0"))
    }

    @Test("failure injection and the operation log")
    func injection() throws {
        let filesystem = FakeGadgetFilesystem()
        filesystem.failure = { operation, path in operation == "mkdir" && path.hasSuffix("/g") ? EROFS : nil }
        #expect(code { try filesystem.makeDirectory(gadget) } == EROFS)
        #expect(!filesystem.exists(gadget))
        filesystem.failure = { operation, _ in operation == "read" ? EIO : nil }
        #expect(filesystem.read("/udc/fe980000.usb/state") == nil)
        filesystem.failure = nil
        #expect(filesystem.read("/udc/fe980000.usb/state") == "not attached")
        #expect(filesystem.mutatingCount == 1)
        #expect(filesystem.operations.map(\.description).prefix(2) == ["mkdir \(gadget)", "exists \(gadget)"])
    }
}
