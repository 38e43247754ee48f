// swift-tools-version: 6.0
import PackageDescription

// libFuzzer targets: build and run with scripts/fuzz (it passes -sanitize=fuzzer,address).
let package = Package(
    name: "FuzzTesting",
    dependencies: [.package(name: "framescope", path: "..")],
    targets: [.target(name: "FuzzDriver")] + ["FuzzDecode", "FuzzReassembly", "FuzzDissect", "FuzzSpec", "FuzzCapture", "FuzzInfer"].map { name in
        .executableTarget(
            name: name,
            dependencies: [
                "FuzzDriver",
                .product(name: "FramescopeCore", package: "framescope"),
                .product(name: "FramescopeCapture", package: "framescope"),
                .product(name: "FramescopeReport", package: "framescope"),
                .product(name: "FramescopeSynthetic", package: "framescope"),
            ])
    }
)
