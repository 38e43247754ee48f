// swift-tools-version: 6.0
import PackageDescription

// Pipeline, one target per layer, dependencies pointing one way:
// CPcap (libpcap) → FramescopeCapture → FramescopeCore (decode → flows → reassembly → framing → statistics →
// analysis) → FramescopeReport → framescope. FramescopeProtobuf turns a protoc descriptor set into Core's
// schema; FramescopeSynthetic makes traffic for tests and the benchmark. docs/architecture.md walks through it.

// The release layout of the binary: each function in a section of its own, and the functions a
// typical run executes placed together (scripts/hot-functions lists them; names that no longer
// exist are skipped, costing only locality). The code a run touches then lies in a few pages,
// not in pages spread over 14 MB of code, each of which the kernel maps with its neighbours.
let packageRoot = String(#filePath.dropLast("Package.swift".count))
let functionSections: SwiftSetting = .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))

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
        // The Linux calls Glibc's module leaves out (renameat2), declared.
        .systemLibrary(name: "CLinux"),
        // Pure Swift hot path: packet decoding, flow table, TCP reassembly. No libpcap, no Foundation.
        // Cross-module optimization lets the command specialize the generic flow table for its sink
        // (static calls, known layouts) instead of running it through witness tables.
        // Optimized in debug builds too: the tests run framing inference, recovery and the
        // property tests hundreds of times, 30 times slower unoptimized (Core has no assert()).
        .target(
            name: "FramescopeCore",
            dependencies: ["CLinux"],
            swiftSettings: [
                .unsafeFlags(["-cross-module-optimization"]), .unsafeFlags(["-O"], .when(configuration: .debug)), functionSections,
            ]),
        // The only target that talks to libpcap.
        .target(name: "FramescopeCapture", dependencies: ["FramescopeCore", "CPcap"], swiftSettings: [functionSections]),
        .target(name: "FramescopeReport", dependencies: ["FramescopeCore"], swiftSettings: [functionSections]),
        // Synthetic traffic for tests, fuzzing and the benchmark (framescope synth); not on the analysis path.
        .target(name: "FramescopeSynthetic", dependencies: ["FramescopeCore"], swiftSettings: [functionSections]),
        .target(name: "FramescopeProtobuf", dependencies: ["FramescopeCore"], swiftSettings: [functionSections]),
        .executableTarget(
            name: "framescope",
            dependencies: [
                "FramescopeCore", "FramescopeCapture", "FramescopeReport", "FramescopeProtobuf", "FramescopeSynthetic",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The Swift runtime linked in (release only): 3 MB less peak RSS in every run and a
            // quarter less start-up, measured. The two libraries are what FoundationEssentials (which
            // swift-argument-parser imports) needs statically; `swift build --static-swift-stdlib`
            // adds them itself, a linker setting does not. Linked by lld (in the Swift toolchain):
            // the hot functions first, relative relocations packed (1 MB of them read at start-up
            // otherwise) and no symbols exported: 2.8 MiB less peak RSS in every run, measured.
            swiftSettings: [functionSections],
            linkerSettings: [
                .unsafeFlags(
                    ["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims",
                     "-use-ld=lld", "-Xlinker", "--symbol-ordering-file=\(packageRoot)scripts/hot-functions.txt",
                     "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                     "-Xlinker", "--no-export-dynamic"],
                    .when(configuration: .release))
            ]
        ),
        // The benchmark's floor: a bare pcap_next_ex loop (scripts/bench).
        .executableTarget(name: "pcap-floor", dependencies: ["CPcap"]),
        .testTarget(name: "FramescopeCoreTests", dependencies: ["FramescopeCore", "FramescopeSynthetic"]),
        .testTarget(
            name: "FramescopeCaptureTests", dependencies: ["FramescopeCapture", "FramescopeReport", "FramescopeProtobuf", "FramescopeSynthetic"], exclude: ["Fixtures"]),
        .testTarget(name: "FramescopeCLITests", dependencies: ["framescope", "FramescopeCore", "FramescopeSynthetic"], exclude: ["Fixtures"]),
    ]
)
