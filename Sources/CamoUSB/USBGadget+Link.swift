import Foundation
import Logging

/// The link `camo-agent usb up` leaves: where the gadget is bound and its configured interface.
public struct USBLinkUp: Sendable, Equatable {
    /// The UDC the gadget is bound to.
    public var udc: String
    /// The gadget's network interface, with the agent's IPv4 address.
    public var interface: String
}

/// Why the link did not come up after the gadget was bound; the text says what to do.
public enum USBLinkError: Error, Sendable, CustomStringConvertible {
    /// The gadget could not be made or bound.
    case gadget(USBGadgetError)
    /// Bound, but its network interface did not appear in time.
    case noInterface(udc: String, waited: Double)
    /// The interface is there, but giving it its address failed.
    case address(interface: String, address: String, reason: String)

    public var description: String {
        switch self {
        case .gadget(let error):
            "\(error)"
        case .noInterface(let udc, let waited):
            "the gadget is bound to \(udc) but its network interface did not appear within \(waited) s; `camo-agent usb status` shows the state, `camo-agent usb down` removes it"
        case .address(let interface, let address, let reason):
            "the gadget is up on \(interface), but giving it \(address)/16 failed: \(reason)"
        }
    }
}

extension USBGadget {
    /// Makes and binds the gadget (``up(udc:logger:)``), waits up to `wait` seconds for its network interface
    /// (and, where udev runs, for udev to have handled it: its rule may rename the interface, which the kernel
    /// refuses once it is up), then gives it the agent's address. Setting an address the udev rule already set
    /// changes nothing; without the rule this is what configures the link.
    public func bringUpLink(udc: String?, wait: Double, logger: Logger) throws(USBLinkError) -> USBLinkUp {
        let bound: String
        do {
            bound = try up(udc: udc, logger: logger)
        } catch {
            throw .gadget(error)
        }
        let deadline = Date().addingTimeInterval(max(0, wait))
        var interface = interfaceName()
        while interface == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            interface = interfaceName()
        }
        guard var interface else { throw .noInterface(udc: bound, waited: wait) }
        if FileManager.default.fileExists(atPath: "/run/udev/control") {
            let index = InterfaceAddresses.index(of: interface)
            while index != 0, !FileManager.default.fileExists(atPath: "/run/udev/data/n\(index)"), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
            }
            interface = interfaceName() ?? interface
        }
        do {
            try InterfaceAddresses.configureIPv4(interface: interface, address: identity.agentIPv4, prefix: 16)
        } catch {
            throw .address(interface: interface, address: identity.agentIPv4, reason: "\(error)")
        }
        return USBLinkUp(udc: bound, interface: interface)
    }
}
