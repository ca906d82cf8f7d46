import CamoUSB
import Foundation
import Logging

/// A logger that prints nothing.
let quietLogger = Logger(label: "camo-usb-tests") { _ in SwiftLogNoOpLogHandler() }

/// The identity every gadget test uses.
let testIdentity = USBLinkIdentity(machineId: "0123456789abcdef0123456789abcdef\n", version: "0.4.0")

/// Records what `USBGadget` asks the kernel to do, and answers with `handler` (nil: success).
final class KernelRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var _steps: [USBGadget.KernelStep] = []
    private let handler: @Sendable (USBGadget.KernelStep) -> String?

    init(_ handler: @escaping @Sendable (USBGadget.KernelStep) -> String? = { _ in "not expected in this test" }) {
        self.handler = handler
    }

    var steps: [USBGadget.KernelStep] { lock.withLock { _steps } }

    var closure: @Sendable (USBGadget.KernelStep) -> String? {
        { step in
            self.lock.withLock { self._steps.append(step) }
            return self.handler(step)
        }
    }
}

/// Fails the `k`-th mutating operation with `code`, and from then on every repetition of that same operation on
/// the same path (so a retry fails as well); nothing else.
final class FailAtStep: @unchecked Sendable {
    private let lock = NSLock()
    let step: Int
    let code: Int32
    private var seen = 0
    private var _failed: (operation: String, path: String)?

    init(_ step: Int, code: Int32 = EIO) {
        self.step = step
        self.code = code
    }

    /// The operation that was made to fail.
    var failed: (operation: String, path: String)? { lock.withLock { _failed } }

    var closure: @Sendable (String, String) -> Int32? {
        { operation, path in
            self.lock.withLock {
                guard FakeGadgetFilesystem.mutatingOperations.contains(operation) else { return nil }
                self.seen += 1
                if let failed = self._failed { return failed == (operation, path) ? self.code : nil }
                if self.seen == self.step {
                    self._failed = (operation, path)
                    return self.code
                }
                return nil
            }
        }
    }
}

/// A gadget manager over `filesystem` with the fake's paths and `kernel`.
func makeGadget(_ filesystem: FakeGadgetFilesystem, kernel: KernelRecorder = KernelRecorder(),
                identity: USBLinkIdentity = testIdentity) -> USBGadget {
    var gadget = USBGadget(identity: identity, filesystem: filesystem, kernel: kernel.closure)
    gadget.configfs = filesystem.configfs
    gadget.udcClass = filesystem.udcClass
    gadget.netClass = filesystem.netClass
    gadget.bindRetryPause = {}
    return gadget
}

/// What `up` threw, or nil when it succeeded.
func upError(_ gadget: USBGadget, udc: String? = nil) -> USBGadgetError? {
    do {
        try gadget.up(udc: udc, logger: quietLogger)
        return nil
    } catch {
        return error
    }
}

/// What `down` threw, or nil when it succeeded.
func downError(_ gadget: USBGadget) -> USBGadgetError? {
    do {
        try gadget.down(logger: quietLogger)
        return nil
    } catch {
        return error
    }
}

extension USBGadgetError {
    /// The paths of `.failed`, nil for any other case.
    var leftBehind: [String]? {
        if case .failed(_, let leftBehind) = self { return leftBehind }
        return nil
    }
}
