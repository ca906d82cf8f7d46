// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "camo-agent",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "camo-agent", targets: ["camo-agent"]),
        .executable(name: "camo-studio", targets: ["camo-studio"]),
        .executable(name: "camo-bench", targets: ["camo-bench"]),
        // Every module a library user imports is a product (the README's example uses the first three).
        .library(name: "CamoProducerKit", targets: ["CamoProducerKit"]),
        .library(name: "CamoMedia", targets: ["CamoMedia"]),
        .library(name: "CamoCapture", targets: ["CamoCapture"]),
        .library(name: "CamoAgentKit", targets: ["CamoAgentKit"]),
        .library(name: "CamoDiscovery", targets: ["CamoDiscovery"]),
        .library(name: "CamoWire", targets: ["CamoWire"]),
        .library(name: "CamoStudioKit", targets: ["CamoStudioKit"]),
        .library(name: "CamoCodec", targets: ["CamoCodec"]),
        .library(name: "CamoEvents", targets: ["CamoEvents"]),
        .library(name: "CamoRecording", targets: ["CamoRecording"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // MARK: System libraries (Debian -dev packages), each with a small shim header.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // No pkgConfig here: avahi-client's .pc adds -D_REENTRANT, which SwiftPM refuses with a warning;
        // the module map links avahi-client and avahi-common directly.
        .systemLibrary(name: "CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CZBar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CNetInterface"),
        // Only camo-bench uses it: ffmpeg's scaler as the reference for BGRA conversion speed.
        .systemLibrary(name: "CSwScale", pkgConfig: "libswscale", providers: [.apt(["libswscale-dev"])]),
        // No pkgConfig: the module map links avcodec, avformat and avutil directly (SwiftPM refuses some of
        // their .pc flags). libx264-dev only for X264_BUILD in the shim; libavcodec loads libx264 itself.
        .systemLibrary(
            name: "CFFmpeg",
            providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev", "libx264-dev"])]),
        // Debian's libavcodec has no libopenh264 wrapper, so CamoCodec drives libopenh264 itself.
        .systemLibrary(name: "COpenH264", providers: [.apt(["libopenh264-dev"])]),
        // GStreamer for live view: webrtcbin (WebRTC: ICE through libnice, DTLS-SRTP), gst-rtsp-server, appsrc.
        // The pkg-config entry brings the include paths; the module map links each library.
        .systemLibrary(
            name: "CGStreamer", pkgConfig: "gstreamer-webrtc-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev", "libgstreamer-plugins-bad1.0-dev", "libgstrtspserver-1.0-dev"])]),
        // libgpiod v1 (Debian bookworm's 1.6) for the doorbell's button and wired chime lines.
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        // SDL2: camo-studio's live preview window.
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev"])]),
        // PipeWire's client library: camo-studio's virtual microphone as a PipeWire source where PipeWire runs.
        .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3", providers: [.apt(["libpipewire-0.3-dev"])]),
        // SQLite: the index of the recordings (a handful of statements: no ORM on top).
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // The kernel's input event interface (linux/input.h, no library): the doorbell button as an input key.
        .systemLibrary(name: "CEvdev"),

        // MARK: camo-agent run's SIGTERM/SIGINT handlers, installed before main() (see its header).
        .target(name: "CProcessSignals"),
        // camo-bench's heap allocation counter (malloc and its siblings, passed on to glibc's).
        .target(name: "CAllocationCounter"),

        // MARK: The one pixel conversion loop of our own (packed 4:2:2 with any matrix; see its header).
        .target(name: "CPixelKernels"),

        // MARK: Pure protocol: framing, messages, Noise. No I/O.
        .target(
            name: "CamoWire",
            dependencies: [.product(name: "Crypto", package: "swift-crypto"), "CLibCrypto"]
        ),
        // MARK: The system-call layer: errno as one typed error (swift-system's Errno).
        .target(name: "CamoSystem", dependencies: [.product(name: "SystemPackage", package: "swift-system")]),
        // MARK: Files in a state directory: atomic writes, versioned JSON lists, corrupt files kept aside.
        .target(name: "CamoStorage", dependencies: ["CamoSystem"]),
        // MARK: What both command-line programs print the same way (tables).
        .target(name: "CamoCommandLine", dependencies: ["CamoWire"]),
        // MARK: Media types, the contract, pacing, packetizing, JPEG and PNG (libpng), scaling, test pattern.
        .target(
            name: "CamoMedia",
            dependencies: ["CYUV", "CTurboJPEG", "CPNG"]
        ),
        // MARK: H.264 encoding (x264 through libavcodec, openh264, probed hardware), decoding, MP4 recording.
        .target(
            name: "CamoCodec",
            dependencies: ["CamoMedia", "CFFmpeg", "COpenH264", "CYUV", .product(name: "Logging", package: "swift-log")]
        ),
        // MARK: Events: activity zones, motion, sound level, smoke/CO alarm patterns, event timing. No I/O, no threads.
        .target(name: "CamoEvents", dependencies: ["CamoMedia"]),
        // MARK: Recordings: modes, clips cut from the shared H.264 rendition with pre-roll, the bounded store and its index.
        .target(
            name: "CamoRecording",
            dependencies: ["CamoEvents", "CamoMedia", "CSQLite", .product(name: "Logging", package: "swift-log")]
        ),
        // MARK: Deadlines on an injected clock whose actions run on a SwiftNIO event loop (agent and studio handlers).
        .target(name: "CamoClockTimer", dependencies: ["CamoMedia", .product(name: "NIOCore", package: "swift-nio")]),
        // MARK: QR codes (libqrencode to draw, libzbar to read), written as PNG files through CamoMedia.
        .target(
            name: "CamoQR",
            dependencies: ["CamoMedia", "CQREncode", "CZBar"]
        ),
        // MARK: mDNS through avahi-daemon: publishing (agent) and browsing (studio).
        .target(
            name: "CamoDiscovery",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")]
        ),
        // MARK: Sources of media: V4L2 cameras, ALSA microphones, still images, synthetic pattern and tone.
        .target(
            name: "CamoUSB",
            dependencies: [
                "CNetInterface", "CamoSystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CamoCapture",
            dependencies: [
                "CamoMedia", "CamoSystem", "CV4L2", "CALSA", "CYUV", "CTurboJPEG", "CPixelKernels",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MARK: Live view beyond the studios: WebRTC viewers (webrtcbin) with talkback, and the RTSP server.
        .target(
            name: "CamoLive",
            dependencies: ["CGStreamer", "CamoMedia", .product(name: "Logging", package: "swift-log")]
        ),
        // MARK: The web server: live view over WHEP (leases, talkback), the JSON API, the page, tokens, HTTPS, /metrics.
        // The agent plugs in a WebBackend; nothing here depends on the agent's other modules.
        .target(
            name: "CamoWeb",
            dependencies: [
                "CamoMedia", "CamoStorage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MARK: The doorbell: its button (a GPIO line or an input key), the wired chime's line, the built-in chime sounds.
        .target(
            name: "CamoDoorbell",
            dependencies: ["CGPIOD", "CEvdev", .product(name: "Logging", package: "swift-log")]
        ),
        // MARK: The producer side: CamoController, sessions, control socket.
        .target(
            name: "CamoProducerKit",
            dependencies: [
                "CamoWire", "CamoMedia", "CamoClockTimer", "CamoStorage", "CamoSystem", "CamoUSB", "CamoDiscovery",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MARK: The agent as a service: everything `camo-agent run` runs, from one configuration value.
        .target(
            name: "CamoAgentKit",
            dependencies: [
                "CamoProducerKit", "CamoCapture", "CamoMedia", "CamoDiscovery", "CamoQR", "CamoStorage", "CamoSystem", "CamoUSB",
                "CamoCodec", "CamoLive", "CamoWeb", "CamoEvents", "CamoDoorbell", "CamoRecording",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MARK: The receiving side.
        .target(
            name: "CamoStudioKit",
            dependencies: [
                "CamoWire", "CamoMedia", "CamoClockTimer", "CamoStorage", "CamoDiscovery", "CamoCodec",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Thin executables.
        .executableTarget(
            name: "camo-agent",
            dependencies: [
                "CamoAgentKit", "CamoProducerKit", "CamoCapture", "CamoMedia", "CamoWire", "CamoQR", "CamoStorage", "CamoCommandLine", "CamoUSB", "CamoCodec",
                "CamoWeb", "CamoEvents", "CamoRecording", "CProcessSignals",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The studio's virtual camera (v4l2loopback) and microphone, and the setup that makes them appear.
        .target(
            name: "CamoVirtualDevices",
            dependencies: [
                "CamoMedia", "CamoStudioKit", "CamoSystem", "CV4L2", "CALSA", "CYUV", "CPipeWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The live preview window (SDL2).
        .target(name: "CamoPreview", dependencies: ["CamoMedia", "CSDL2", .product(name: "Logging", package: "swift-log")]),
        .executableTarget(
            name: "camo-studio",
            dependencies: [
                "CamoStudioKit", "CamoMedia", "CamoWire", "CamoQR", "CamoStorage", "CamoCommandLine", "CamoDiscovery",
                "CamoVirtualDevices", "CamoPreview",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "camo-bench",
            dependencies: [
                "CamoWire", "CamoMedia", "CamoCapture", "CamoCodec", "CTurboJPEG", "CYUV", "CSwScale", "CamoProducerKit", "CamoStudioKit", "CamoEvents",
                "CAllocationCounter", "CLibCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // The bare AES-GCM seal the send path is measured against.
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // MARK: The README's library example, compiled in CI (Tests/DeploymentTests checks the README shows this file).
        .executableTarget(
            name: "desk-camera",
            dependencies: [
                "CamoProducerKit", "CamoCapture", "CamoMedia",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/DeskCamera"
        ),

        // MARK: Tests (Swift Testing).
        // What tests share and production code must not have: the manual clock, a seeded random generator.
        .target(name: "CamoTestSupport", dependencies: ["CamoMedia", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["CV4L2", "CALSA", "CAvahi", "CQREncode", "CZBar", "CPNG", "CYUV", "CTurboJPEG"]),
        // The QR payload parser against pairing-fixtures/, QR rendering and scanning (ours and zbarimg), PNG.
        .testTarget(name: "PairingFixtureTests", dependencies: ["CamoWire", "CamoQR", "CamoMedia", "CamoCapture", "CamoTestSupport"]),
        // Against a real avahi-daemon on loopback, observed with python-zeroconf; one serialized suite.
        .testTarget(name: "DiscoveryTests", dependencies: ["CamoDiscovery", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "CamoWireTests", dependencies: ["CamoWire", "CamoTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            resources: [.copy("Fixtures")]),
        .testTarget(name: "CamoMediaTests", dependencies: ["CamoMedia", "CamoCapture", "CamoTestSupport"]),
        .testTarget(name: "CamoRecordingTests", dependencies: ["CamoRecording", "CamoEvents", "CamoMedia", "CamoCodec", "CamoTestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoEventsTests", dependencies: ["CamoEvents", "CamoMedia", "CamoTestSupport"]),
        .testTarget(name: "CamoCaptureTests", dependencies: ["CamoTestSupport", "CamoCapture", "CamoMedia", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoProducerKitTests", dependencies: ["CamoTestSupport", "CamoProducerKit", "CamoClockTimer", "CamoUSB", "CamoStudioKit", "CamoCapture", "CamoStorage", "CamoWire"]),
        .testTarget(
            name: "CamoAgentKitTests",
            dependencies: [
                "CamoAgentKit", "CamoProducerKit", "CamoStudioKit", "CamoWire", "CamoMedia", "CamoRecording",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "CamoWebTests",
            dependencies: [
                "CamoWeb", "CamoTestSupport", "CamoMedia", .product(name: "Logging", package: "swift-log"),
                // The webhook tests' receiver: a small HTTP(S) server on 127.0.0.1.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        .testTarget(name: "CamoCodecTests", dependencies: ["CamoCodec", "CamoMedia", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoLiveTests", dependencies: ["CamoLive", "CamoCodec", "CamoMedia", "CamoTestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoDoorbellTests", dependencies: ["CamoDoorbell", "CamoTestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoVirtualDevicesTests", dependencies: ["CamoVirtualDevices", "CamoMedia", "CamoTestSupport", "CYUV", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoPreviewTests", dependencies: ["CamoPreview", "CamoMedia", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoUSBTests", dependencies: ["CamoUSB", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "CamoStudioKitTests", dependencies: ["CamoStudioKit", "CamoTestSupport", "CamoStorage", "CamoWire", "CamoDiscovery", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "CamoMedia", "CamoStudioKit", "CamoWire", "CamoTestSupport", "CamoVirtualDevices",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["chrome-offer.sdp"]),
        // Run inside a qemu guest against the kernel's vivid driver (scripts/vm-test), never on the host directly.
        .testTarget(
            name: "HardwareTests",
            dependencies: [
                "CamoMedia", "CamoStudioKit", "CamoCapture", "CALSA", "CamoAgentKit", "CamoDoorbell", "CamoLive", "CamoTestSupport",
                "CamoVirtualDevices",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The udev rules, systemd unit and install script, checked with systemd's own tools.
        .testTarget(name: "DeploymentTests", dependencies: []),
    ]
)

// libFuzzer targets (Fuzz/), only when scripts/fuzz builds them (CAMO_FUZZ=1) with -sanitize=fuzzer,address: each
// is an executable whose main is libFuzzer's, so they stay out of the ordinary build.
if Context.environment["CAMO_FUZZ"] == "1" {
    let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
    let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
    // Modules too heavy to build here (NIO, webrtcbin, the agent's service) are replaced by slim ones of the same name:
    // only their files that parse outside bytes, from the same folder, with -enable-testing for @testable import.
    let slimModules: [(name: String, files: [String], dependencies: [Target.Dependency])] = [
        ("CamoProducerKit", ["AgentPaths.swift", "PairedDeviceStore.swift", "AgentIdentity.swift", "SettingsCatalog.swift", "SettingsValues.swift"],
         ["CamoStorage", "CamoWire", "CamoMedia", logging]),
        ("CamoStudioKit", ["StudioState.swift", "StudioIdentity.swift", "H264Receiver.swift", "StudioClientError.swift", "StudioEvent.swift", "AVSyncAnalyzer.swift"],
         ["CamoStorage", "CamoWire", "CamoCodec", "CamoMedia", logging, crypto]),
        ("CamoAgentKit", ["AgentConfiguration.swift", "AgentConfigurationLoader.swift"], ["CamoCapture", "CamoMedia", "CamoProducerKit", logging]),
        ("CamoLive", ["WebRTCSDP.swift", "WebRTCOffer.swift", "WebRTCErrors.swift"], ["CGStreamer"]),
        ("CamoWeb", ["WebRequest.swift", "ClientAddress.swift", "WebTokenStore.swift", "WebhookURL.swift", "WebhookError.swift", "WebSessionBook.swift", "WebError.swift"],
         [crypto]),
    ]
    for slim in slimModules {
        package.targets.removeAll { $0.name == slim.name }
        package.targets.append(.target(
            name: slim.name, dependencies: slim.dependencies, path: "Sources/\(slim.name)", sources: slim.files,
            swiftSettings: [.unsafeFlags(["-enable-testing"])]))
    }
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("FuzzWireConnection", ["CamoWire"]),
        ("FuzzAppMessage", ["CamoWire"]),
        ("FuzzPairingPayload", ["CamoWire"]),
        ("FuzzNoiseHandshake", ["CamoWire"]),
        ("FuzzStateFiles", ["CamoProducerKit", "CamoStudioKit", "CamoAgentKit", "CamoWire", "CamoStorage", logging]),
        ("FuzzSettings", ["CamoProducerKit", "CamoWire", "CamoStorage", "CamoMedia", logging]),
        ("FuzzZones", ["CamoEvents", "CamoMedia"]),
        ("FuzzSDPOffer", ["CamoLive"]),
        ("FuzzH264Receive", ["CamoStudioKit", "CamoCodec", "CamoMedia", "CamoWire", logging]),
        ("FuzzWebRequest", ["CamoWeb"]),
    ]
    package.targets.append(.target(name: "FuzzSupport", path: "Fuzz/FuzzSupport"))
    for (name, dependencies) in fuzzTargets {
        package.targets.append(.executableTarget(name: name, dependencies: dependencies + ["FuzzSupport"], path: "Fuzz/\(name)"))
    }
    // One `swift build` builds them all: the package keeps only the fuzz targets and the targets they need.
    var needed: Set<String> = []
    var pending = fuzzTargets.map(\.name) + ["FuzzSupport"]
    while let name = pending.popLast() {
        guard needed.insert(name).inserted, let target = package.targets.first(where: { $0.name == name }) else { continue }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): pending.append(name)
            default: break
            }
        }
    }
    package.targets.removeAll { !needed.contains($0.name) }
    package.products = []
}
