import Foundation
import Testing

/// Runs the built `framescope` binary, as a user would.
@Suite struct CLITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let sample = root.appendingPathComponent("samples/im-varint.pcap").path

    static var binary: String {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [besideTests, besideTests.deletingLastPathComponent(), root.appendingPathComponent(".build/debug")] {
            let candidate = directory.appendingPathComponent("framescope").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return root.appendingPathComponent(".build/debug/framescope").path
    }

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    func run(_ arguments: [String], stdin: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        if let stdin { process.standardInput = FileHandle(forReadingAtPath: stdin) }
        try process.run()
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self), stderr: String(decoding: stderrData, as: UTF8.self))
    }

    func temporaryDirectory() -> String {
        NSTemporaryDirectory() + "framescope-cli-\(UUID().uuidString)"
    }

    @Test func flowsPrintsAlignedRows() throws {
        let result = try run(["flows", Self.sample])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ID  CLIENT") == true)
        #expect(lines[1].contains("127.0.0.1:49382") && lines[1].contains("→  127.0.0.1:7001"))
        #expect(lines[1].contains("9248") && lines[1].contains("134288") && lines[1].contains("syn") && lines[1].contains("fin"))
        #expect(result.stdout.contains("1 connections, 173 packets (173 TCP)"))
    }

    @Test func flowsJSONIsStable() throws {
        let result = try run(["flows", "--format", "json", Self.sample])
        #expect(result.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["schema"] as? String == "framescope.flows/1")
        let connection = try #require((json["connections"] as? [[String: Any]])?.first)
        #expect(connection["id"] as? Int == 0)
        #expect(connection["client"] as? String == "127.0.0.1:49382")
        #expect(connection["start"] as? String == "syn" && connection["end"] as? String == "fin")
        let directions = try #require(connection["directions"] as? [[String: Any]])
        #expect(directions.map { $0["from"] as? String } == ["127.0.0.1:49382", "127.0.0.1:7001"])
        #expect(directions.map { $0["bytes"] as? Int } == [9248, 134288])
        // Sorted keys and identical output on a second run.
        #expect(try run(["flows", "--format", "json", Self.sample]).stdout == result.stdout)
    }

    @Test func extractWritesStreamsAndAnIndex() throws {
        let out = temporaryDirectory() + "/nested"
        let result = try run(["extract", Self.sample, "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let index = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/index.json"))) as? [String: Any])
        #expect(index["schema"] as? String == "framescope.extract/1")
        let streams = try #require(index["streams"] as? [[String: Any]])
        #expect(streams.count == 2)
        let names = streams.compactMap { $0["file"] as? String }
        #expect(names == ["000000-127.0.0.1.49382-127.0.0.1.7001.bin", "000000-127.0.0.1.7001-127.0.0.1.49382.bin"])
        let sizes = try names.map { try FileManager.default.attributesOfItem(atPath: out + "/" + $0)[.size] as? Int }
        #expect(sizes == [9248, 134288])
    }

    @Test func readsStandardInput() throws {
        let result = try run(["flows", "-"], stdin: Self.sample)
        #expect(result.status == 0)
        #expect(result.stdout.contains("134288"))
    }

    @Test func aTruncatedCaptureStillReportsItsFlowsAndExitsOne() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.sample))
        let path = temporaryDirectory() + ".pcap"
        try data.prefix(data.count - 100).write(to: URL(fileURLWithPath: path))
        let result = try run(["flows", path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("127.0.0.1:49382"))
        let errorLines = result.stderr.split(separator: "\n")
        #expect(errorLines.count == 1)
        #expect(errorLines[0].contains(path) && errorLines[0].contains("broken after 171 packets"))
    }

    @Test func aFileThatIsNotACaptureGivesOneLine() throws {
        let result = try run(["flows", Self.root.appendingPathComponent("Package.swift").path])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("Package.swift") && result.stderr.contains("not a pcap or pcapng capture"))
    }

    @Test func aBadFilterIsAUsageError() throws {
        let result = try run(["flows", "--filter", "tcp prot 80", Self.sample])
        #expect(result.status == 64)
        #expect(result.stderr.contains("invalid filter 'tcp prot 80'"))
    }

    @Test func filterAndCountNarrowTheInput() throws {
        let none = try run(["flows", "--filter", "tcp port 1", "--format", "json", Self.sample])
        #expect(none.stdout.contains("\"connections\" : [\n\n  ]") || none.stdout.contains("\"connections\" : []"))
        let three = try run(["flows", "-c", "3", "--format", "json", Self.sample])
        #expect(three.stdout.contains("\"total\" : 3"))
    }
}
