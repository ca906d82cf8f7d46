import Dispatch

/// Where the web server's request handling runs: a thread of its own (a serial dispatch queue), preferred by every
/// task the server starts, so the API and the live view's signalling answer while Swift's shared pool is busy with
/// other work (encoding, analysis, a test run's hundreds of tests on two cores). Actors the handlers call keep
/// their own isolation; plain async code and default actors run here while a request is handled.
///
/// Handlers must not block: one slow request holds back the others.
final class WebTaskExecutor: TaskExecutor {
    /// The one the server uses.
    static let shared = WebTaskExecutor(label: "camo.web.requests")

    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
