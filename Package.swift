// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "jobgraph",
    products: [
        .executable(name: "jobgraph", targets: ["jobgraph"]),
        // A Swift program loads, checks, inspects and runs pipelines through these modules (`PipelineRun.run`).
        .library(name: "JobGraph", targets: ["JobGraphBasics", "JobGraphSystem", "YAMLNodes", "PipelineModel", "TaskGraph", "Execution", "Steps", "StateStore", "OutputCache", "ImageCodec", "Reporters", "PipelineRun"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // SHA-256 with the CPU's SHA instructions where it has them (see Sources/JobGraphBasics/SHA256.swift).
        .systemLibrary(name: "CNettle", pkgConfig: "nettle", providers: [.apt(["nettle-dev"])]),
        // libcurl's easy interface, loaded with dlopen on the first download (see Sources/CCurl/include/CCurl.h).
        .target(name: "CCurl"),
        // Child processes cloned without posix_spawn's per-child stack mapping (see Sources/CSpawn/Spawn.c).
        .target(name: "CSpawn"),
        .target(name: "JobGraphBasics", dependencies: ["CNettle"]),
        .target(name: "JobGraphSystem", dependencies: ["JobGraphBasics", "CSpawn"]),
        .target(name: "YAMLNodes", dependencies: ["JobGraphBasics", "CYAML"]),
        .target(name: "PipelineModel", dependencies: ["JobGraphBasics", "YAMLNodes"]),
        .target(name: "TaskGraph", dependencies: ["JobGraphBasics", "PipelineModel"]),
        .target(name: "Execution", dependencies: ["JobGraphBasics", "JobGraphSystem", "PipelineModel", "TaskGraph"]),
        .target(name: "ImageCodec", dependencies: ["JobGraphBasics", "CPNG", "CTurboJPEG"]),
        .target(name: "Steps", dependencies: ["JobGraphBasics", "JobGraphSystem", "PipelineModel", "Execution", "ImageCodec", "CCurl"]),
        .target(name: "StateStore", dependencies: ["JobGraphBasics", "JobGraphSystem", "CSQLite", "YAMLNodes", "PipelineModel", "TaskGraph", "Execution"]),
        // Restoring outputs by content key, on disk and over HTTP (docs/cache.md); Steps' HTTP client for the remote.
        .target(name: "OutputCache", dependencies: ["JobGraphBasics", "PipelineModel", "Execution", "StateStore", "Steps"]),
        .target(name: "Reporters", dependencies: ["JobGraphBasics", "PipelineModel", "TaskGraph", "Execution"]),
        .target(name: "SlurmExecutor", dependencies: ["JobGraphBasics", "JobGraphSystem", "PipelineModel", "TaskGraph", "Execution"]),
        .target(name: "PipelineRun", dependencies: [
            "JobGraphBasics", "JobGraphSystem", "PipelineModel", "TaskGraph", "Execution", "Steps", "StateStore", "OutputCache", "Reporters", "SlurmExecutor",
        ]),
        .target(name: "JobGraphCLI", dependencies: [
            "JobGraphBasics", "JobGraphSystem", "YAMLNodes", "PipelineModel", "TaskGraph", "Execution", "Steps", "StateStore", "OutputCache", "Reporters", "SlurmExecutor", "PipelineRun",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "jobgraph", dependencies: ["JobGraphCLI"]),
        // Fuzz target (libFuzzer with -D FUZZING, see Fuzz/run.sh); a plain build replays inputs.
        .executableTarget(name: "JobGraphFuzz", dependencies: ["JobGraphBasics", "PipelineModel", "TaskGraph"]),

        .target(name: "JobGraphTestSupport", dependencies: ["JobGraphBasics", "YAMLNodes", "PipelineModel", "TaskGraph", "Execution"], path: "Tests/JobGraphTestSupport"),
        .testTarget(name: "JobGraphBasicsTests", dependencies: ["JobGraphBasics", "JobGraphTestSupport"]),
        .testTarget(name: "JobGraphSystemTests", dependencies: ["JobGraphSystem", "JobGraphTestSupport"]),
        .testTarget(name: "YAMLNodesTests", dependencies: ["YAMLNodes", "JobGraphTestSupport"]),
        .testTarget(name: "PipelineModelTests", dependencies: ["PipelineModel", "Reporters", "JobGraphTestSupport"]),
        .testTarget(name: "TaskGraphTests", dependencies: ["TaskGraph", "Reporters", "JobGraphTestSupport"]),
        .testTarget(name: "ExecutionTests", dependencies: ["Execution", "Steps", "StateStore", "JobGraphSystem", "JobGraphTestSupport"]),
        .testTarget(name: "StepsTests", dependencies: ["Steps", "Execution", "JobGraphSystem", "JobGraphTestSupport"]),
        .testTarget(name: "ImageCodecTests", dependencies: ["ImageCodec", "JobGraphTestSupport"]),
        .testTarget(name: "StateStoreTests", dependencies: ["StateStore", "Execution", "YAMLNodes", "JobGraphTestSupport"]),
        .testTarget(name: "OutputCacheTests", dependencies: ["OutputCache", "Execution", "StateStore", "PipelineModel", "JobGraphTestSupport"]),
        .testTarget(name: "ReportersTests", dependencies: ["Reporters", "Execution", "JobGraphTestSupport"]),
        .testTarget(name: "JobGraphCLITests", dependencies: ["JobGraphCLI", "JobGraphTestSupport"]),
        .testTarget(name: "PipelineRunTests", dependencies: ["PipelineRun", "Execution", "Steps", "StateStore", "TaskGraph", "PipelineModel", "JobGraphSystem", "JobGraphTestSupport"]),
        .testTarget(name: "SlurmExecutorTests", dependencies: ["SlurmExecutor", "Steps", "Execution", "TaskGraph", "PipelineModel", "JobGraphSystem", "JobGraphTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// Release builds: generic code of one module (BinaryHeap, EventChannel, Locked) is specialised in the
// modules that call it, and exclusivity is not checked at run time (perf: 2% of a clean run's user
// time). Debug and ThreadSanitizer builds, which the tests and CI run, keep the checks.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"], .when(configuration: .release))]
}
