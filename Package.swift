// swift-tools-version: 6.2
import PackageDescription

// Swift 6 language mode everywhere; the same upcoming features on every target.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "glassd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "glassd", targets: ["glassd"]),
        .executable(name: "glassctl", targets: ["glassctl"]),
    ],
    // Every dependency pinned exactly: Package.resolved is not committed, so this is what makes
    // builds reproducible.
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", exact: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", exact: "1.8.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
    ],
    targets: [
        // C leaves: one shim target per system library, imported only by the adapter that owns it.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CLC3", pkgConfig: "lc3", providers: [.apt(["liblc3-dev"])]),
        .systemLibrary(
            name: "CPocketSphinx", pkgConfig: "pocketsphinx",
            providers: [.apt(["libpocketsphinx-dev", "pocketsphinx-en-us"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // Not "CZlib": ZIPFoundation already defines a module of that name.
        .systemLibrary(name: "CZlibCRC", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // The D-Bus contract, generated at build time from dbus/org.glassd.*.xml (ContractPlugin
        // runs ContractGenerator): the XML is its one source.
        .executableTarget(name: "ContractGenerator", path: "Sources/ContractGenerator", swiftSettings: strict),
        .plugin(
            name: "ContractPlugin", capability: .buildTool(), dependencies: ["ContractGenerator"],
            path: "Sources/ContractPlugin"),
        // Pure: the D-Bus contract's names, shared by daemon and client.
        .target(name: "GlassdAPI", swiftSettings: strict, plugins: ["ContractPlugin"]),
        // The contract in DBusKit's terms: each method's arguments and InterfaceSpec.Method, the
        // signals, the properties' specs, a struct per a{sv}, typed client proxies.
        .target(name: "GlassdContract", dependencies: ["GlassdAPI", "DBusKit"], swiftSettings: strict, plugins: ["ContractPlugin"]),
        // Pure: the concurrency helpers every layer shares (a broadcast, a watched value, a gate,
        // one deadline helper, backoff, a list of hooks), and a resource failure's error.
        .target(name: "Concurrency", swiftSettings: strict),
        // Pure: the Bluetooth link's vocabulary: addresses, GATT profiles, byte channels, link
        // events and states, the packet inbox, the reconnect loop, the paired device's store.
        .target(name: "LinkKit", dependencies: ["Concurrency"], swiftSettings: strict),
        // Pure: what an answer is (text, a list, a table, a link, a place, a number), for the
        // assistant that makes it and the glasses that lay it out.
        .target(name: "AnswerModel", swiftSettings: strict),
        // Pure: the assistant: the model clients (OpenAI chat with SSE, transcription, SUSI.AI),
        // their retries, the conversation's context budget, typed answers from the model. No C,
        // no D-Bus, no curl (HTTPKit carries its requests).
        .target(name: "AssistantEngine", dependencies: ["Concurrency", "AnswerModel"], swiftSettings: strict),

        // Pure: what every kind of glasses offers the product (session, events, status, answer
        // stream, kind descriptor); the product logic sees only this.
        .target(
            name: "Glasses",
            dependencies: [
                "Concurrency", "LinkKit", "AnswerModel", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Pure: Brilliant Frame (and Halo): the Lua REPL, file upload, glassd's own Lua app and its
        // data messages, over a ByteChannel and a clock.
        .target(
            name: "Frame",
            dependencies: [
                "Glasses", "Concurrency", "LinkKit", "Firmware", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.embedInCode("App/glassd_app.lua"), .embedInCode("App/glassd_hw.lua"), .embedInCode("App/main.lua")],
            swiftSettings: strict),

        // Pure: Brilliant Halo, a kind on the Frame's Lua session with its own profile (speaker
        // audio, MCUmgr).
        .target(
            name: "Halo", dependencies: ["Frame", "Glasses", "LinkKit", "MCUmgr"], resources: [.embedInCode("App/glassd_hw.lua")],
            swiftSettings: strict),

        // Pure: the Monocle protocol (raw REPL, script upload, data channel, session) over a
        // ByteChannel and a clock; the device scripts it uploads are built in.
        .target(
            name: "Monocle",
            dependencies: [
                "Glasses", "Concurrency", "LinkKit", "Firmware", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [
                .embedInCode("DeviceScripts/glassd_ui.py"), .embedInCode("DeviceScripts/glassd_link.py"),
                .embedInCode("DeviceScripts/glassd_media.py"), .embedInCode("DeviceScripts/main.py"),
                // Not one of the uploaded scripts: sent for an FPGA update only.
                .embedInCode("DeviceScripts/glassd_receiver.py"),
            ],
            swiftSettings: strict),

        // Pure: the firmware update over Nordic Secure DFU (package, control-point codec, object
        // transfer with resume) over two ByteChannels and a clock.
        .target(
            name: "Firmware",
            dependencies: [
                "Concurrency", "LinkKit", "Glasses", "CZlibCRC", .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: strict),

        // Pure: MCUmgr's SMP over a ByteChannel (CBOR, frames, the client with one request in
        // flight, the OS and image commands) and the MCUboot image file: what updates a Halo.
        .target(
            name: "MCUmgr",
            dependencies: [
                "Concurrency", "Glasses", "LinkKit", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The product on any glasses: voice, photo and typed questions, scene mode, the answer on the
        // glasses. No D-Bus: what it says goes out through protocols (QueryEvents).
        .target(
            name: "Product",
            dependencies: [
                "GlassdAPI", "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "Glasses", "Audio", "Scene", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The update engine, whatever the kind: the images, the manifest, the plan, the runner that
        // drives each kind's component updaters. It names no kind. No D-Bus: the job is a protocol.
        .target(
            name: "Updates",
            dependencies: [
                "Concurrency", "LinkKit", "Glasses", .product(name: "Logging", package: "swift-log"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: strict),

        // Pure: agent sessions with a TEN agent server (its HTTP API, transcripts and their chunks,
        // the microphone's audio for it), and the session that hands the glasses' voice to it.
        .target(
            name: "Agent",
            dependencies: ["AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "Glasses", "Audio", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),

        // Pure: instant local skills (time and date, arithmetic, unit conversion, the glasses' state,
        // repeating the last turn), answered without any server, matched conservatively.
        .target(name: "Skills", dependencies: ["AnswerModel"], swiftSettings: strict),
        // The wake phrase: pocketsphinx's keyphrase search on a thread of its own, and the host's microphone.
        .target(
            name: "Wake", dependencies: ["CPocketSphinx", "Audio", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),

        // Adapters.
        // A WebSocket client (RFC 6455) over a TCP socket or libcurl's TLS stream: the codec is pure,
        // a thread of its own connects, the event loop serves the open connection.
        .target(
            name: "WebSocket", dependencies: ["CCurl", "EventLoop", "Concurrency", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        // The process's one event loop (sd-event on one thread): the descriptors glassd waits on
        // (bus connections aside), its timers, and the executor of the actors that own them.
        .target(name: "EventLoop", dependencies: ["CSystemd", "Concurrency"], swiftSettings: strict),
        .target(name: "DBusKit", dependencies: ["CSystemd", "Concurrency"], swiftSettings: strict),
        .target(
            name: "Bluetooth",
            dependencies: ["DBusKit", "EventLoop", "Concurrency", "LinkKit", "Glasses", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(name: "HTTPKit", dependencies: ["CCurl", "AssistantEngine", "Concurrency", "EventLoop"], swiftSettings: strict),
        // The spoken question: 8-bit 8 kHz PCM to a denoised 16 kHz WAV, with end-of-speech events;
        // LC3 (Halo's speaker and microphone) both ways.
        .target(name: "Audio", dependencies: ["CSpeexDSP", "CLC3"], swiftSettings: strict),
        // The host's own audio, under swift-subprocess: whether glassd can reach it at all, the
        // tools it runs (from the system's directories, never PATH), the microphone for the wake
        // phrase and the speaker for an agent's speech.
        .target(
            name: "HostAudio",
            dependencies: [
                "Audio", "Concurrency", "Product", .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict),
        // Scene mode's frame filter: a camera JPEG decoded to grayscale, then dark, blurry, unchanged.
        .target(name: "Scene", dependencies: ["CTurboJPEG"], swiftSettings: strict),
        .target(
            name: "Storage",
            dependencies: ["AssistantEngine", "AnswerModel", "LinkKit", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        // Pure: TOML's shape checked before toml++ reads a file (that parser asserts on some
        // malformed input instead of reporting it).
        .target(name: "TOMLCheck", swiftSettings: strict),
        // Pure: the notification agent's rules (notify.toml: the minimum urgency, allow and deny
        // rules by app and category, quiet hours) and what they decide for a notification.
        .target(
            name: "NotifyRules", dependencies: ["TOMLCheck", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: strict),
        // Pure: the desktop calendar's next event (for the glance), from the iCalendar text and
        // source files Evolution Data Server hands the notification agent.
        .target(name: "DesktopCalendar", swiftSettings: strict),
        // glassd.conf: its shape checked whole at start-up (unknown keys, types, ranges), the
        // settings each part reads, the API key's sources, the privacy rule. No D-Bus.
        .target(
            name: "GlassdConfig",
            dependencies: ["Agent", "Skills", "Wake", "TOMLCheck", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: strict),
        .target(
            name: "GlassdDaemon",
            dependencies: [
                "GlassdAPI", "GlassdConfig", "GlassdContract", "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "DBusKit", "HTTPKit", "Storage", "CSystemd", "Bluetooth",
                "Glasses", "Product", "Updates", "Agent", "WebSocket", "Skills", "Wake",
                "Audio", "Scene", "HostAudio", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "glassd", dependencies: ["GlassdCommand", "Monocle", "Halo", "Frame"], swiftSettings: strict),
        // The command line, for any executable that registers its kinds of glasses.
        .target(
            name: "GlassdCommand",
            dependencies: [
                "GlassdDaemon", "GlassdConfig", "Glasses", "Concurrency", "DBusKit", "GlassdAPI", "Wake", "Audio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "glassctl",
            dependencies: [
                // CSystemd: sd_notify, for notify-agent's READY=1.
                "GlassdAPI", "GlassdContract", "DBusKit", "NotifyRules", "DesktopCalendar", "CSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),

        // The parsers of outside input under libFuzzer (Scripts/fuzz), or replaying a corpus.
        .target(name: "CFuzzer"),
        .executableTarget(
            name: "glassd-fuzz",
            dependencies: [
                "CFuzzer", "DBusKit", "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "GlassdConfig", "GlassdDaemon", "Monocle", "Firmware",
                "MCUmgr", "Scene", "NotifyRules", "DesktopCalendar",
            ],
            swiftSettings: strict),

        // What the unit tests share: a clock the test moves.
        .target(
            name: "TestSupport",
            dependencies: [
                "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "Firmware", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            path: "Tests/TestSupport", swiftSettings: strict),
        // A kind of glasses made only in the tests (two radios, one updatable component): what a new kind brings.
        .target(
            name: "FakeKinds", dependencies: ["Glasses", "Concurrency", "LinkKit", .product(name: "Logging", package: "swift-log")],
            path: "Tests/FakeKinds", swiftSettings: strict),
        // glassd as the tests build it: the fake kinds registered beside the real ones.
        .executableTarget(
            name: "glassd-twin", dependencies: ["GlassdCommand", "FakeKinds", "Monocle", "Frame"], path: "Tests/TwinDaemon",
            swiftSettings: strict),
        .testTarget(name: "ConcurrencyTests", dependencies: ["Concurrency", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "LinkKitTests", dependencies: ["LinkKit", "Concurrency", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "AssistantEngineTests", dependencies: ["AssistantEngine", "AnswerModel"], swiftSettings: strict),
        .testTarget(name: "GlassdContractTests", dependencies: ["GlassdContract", "GlassdAPI", "DBusKit"], swiftSettings: strict),
        .testTarget(name: "ContractGeneratorTests", dependencies: ["ContractGenerator"], swiftSettings: strict),
        .testTarget(name: "NotifyRulesTests", dependencies: ["NotifyRules"], swiftSettings: strict),
        .testTarget(name: "DesktopCalendarTests", dependencies: ["DesktopCalendar"], swiftSettings: strict),
        // glassctl's own logic without a bus: the notification agent's state, its reading of Notify calls.
        .testTarget(
            name: "GlassctlTests", dependencies: ["glassctl", "NotifyRules", "DesktopCalendar", "DBusKit", "GlassdAPI", "GlassdContract"], swiftSettings: strict),
        .testTarget(
            name: "FirmwareTests",
            dependencies: ["Firmware", "Concurrency", "LinkKit", "TestSupport", .product(name: "ZIPFoundation", package: "ZIPFoundation")],
            swiftSettings: strict),
        .testTarget(
            name: "MCUmgrTests",
            dependencies: ["MCUmgr", "Glasses", "Concurrency", "LinkKit", "TestSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .testTarget(name: "MonocleTests", dependencies: ["Monocle", "Glasses", "Concurrency", "LinkKit", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "GlassesTests", dependencies: ["Glasses", "Concurrency", "LinkKit", "AnswerModel", "TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "ProductTests",
            dependencies: [
                "Product", "Glasses", "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "Audio", "TestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "UpdatesTests",
            dependencies: [
                "Updates", "Firmware", "Glasses", "Concurrency", "LinkKit", "TestSupport", "FakeKinds", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "AgentTests", dependencies: ["Agent", "Glasses", "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "Audio", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "WebSocketTests", dependencies: ["WebSocket", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "Concurrency"], swiftSettings: strict),
        .testTarget(name: "SkillsTests", dependencies: ["Skills", "AnswerModel", "Concurrency"], swiftSettings: strict),
        .testTarget(name: "WakeTests", dependencies: ["Wake", "Audio", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "FrameTests", dependencies: ["Frame", "Glasses", "Concurrency", "LinkKit", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HaloTests", dependencies: ["Halo", "Frame", "Glasses", "LinkKit"], swiftSettings: strict),
        .testTarget(name: "HostAudioTests", dependencies: ["HostAudio", "Product", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(
            name: "AudioTests", dependencies: ["Audio", "Concurrency", "TestSupport"], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(
            name: "SceneTests", dependencies: ["Scene", "Concurrency"], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(
            name: "GlassdDaemonTests",
            dependencies: [
                "GlassdDaemon", "GlassdConfig", "Storage", "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "HTTPKit", "DBusKit", "Glasses", "Monocle", "Firmware", "Product",
                "Updates", "Agent", "Wake", "TestSupport", "TOMLCheck",
                // To build a database as an older glassd left it, for the migrations.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "glassd", "glassd-twin", "glassctl", "glassd-fuzz", "GlassdAPI", "GlassdContract", "DBusKit", "Bluetooth", "AssistantEngine", "Concurrency", "LinkKit", "AnswerModel", "Glasses", "Monocle", "Frame",
                "Halo", "Firmware", "Audio", "FakeKinds", "TestSupport",
                "HTTPKit", "EventLoop", "WebSocket",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strict),
    ]
)
