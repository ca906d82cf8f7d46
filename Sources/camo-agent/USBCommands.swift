import ArgumentParser
import CamoAgentKit
import CamoProducerKit
import CamoUSB
import Foundation
import Logging

/// `camo-agent usb up|down|status`: the USB network gadget that carries the link to a studio over the cable.
struct USB: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "usb",
        abstract: "Makes this machine a USB network device (CDC-NCM) so a studio reaches it over the cable.",
        discussion: """
            Needs root, a USB device controller (UDC) and the kernel's libcomposite and usb_f_ncm. The agent's end of \
            the link takes 169.254.X.Y derived from this machine's id; the studio's end takes its neighbour. Over the \
            cable a studio may connect without pairing (see `camo-agent run --usb-trust`).
            """,
        subcommands: [Up.self, Down.self, Status.self])

    static func identity() -> USBLinkIdentity {
        let machineId = ["/etc/machine-id", "/var/lib/dbus/machine-id"].lazy
            .compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
            .first { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        return USBLinkIdentity(machineId: machineId ?? ProcessInfo.processInfo.hostName, version: AgentVersion.software)
    }

    /// Warnings and errors only: the command prints what it did itself.
    static func logger() -> Logger {
        var logger = Logger(label: "camo.usb")
        logger.logLevel = .warning
        return logger
    }

    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("camo-agent usb: \(message)\n".utf8))
        return ExitCode.failure
    }

    struct Up: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Creates the gadget, binds it to a UDC and gives the link its address.")
        @Option(help: "The USB device controller to bind to (default: the first in /sys/class/udc).") var udc: String?
        @Option(help: "How long to wait for the gadget's network interface, in seconds.") var wait: Double = 5

        func run() throws {
            let logger = USB.logger()
            let gadget = USBGadget(identity: USB.identity())
            let link: USBLinkUp
            do {
                link = try gadget.bringUpLink(udc: udc, wait: wait, logger: logger)
            } catch {
                // The library says what to do in its own terms; the flag is this program's.
                if case .gadget(.udcNotFound) = error { throw USB.fail("\(error) (--udc names it.)") }
                throw USB.fail("\(error)")
            }
            print("USB gadget up: \(gadget.name) (\(USBLinkIdentity.hex(gadget.identity.vendorId)):\(USBLinkIdentity.hex(gadget.identity.productId)) \"\(gadget.identity.product)\", serial \(gadget.identity.serialNumber)), one CDC-NCM function, bound to \(link.udc)")
            let interface = link.interface
            print("interface \(interface): \(gadget.identity.agentIPv4)/16 and an IPv6 link-local address; the studio's end is \(gadget.identity.studioIPv4) (MAC \(USBLinkIdentity.formatMAC(gadget.identity.studioMAC)))")
        }
    }

    struct Down: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unbinds the gadget and removes every part of it.")

        func run() throws {
            let gadget = USBGadget(identity: USB.identity())
            do {
                let removed = try gadget.down(logger: USB.logger())
                print("USB gadget down: removed \(removed.count) parts (\(removed.first ?? "")… \(removed.last ?? ""))")
            } catch {
                throw USB.fail("\(error)")
            }
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Shows whether the gadget is up, where it is bound and its link.")
        @Flag(help: "Print the status as JSON.") var json = false

        func run() throws {
            let gadget = USBGadget(identity: USB.identity())
            let status = gadget.status()
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(status), as: UTF8.self))
                return
            }
            if !status.present {
                print("USB gadget: not up (controllers: \(status.controllers.isEmpty ? "none" : status.controllers.joined(separator: ", ")))")
                return
            }
            print("USB gadget: up, \(status.udc.isEmpty ? "not bound" : "bound to \(status.udc) (\(status.udcState ?? "state unknown"))")")
            if let interface = status.interface {
                let addresses = InterfaceAddresses.all().filter { $0.interface == interface }.map(\.address)
                print("interface \(interface): carrier \(status.carrier == true ? "yes (a studio is connected)" : "no"), addresses \(addresses.isEmpty ? "none" : addresses.joined(separator: ", "))")
            }
            print("link: agent \(status.agentIPv4), studio \(status.studioIPv4)")
        }
    }
}
