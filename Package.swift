// swift-tools-version: 6.0
import PackageDescription

// Pipeline, one target per layer, dependencies pointing one way:
// CPcap (libpcap) → FramescopeCapture → FramescopeCore (decode → flows → reassembly → framing → statistics →
// analysis) → FramescopeReport → framescope. FramescopeProtobuf turns a protoc descriptor set into Core's
// schema; FramescopeSynthetic makes traffic for tests and the benchmark. docs/architecture.md walks through it.
let package = Package(
    name: "framescope",
    products: [
        .executable(name: "framescope", targets: ["framescope"]),
        .library(name: "FramescopeCore", targets: ["FramescopeCore"]),
        .library(name: "FramescopeCapture", targets: ["FramescopeCapture"]),
        .library(name: "FramescopeReport", targets: ["FramescopeReport"]),
        .library(name: "FramescopeSynthetic", targets: ["FramescopeSynthetic"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CPcap", pkgConfig: "libpcap", providers: [.apt(["libpcap-dev"])]),
        // Pure Swift hot path: packet decoding, flow table, TCP reassembly. No libpcap, no Foundation.
        // Cross-module optimization lets the command specialize the generic flow table for its sink
        // (static calls, known layouts) instead of running it through witness tables.
        // Optimized in debug builds too: the tests run framing inference, recovery and the
        // property tests hundreds of times, 30 times slower unoptimized (Core has no assert()).
        .target(
            name: "FramescopeCore",
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"]), .unsafeFlags(["-O"], .when(configuration: .debug))]),
        // The only target that talks to libpcap.
        .target(name: "FramescopeCapture", dependencies: ["FramescopeCore", "CPcap"]),
        .target(name: "FramescopeReport", dependencies: ["FramescopeCore"]),
        // Synthetic traffic for tests, fuzzing and the benchmark (framescope synth); not on the analysis path.
        .target(name: "FramescopeSynthetic", dependencies: ["FramescopeCore"]),
        .target(name: "FramescopeProtobuf", dependencies: ["FramescopeCore"]),
        .executableTarget(
            name: "framescope",
            dependencies: [
                "FramescopeCore", "FramescopeCapture", "FramescopeReport", "FramescopeProtobuf", "FramescopeSynthetic",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The Swift runtime linked in (release only): 3 MB less peak RSS in every run and a
            // quarter less start-up, measured. The two libraries are what FoundationEssentials (which
            // swift-argument-parser imports) needs statically; `swift build --static-swift-stdlib`
            // adds them itself, a linker setting does not.
            linkerSettings: [.unsafeFlags(["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"], .when(configuration: .release))]
        ),
        // The benchmark's floor: a bare pcap_next_ex loop (scripts/bench).
        .executableTarget(name: "pcap-floor", dependencies: ["CPcap"]),
        .testTarget(name: "FramescopeCoreTests", dependencies: ["FramescopeCore", "FramescopeSynthetic"]),
        .testTarget(
            name: "FramescopeCaptureTests", dependencies: ["FramescopeCapture", "FramescopeReport", "FramescopeProtobuf", "FramescopeSynthetic"], exclude: ["Fixtures"]),
        .testTarget(name: "FramescopeCLITests", dependencies: ["framescope", "FramescopeCore", "FramescopeSynthetic"], exclude: ["Fixtures"]),
    ]
)
