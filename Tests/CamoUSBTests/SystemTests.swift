import CamoUSB
import Foundation
import Testing

@Suite("SystemGadgetFilesystem on a temporary directory")
struct SystemGadgetFilesystemTests {
    /// A fresh directory, removed by `body`'s caller.
    private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("camo-usb-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try body(root)
    }

    @Test("mkdir, write, read, list, link, resolve, unlink, rmdir")
    func operations() throws {
        try withTemporaryDirectory { root in
            let filesystem = SystemGadgetFilesystem()
            #expect(filesystem.exists(root))
            try filesystem.makeDirectory(root + "/b")
            try filesystem.makeDirectory(root + "/a")
            #expect(filesystem.list(root) == ["a", "b"])
            #expect(filesystem.list(root + "/missing") == [])

            #expect(FileManager.default.createFile(atPath: root + "/a/attr", contents: Data()))
            try filesystem.write("0x1d6b", to: root + "/a/attr")
            // Written like `echo`, with a newline; read without it.
            #expect(FileManager.default.contents(atPath: root + "/a/attr") == Data("0x1d6b\n".utf8))
            #expect(filesystem.read(root + "/a/attr") == "0x1d6b")
            #expect(filesystem.read(root + "/missing") == nil)

            try filesystem.makeLink(at: root + "/b/link", to: root + "/a")
            #expect(filesystem.isLink(root + "/b/link"))
            #expect(!filesystem.isLink(root + "/a"))
            #expect(filesystem.resolve(root + "/b/link") == filesystem.resolve(root + "/a"))
            #expect(filesystem.resolve(root + "/b/link")?.hasSuffix("/a") == true)

            try filesystem.removeLink(root + "/b/link")
            #expect(!filesystem.exists(root + "/b/link"))
            try filesystem.removeDirectory(root + "/b")
            #expect(!filesystem.exists(root + "/b"))
        }
    }

    @Test("a dangling link exists and is a link, but resolves to nothing")
    func danglingLink() throws {
        try withTemporaryDirectory { root in
            let filesystem = SystemGadgetFilesystem()
            try filesystem.makeLink(at: root + "/link", to: root + "/gone")
            #expect(filesystem.exists(root + "/link"))
            #expect(filesystem.isLink(root + "/link"))
            #expect(filesystem.resolve(root + "/link") == nil)
            #expect(filesystem.list(root) == ["link"])
        }
    }

    @Test("failures carry the operation, the path and the errno")
    func failures() throws {
        try withTemporaryDirectory { root in
            let filesystem = SystemGadgetFilesystem()
            // configfs never creates files, and neither does write.
            #expect(throws: GadgetFilesystemError("write", root + "/missing", ENOENT)) {
                try filesystem.write("x", to: root + "/missing")
            }
            #expect(!filesystem.exists(root + "/missing"))
            #expect(throws: GadgetFilesystemError("mkdir", root + "/x/y", ENOENT)) {
                try filesystem.makeDirectory(root + "/x/y")
            }
            try filesystem.makeDirectory(root + "/d")
            #expect(throws: GadgetFilesystemError("mkdir", root + "/d", EEXIST)) {
                try filesystem.makeDirectory(root + "/d")
            }
            try filesystem.makeDirectory(root + "/d/e")
            #expect(throws: GadgetFilesystemError("rmdir", root + "/d", ENOTEMPTY)) {
                try filesystem.removeDirectory(root + "/d")
            }
            #expect(throws: GadgetFilesystemError("rmdir", root + "/nope", ENOENT)) {
                try filesystem.removeDirectory(root + "/nope")
            }
            #expect(throws: GadgetFilesystemError("unlink", root + "/nope", ENOENT)) {
                try filesystem.removeLink(root + "/nope")
            }
            #expect(throws: GadgetFilesystemError("symlink", root + "/d", EEXIST)) {
                try filesystem.makeLink(at: root + "/d", to: root)
            }
        }
    }
}

@Suite("InterfaceAddresses on this machine")
struct InterfaceAddressesTests {
    @Test("all() lists lo with 127.0.0.1, with the index of lo")
    func loopback() throws {
        let addresses = InterfaceAddresses.all()
        let lo = try #require(addresses.first { $0.interface == "lo" && $0.address == "127.0.0.1" })
        #expect(lo.index != 0)
        #expect(lo.index == InterfaceAddresses.index(of: "lo"))
        #expect(InterfaceAddresses.name(ofIndex: lo.index) == "lo")
        // Every address has its interface's index, and text without a scope.
        for address in addresses {
            #expect(address.index == InterfaceAddresses.index(of: address.interface), "\(address)")
            #expect(!address.address.contains("%"), "\(address)")
            #expect(!address.address.isEmpty)
        }
    }

    @Test("unknown interfaces have no index and no name")
    func unknown() {
        #expect(InterfaceAddresses.index(of: "camo-no-such-if") == 0)
        #expect(InterfaceAddresses.name(ofIndex: 0) == nil)
        #expect(InterfaceAddresses.name(ofIndex: UInt32.max) == nil)
    }

    @Test("configureIPv4 refuses a bad address or prefix before touching the interface")
    func configureRefusesBadInput() {
        #expect(throws: GadgetFilesystemError("configure", "lo not-an-address/16", EINVAL)) {
            try InterfaceAddresses.configureIPv4(interface: "lo", address: "not-an-address", prefix: 16)
        }
        #expect(throws: GadgetFilesystemError("configure", "lo 169.254.1.1/33", EINVAL)) {
            try InterfaceAddresses.configureIPv4(interface: "lo", address: "169.254.1.1", prefix: 33)
        }
        #expect(throws: GadgetFilesystemError("configure", "lo 169.254.1.1/-1", EINVAL)) {
            try InterfaceAddresses.configureIPv4(interface: "lo", address: "169.254.1.1", prefix: -1)
        }
    }

    @Test("the real classifier calls loopback loopback")
    func realClassifier() {
        let classifier = LinkClassifier()
        #expect(classifier.classify(localAddress: "127.0.0.1") == .loopback)
        #expect(classifier.classify(localAddress: "::1") == .loopback)
        #expect(classifier.classify(localAddress: "192.0.2.77") == .network)
        #expect(!classifier.isGadget("lo"))
    }
}
