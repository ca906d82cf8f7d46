import Foundation

/// What `camo-studio setup` makes: the v4l2loopback camera's number and label, and whether the snd-aloop
/// microphone comes with it.
public struct LoopbackSetupOptions: Sendable, Equatable {
    /// The ALSA card id the virtual microphone gets (`snd-aloop id=CamoMic`). `camo-studio camera` plays into
    /// `hw:CamoMic,0,0`; other programs record from its other end, `hw:CamoMic,1,0`.
    public static let microphoneCardID = "CamoMic"
    /// The card slot the microphone may take: `index=-2` lets ALSA pick any free slot but 0 (the value is a
    /// negated bit mask of allowed slots), so the loopback never becomes card 0, the one that programs without an
    /// audio configuration open as their default device.
    public static let microphoneCardIndex = -2
    /// Substreams per loopback device: two, so a second `camo-studio camera` (or a test tone) can play beside the
    /// first; each pairs with the capture substream of the same number.
    public static let microphoneSubstreams = 2
    /// The longest label the kernel keeps (v4l2loopback copies it into a 32-byte name).
    public static let maximumLabelLength = 31

    /// The device number: the camera becomes `/dev/video<videoNumber>`. The default 10 stays clear of real cameras,
    /// which take the low numbers.
    public var videoNumber: Int
    /// The name programs show for the camera ("Camo: desk").
    public var label: String
    /// Whether to load snd-aloop for the virtual microphone too.
    public var microphone: Bool

    /// Options for `/dev/video<videoNumber>` named `label`, with or without the microphone.
    public init(videoNumber: Int = 10, label: String = "Camo", microphone: Bool = true) {
        self.videoNumber = videoNumber
        self.label = label
        self.microphone = microphone
    }

    /// The device node the camera becomes.
    public var videoDevice: String { "/dev/video\(videoNumber)" }

    /// Throws when the kernel cannot take these values as they are: a device number outside 0...255, or a label that
    /// is empty, too long, or holds a comma (v4l2loopback's list separator) or a double quote.
    public func validate() throws(LoopbackSetupError) {
        guard (0...255).contains(videoNumber) else { throw .invalidVideoNumber(videoNumber) }
        if label.isEmpty { throw .invalidLabel(label, reason: "it is empty") }
        if label.utf8.count > Self.maximumLabelLength {
            throw .invalidLabel(label, reason: "it is longer than \(Self.maximumLabelLength) bytes, which the kernel keeps")
        }
        if label.contains(",") { throw .invalidLabel(label, reason: "a comma separates the labels of several devices") }
        if label.contains("\"") { throw .invalidLabel(label, reason: "the kernel reads a double quote as the end of the value") }
    }

    /// The command that loads the camera: `modprobe v4l2loopback exclusive_caps=1 video_nr=N card_label=LABEL`.
    /// exclusive_caps=1 makes the device report itself as a capture device once a writer feeds it, which is what
    /// Chrome needs to list it. The label is one argument; modprobe quotes a value with spaces itself.
    public var cameraCommand: [String] {
        ["modprobe", "v4l2loopback", "exclusive_caps=1", "video_nr=\(videoNumber)", "card_label=\(label)"]
    }

    /// The command that loads the microphone: `modprobe snd-aloop index=-2 id=CamoMic pcm_substreams=2`.
    public var microphoneCommand: [String] {
        ["modprobe", "snd-aloop", "index=\(Self.microphoneCardIndex)", "id=\(Self.microphoneCardID)",
         "pcm_substreams=\(Self.microphoneSubstreams)"]
    }

    /// The commands setup runs, in order.
    public var commands: [[String]] { microphone ? [cameraCommand, microphoneCommand] : [cameraCommand] }
}

/// A command as a shell line, quoting the arguments that need it: `modprobe v4l2loopback card_label='Camo: desk'`.
public func shellLine(_ arguments: [String]) -> String {
    arguments.map { argument in
        let plain = argument.allSatisfy { $0.isLetter || $0.isNumber || "-_=.,/:@%+".contains($0) }
        guard !plain || argument.isEmpty else { return argument }
        guard let equals = argument.firstIndex(of: "="), argument[..<equals].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
            return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        let value = argument[argument.index(after: equals)...]
        return argument[...equals] + "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }.joined(separator: " ")
}
