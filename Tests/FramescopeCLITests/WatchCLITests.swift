import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Live capture on loopback needs root or CAP_NET_RAW (CI runs as root).
let canCapture = geteuid() == 0

@Suite(.serialized) struct WatchCLITests {
    let cli = CLITests()
    static let traffic = CLITests.root.appendingPathComponent("Tests/FramescopeCLITests/Fixtures/loopback_traffic.py").path
    /// Ports unlikely to collide with another test run on the machine.
    static let basePort = 20_000 + Int(getpid() % 10_000) * 2

    struct Counts: Equatable {
        var byServerPort: [Int: [Int]]
    }

    func counts(_ json: String) throws -> Counts {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var result: [Int: [Int]] = [:]
        for c in report["connections"] as? [[String: Any]] ?? [] {
            let server = c["server"] as! String
            let port = Int(server.split(separator: ":").last!)!
            let figures = (c["directions"] as! [[String: Any]]).map { $0["figures"] as? [String: Any] ?? [:] }
            result[port] = figures.map { $0["messages"] as? Int ?? 0 }  // a connection's zero figures are left out
            #expect(figures.allSatisfy { $0["malformed"] == nil })
        }
        return Counts(byServerPort: result)
    }

    @Test(.enabled(if: canCapture, "capturing on lo needs root or CAP_NET_RAW/CAP_NET_ADMIN; run the tests as root"))
    func watchCountsWhatWasSentAndItsSavedCaptureAgrees() throws {
        let (varintPort, lengthPort) = (Self.basePort, Self.basePort + 1)
        let pcap = scratchDirectory + "framescope-watch-\(UUID().uuidString).pcap"
        let (liveMessages, fileMessages) = (pcap + ".live.ndjson", pcap + ".file.ndjson")
        let dissectors = ["--dissector", "\(varintPort)=varint", "--dissector", "\(lengthPort)=length:offset=0,width=4"]
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: CLITests.binary)
        watch.arguments = ["watch", "lo", "--duration", "5", "--interval", "0.5", "--filter", "tcp port \(varintPort) or tcp port \(lengthPort)",
                           "--format", "json", "--write", pcap, "--messages", liveMessages] + dissectors
        let out = Pipe(), err = Pipe()
        watch.standardOutput = out
        watch.standardError = err
        try watch.run()
        Thread.sleep(forTimeInterval: 1.5)
        let sender = Process()
        sender.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sender.arguments = ["python3", Self.traffic, String(varintPort), String(lengthPort), "40", "70"]
        try sender.run()
        sender.waitUntilExit()
        #expect(sender.terminationStatus == 0)
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watch.waitUntilExit()
        #expect(watch.terminationStatus == 0, "\(stderr)")
        let expected = Counts(byServerPort: [varintPort: [40, 70], lengthPort: [40, 70]])
        #expect(try counts(stdout) == expected)
        // The JSON report owns standard output; the interval lines went to standard error.
        #expect(stderr.split(separator: "\n").filter { $0.hasPrefix("elapsed=") }.count >= 5)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
        let capture = try #require(report["capture"] as? [String: Any])
        #expect(capture["interface"] as? String == "lo" && capture["kernelDrops"] as? Int == 0)
        try cli.expectValidReport(stdout)
        // Re-analyzing the saved packets gives the same figures.
        let again = try cli.run(["analyze", pcap, "--format", "json", "--messages", fileMessages] + dissectors)
        #expect(again.status == 0)
        #expect(try counts(again.stdout) == expected)
        // watch and analyze build the same chain: --messages lists the same messages, line for line.
        let live = try String(contentsOfFile: liveMessages, encoding: .utf8), file = try String(contentsOfFile: fileMessages, encoding: .utf8)
        #expect(live.split(separator: "\n").count == 2 * (40 + 70))
        #expect(live == file)
    }

    @Test(.enabled(if: canCapture, "capturing on lo needs root or CAP_NET_RAW/CAP_NET_ADMIN; run the tests as root"))
    func offATerminalEachIntervalIsOneParsableLine() throws {
        let result = try cli.run(["watch", "lo", "--duration", "1.6", "--interval", "0.4", "--filter", "tcp port 1", "--dissector", "varint"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let pattern = #/^elapsed=\d+\.\d\d packets=\d+ pps=\d+\.\d bytes=\d+ bps=\d+\.\d drops=\d+ analysis_drops=\d+ idle=(\d+\.\d|-) connections=\d+ messages=\d+ mps=\d+\.\d partial=\d+(\.\d)?% merged=\d+(\.\d)?% naive_loss=\d+(\.\d)?% malformed=\d+( invalid_protobuf=\d+)?$/#
        let intervalLines = lines.prefix { $0.hasPrefix("elapsed=") }
        #expect(intervalLines.count >= 3)
        for line in intervalLines { #expect(line.wholeMatch(of: pattern) != nil, "\(line)") }
        #expect(lines.dropFirst(intervalLines.count).first?.hasPrefix("captured on lo (filter: tcp port 1) for ") == true)
        #expect(!result.stdout.contains("\u{1B}["))  // no escape codes off a terminal
    }

    /// Run under `nohup`, a SIGHUP is ignored as tcpdump ignores it: the capture goes on, and
    /// SIGTERM still ends it with the report. (The test runner's threads block nearly every
    /// signal and the child inherits that mask: this also proves watch unblocks what it handles.)
    @Test(.enabled(if: canCapture, "capturing on lo needs root or CAP_NET_RAW/CAP_NET_ADMIN; run the tests as root"))
    func underNohupASighupIsIgnored() throws {
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: "/usr/bin/nohup")
        watch.arguments = [CLITests.binary, "watch", "lo", "--filter", "tcp port 1", "--dissector", "varint", "--format", "json"]
        let out = Pipe()
        watch.standardOutput = out
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        Thread.sleep(forTimeInterval: 1.5)
        kill(watch.processIdentifier, SIGHUP)
        Thread.sleep(forTimeInterval: 1)
        #expect(watch.isRunning, "SIGHUP ended a watch run under nohup")
        kill(watch.processIdentifier, SIGTERM)
        let report = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watch.waitUntilExit()
        #expect(watch.terminationStatus == 0)
        #expect(report.contains("\"capture\""))
    }

    @Test(.enabled(if: canCapture, "needs root to drop to an unprivileged user"))
    func withoutPermissionItSaysHowToGetIt() throws {
        let reachable = try cli.run(["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/test", "-x", CLITests.binary], executable: "/usr/bin/setpriv")
        guard reachable.status == 0 else {
            print("SKIP permission test: user nobody cannot reach \(CLITests.binary) (a parent directory is not world-readable)")
            return
        }
        let result = try cli.run(
            ["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", CLITests.binary, "watch", "lo", "--duration", "1"],
            executable: "/usr/bin/setpriv")
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.stderr.contains("no permission to capture on lo: run as root"))
        #expect(result.stderr.contains("sudo setcap cap_net_raw,cap_net_admin=eip "))
    }

    /// Inference reads the streams before framing them: watch refuses it up front (before any
    /// capture starts, so no root is needed) instead of accepting it and dissecting nothing.
    @Test func inferenceIsRefusedUpFrontWithWhatToDo() throws {
        for arguments in [["watch", "lo", "--dissector", "auto"], ["watch", "lo", "--dissector", "auto", "--dissector", "9000=varint"]] {
            let result = try cli.run(arguments + ["--duration", "1"])
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(result.stderr.contains("watch cannot infer the framing live") && result.stderr.contains("analyze FILE.pcap --dissector auto"))
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func anUnknownInterfaceListsTheValidOnes() throws {
        let result = try cli.run(["watch", "nosuch0", "--duration", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("no capture interface 'nosuch0'; available: ") && result.stderr.contains("lo"))
    }

    @Test(.enabled(if: canCapture, "needs root to make a network namespace"))
    func anInterfaceThatIsDownSaysHowToBringItUp() throws {
        let namespace = "framescope-test-\(getpid())"
        _ = try cli.run(["netns", "add", namespace], executable: "/usr/sbin/ip")
        defer { _ = try? cli.run(["netns", "del", namespace], executable: "/usr/sbin/ip") }
        // In a new namespace even lo is down.
        let result = try cli.run(["netns", "exec", namespace, CLITests.binary, "watch", "lo", "--duration", "1"], executable: "/usr/sbin/ip")
        #expect(result.status == 1)
        #expect(result.stderr.contains("interface lo is down: bring it up with 'sudo ip link set lo up'"), "\(result.stderr)")
    }

    @Test func aBadFilterIsAUsageError() throws {
        let result = try cli.run(["watch", "lo", "--filter", "tcp prot 80", "--duration", "1"])
        #expect(result.status == (canCapture ? 64 : 1))
        if canCapture { #expect(result.stderr.contains("invalid filter 'tcp prot 80'")) }
    }

    @Test func listShowsInterfacesWithAddresses() throws {
        let result = try cli.run(["watch", "--list"])
        #expect(result.status == 0)
        let lo = result.stdout.split(separator: "\n").first { $0.hasPrefix("lo ") }
        #expect(lo?.contains("127.0.0.1") == true && lo?.contains("loopback") == true)
    }
}
