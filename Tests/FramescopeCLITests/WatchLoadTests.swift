import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `watch` under load, beside tcpdump capturing the same traffic at the same time: nothing the
/// plain capture tool keeps may be lost, the `--write` file must hold every packet, and rotation
/// must name and cut files as tcpdump does. Needs root (CI runs as root) and tcpdump.
@Suite(.serialized) struct WatchLoadTests {
    let cli = CLITests()
    static let fixtures = CLITests.root.appendingPathComponent("Tests/FramescopeCLITests/Fixtures").path
    static let port = 21_000 + Int(getpid() % 5_000) * 2
    static let tcpdump = ["/usr/bin/tcpdump", "/usr/sbin/tcpdump"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let ready = canCapture && tcpdump != nil
    static let reason: Comment = "needs root (or CAP_NET_RAW) and tcpdump (scripts/install-deps --test)"
    /// The soak measures the binary users run; under AddressSanitizer (scripts/test-asan) it would
    /// measure the sanitizer's cost instead, and scripts/test has run it on the release build.
    static let soakReady = ready && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ethtool")
        && ProcessInfo.processInfo.environment["FRAMESCOPE_ASAN"] == nil
    static let soakReason: Comment = "needs root, tcpdump and ethtool; not under AddressSanitizer (scripts/test runs it on the release build)"

    /// A process started with its standard error kept in a file (a pipe nobody reads while the
    /// test waits for standard output would fill and stall it).
    struct Started {
        let process: Process
        let stdout: Pipe
        let stderrPath: String

        /// Sends `signal` and collects what the process said.
        func stop(_ signal: Int32 = SIGINT) -> (status: Int32, stdout: String, stderr: String) {
            kill(process.processIdentifier, signal)
            let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            return (process.terminationStatus, out, err)
        }
    }

    func start(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Started {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stderrPath = scratchDirectory + "stderr-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let started = Started(process: process, stdout: Pipe(), stderrPath: stderrPath)
        process.standardOutput = started.stdout
        process.standardError = FileHandle(forWritingAtPath: stderrPath)
        try process.run()
        return started
    }

    /// tcpdump with the kernel buffer framescope uses by default, so both get the same chance;
    /// started with no signal blocked (the test runner's threads block nearly all, a spawned child
    /// inherits that mask, and tcpdump, unlike framescope, does not undo it).
    func startTcpdump(_ arguments: [String], environment: [String: String] = [:]) throws -> Started {
        let unblocked = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
        return try start("/usr/bin/python3", ["-c", unblocked, Self.tcpdump!, "-Z", "root", "-B", "32768", "-i", "lo"] + arguments + ["tcp port \(Self.port)"],
                         environment: environment)
    }

    /// `watch` on loopback, returned once it says it is capturing: under AddressSanitizer on a busy
    /// host it took more than the 1.5 s the tests wait before sending, and missed the handshake.
    func startWatch(_ arguments: [String], environment: [String: String] = [:]) throws -> Started {
        let watch = try start(
            CLITests.binary, ["watch", "lo", "--filter", "tcp port \(Self.port)", "--dissector", "varint", "--format", "json", "--interval", "0.5"] + arguments,
            environment: environment)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, watch.process.isRunning,
            !((try? String(contentsOfFile: watch.stderrPath, encoding: .utf8)) ?? "").contains("framescope: capturing on")
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        return watch
    }

    /// Sends `messages` varint messages each way with no pauses (bodies up to `maxBody` bytes).
    func burst(messages: Int = 400, maxBody: Int = 20_000) throws {
        let sender = try cli.run([Self.fixtures + "/burst_traffic.py", String(Self.port), String(messages), String(maxBody)], executable: "/usr/bin/python3")
        #expect(sender.status == 0, "\(sender.stderr)")
    }

    /// Every packet of the files as a line (length, ports, raw sequence and acknowledgement
    /// numbers) with its time in microseconds, read by tshark: the files are readable and say
    /// the same thing.
    func packets(_ paths: [String]) throws -> [(time: Int64, packet: String)] {
        var all: [(Int64, String)] = []
        for path in paths {
            let read = try cli.run(
                ["-r", path, "-T", "fields", "-E", "separator=,", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "tcp.srcport", "-e", "tcp.dstport",
                 "-e", "tcp.seq_raw", "-e", "tcp.ack_raw"], executable: "/usr/bin/tshark")
            #expect(read.status == 0, "tshark cannot read \(path): \(read.stderr)")
            for line in read.stdout.split(separator: "\n") {
                let fields = line.split(separator: ",", maxSplits: 1)
                let parts = fields[0].split(separator: ".")
                let micros = Int64(parts[0])! * 1_000_000 + Int64(String(parts[1].prefix(6)).padding(toLength: 6, withPad: "0", startingAt: 0))!
                all.append((micros, String(fields[1])))
            }
        }
        return all
    }

    /// The same packets. Not necessarily in the same order or at the same microsecond: each
    /// capture socket takes its own copy, stamped and queued on its own, so two packets a few
    /// microseconds apart can trade places between the two files.
    func expectSamePackets(_ a: [(time: Int64, packet: String)], _ b: [(time: Int64, packet: String)], _ what: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
        let (mine, theirs) = (a.map(\.packet).sorted(), b.map(\.packet).sorted())
        let difference = "only framescope's: \(Set(mine).subtracting(theirs).prefix(5)), only tcpdump's: \(Set(theirs).subtracting(mine).prefix(5))"
        #expect(mine == theirs, "\(what): \(a.count) packets against \(b.count); \(difference)", sourceLocation: sourceLocation)
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON report: \(text.prefix(200))")
    }

    func dropped(byTcpdump stderr: String) -> Int? {
        stderr.firstMatch(of: #/(\d+) packets? dropped by kernel/#).map { Int($0.1)! }
    }

    /// The burst: 400 varint messages each way, bodies up to 20 KB, no pauses, so loopback
    /// carries segments up to 64 KB. Twenty runs in a row, each stopped by a signal (SIGINT,
    /// SIGTERM, SIGHUP in turn): every run counts all 800 with no drop of either kind, ends with
    /// the whole report, and its `--write` file holds exactly the packets tcpdump saved; for each
    /// signal the file re-analyses to the live report's figures.
    @Test(.enabled(if: ready, reason)) func aBurstLosesNothingTwentyTimesAndEveryStopSignalSavesTheWholeFile() throws {
        let signals: [(Int32, String)] = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]
        for run in 0..<20 {
            let (signal, name) = signals[run % 3]
            let file = scratchDirectory + "burst-\(run).pcap", reference = scratchDirectory + "burst-\(run).tcpdump.pcap"
            let tcpdump = try startTcpdump(["-w", reference])
            let watch = try startWatch(["--write", file])
            Thread.sleep(forTimeInterval: 1.5)
            try burst()
            Thread.sleep(forTimeInterval: 1.5)  // tcpdump's ring hands packets over up to a second late
            let live = watch.stop(signal)
            let td = tcpdump.stop()
            #expect(live.status == 0, "run \(run), \(name): \(live.stderr)")
            let report = try json(live.stdout)
            let capture = try #require(report["capture"] as? [String: Any])
            let totals = try #require(report["totals"] as? [String: Any])
            let messages = ["clientToServer", "serverToClient"].map { ((totals[$0] as? [String: Any])?["messages"] as? Int) ?? -1 }
            #expect(messages == [400, 400], "run \(run), \(name)")
            #expect(capture["kernelDrops"] as? Int == 0 && capture["analysisDrops"] as? Int == 0, "run \(run): \(capture)")
            #expect(dropped(byTcpdump: td.stderr) == 0, "run \(run): tcpdump dropped: \(td.stderr)")
            let saved = try packets([file])
            expectSamePackets(saved, try packets([reference]), "run \(run), \(name)")
            #expect(capture["packetsCaptured"] as? Int == saved.count)
            if run < 3 {
                let again = try cli.run(["analyze", file, "--dissector", "varint", "--format", "json"])
                #expect(again.status == 0)
                let fromFile = try json(again.stdout)
                #expect(NSDictionary(dictionary: fromFile["totals"] as! [String: Any]).isEqual(to: totals), "\(name): the file's figures differ from the live ones")
            }
        }
    }

    /// `-C 1 -W 3`: a ring of three files of about a million bytes, named and cut as tcpdump
    /// names and cuts them, and together every packet. tcpdump's rule — a new file for the first
    /// packet after the current one passed 1,000,000 bytes — applied to framescope's own packets
    /// in the order it saved them must give its files exactly; the same rule must give tcpdump's
    /// files from tcpdump's order (the model is tcpdump's), and when both saved the packets in one
    /// order the files are the same size. (Each capture socket queues its own copy, so two packets
    /// microseconds apart can trade places between the tools, and a cut then falls one packet
    /// apart: a CI run once had tcpdump's first file 82 bytes, one ACK, longer.)
    @Test(.enabled(if: ready, reason)) func sizeRotationNamesAndCutsFilesAsTcpdumpDoes() throws {
        let (mine, theirs) = (cli.temporaryDirectory(), cli.temporaryDirectory())
        for folder in [mine, theirs] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let tcpdump = try startTcpdump(["-C", "1", "-W", "3", "-w", theirs + "/ring.pcap"])
        let watch = try startWatch(["-C", "1", "-W", "3", "--write", mine + "/ring.pcap"])
        Thread.sleep(forTimeInterval: 1.5)
        try burst(messages: 120)  // about 2.4 MB: three files, none overwritten
        Thread.sleep(forTimeInterval: 1.5)
        let live = watch.stop(), td = tcpdump.stop()
        #expect(live.status == 0, "\(live.stderr)")
        let names = ["ring.pcap0", "ring.pcap1", "ring.pcap2"]
        func sizes(_ folder: String) throws -> [String: Int] {
            var sizes: [String: Int] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                sizes[name] = try FileManager.default.attributesOfItem(atPath: folder + "/" + name)[.size] as? Int
            }
            return sizes
        }
        let (ours, tcpdumps) = (try sizes(mine), try sizes(theirs))
        #expect(Set(ours.keys) == Set(names) && Set(tcpdumps.keys) == Set(names), "framescope wrote \(ours.keys.sorted()), tcpdump \(tcpdumps.keys.sorted())")
        #expect(ours.filter { $0.key != "ring.pcap2" }.values.allSatisfy { $0 > 1_000_000 && $0 < 1_000_000 + 65_536 + 16 })

        /// The files tcpdump's rule makes of `packets` (each a 16-byte record header and its bytes,
        /// uncut: the default snapshot length is 262,144), named as `-W 3` names them.
        func cut(_ packets: [(time: Int64, packet: String)]) -> [String: Int] {
            var files = [24]  // the savefile header
            for (_, packet) in packets {
                if files[files.count - 1] > 1_000_000 { files.append(24) }
                files[files.count - 1] += 16 + Int(packet.prefix { $0 != "," })!
            }
            return Dictionary(uniqueKeysWithValues: zip(names, files))
        }
        let (saved, theirPackets) = (try packets(names.map { mine + "/" + $0 }), try packets(names.map { theirs + "/" + $0 }))
        #expect(cut(saved) == ours, "framescope's files are not cut where tcpdump's rule cuts its packets: \(ours) against \(cut(saved))")
        #expect(cut(theirPackets) == tcpdumps, "the model is not tcpdump's rule: tcpdump wrote \(tcpdumps), the rule gives \(cut(theirPackets)) (\(td.stderr))")
        if saved.map(\.packet) == theirPackets.map(\.packet) {
            #expect(ours == tcpdumps, "the same packets in the same order, other files: tcpdump wrote \(tcpdumps)")
        }
        expectSamePackets(saved, theirPackets, "-C 1 -W 3")
        let capture = try #require(try json(live.stdout)["capture"] as? [String: Any])
        #expect(capture["packetsCaptured"] as? Int == saved.count)
        #expect(capture["files"] as? [String] == names.map { mine + "/" + $0 })
    }

    /// `-G 2` with a strftime name: a new file on the first packet two seconds after the current
    /// one began, named by that second, as tcpdump does; every file readable, together every
    /// packet tcpdump saw. (framescope rotates on the packets' own times, tcpdump on its clock
    /// when libpcap hands it the packet, up to a second later, so their cuts may differ by a file.)
    /// `-G 1 -W 2` stops by itself after two files.
    @Test(.enabled(if: ready, reason)) func timeRotationNamesFilesByTheirStartAndMissesNoPacket() throws {
        let (mine, theirs) = (cli.temporaryDirectory(), cli.temporaryDirectory())
        for folder in [mine, theirs] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let utc = ["TZ": "UTC"]
        let tcpdump = try startTcpdump(["-G", "2", "-w", theirs + "/t-%Y%m%d%H%M%S.pcap"], environment: utc)
        let watch = try startWatch(["-G", "2", "--write", mine + "/t-%Y%m%d%H%M%S.pcap"], environment: utc)
        Thread.sleep(forTimeInterval: 1.5)
        for _ in 0..<6 {
            try burst(messages: 20)
            Thread.sleep(forTimeInterval: 0.7)
        }
        Thread.sleep(forTimeInterval: 1.5)
        let live = watch.stop(), td = tcpdump.stop()
        #expect(live.status == 0, "\(live.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: mine).sorted()
        let tcpdumpFiles = try FileManager.default.contentsOfDirectory(atPath: theirs).sorted()
        #expect(files.count >= 3 && abs(files.count - tcpdumpFiles.count) <= 1, "\(files) against tcpdump's \(tcpdumpFiles)")
        let parse = DateFormatter()
        parse.dateFormat = "'t-'yyyyMMddHHmmss'.pcap'"
        parse.timeZone = TimeZone(identifier: "UTC")
        var all: [(time: Int64, packet: String)] = []
        for name in files {
            let opened = Int64(try #require(parse.date(from: name), "\(name) is not the pattern's").timeIntervalSince1970)
            let inFile = try packets([mine + "/" + name])
            // The first file opens at the start, named by then (as tcpdump's): it may stay empty.
            #expect(!inFile.isEmpty || name == files.first)
            // Each packet of a file came less than two seconds after the second it is named by.
            #expect(inFile.allSatisfy { $0.time / 1_000_000 >= opened && $0.time / 1_000_000 < opened + 2 }, "\(name)")
            all += inFile
        }
        expectSamePackets(all, try packets(tcpdumpFiles.map { theirs + "/" + $0 }), "-G 2 (\(td.stderr))")
        let capture = try #require(try json(live.stdout)["capture"] as? [String: Any])
        #expect(capture["files"] as? [String] == files.map { mine + "/" + $0 })

        let limited = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: limited, withIntermediateDirectories: true)
        let short = try startWatch(["-G", "1", "-W", "2", "--write", limited + "/w-%H%M%S.pcap"], environment: utc)
        let began = Date()
        while short.process.isRunning && Date().timeIntervalSince(began) < 15 {
            try burst(messages: 5, maxBody: 2_000)
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(!short.process.isRunning, "-G 1 -W 2 did not stop after two files")
        let ended = short.stop()
        #expect(ended.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: limited).count == 2)
        #expect((try json(ended.stdout)["capture"] as? [String: Any])?["files"] as? [String] != nil)
    }

    /// The soak (scripts/soak): two network namespaces joined by a veth pair (MTU 1500, offloads
    /// off), 50 connections sending framed messages as fast as this machine can for 60 s, framescope
    /// watch (the release build when there is one: the binary users run) and tcpdump capturing the
    /// server's side at once. framescope must drop nothing whenever tcpdump drops nothing, and keep
    /// at least as many packets as tcpdump. Set FRAMESCOPE_SOAK_SECONDS to shorten it.
    @Test(.enabled(if: soakReady, soakReason))
    func soakInNamespacesDropsNothingTcpdumpKeeps() throws {
        let release = CLITests.root.appendingPathComponent(".build/release/framescope").path
        let binary = FileManager.default.isExecutableFile(atPath: release) ? release : CLITests.binary
        let seconds = ProcessInfo.processInfo.environment["FRAMESCOPE_SOAK_SECONDS"] ?? "60"
        let soak = try cli.run([CLITests.root.appendingPathComponent("scripts/soak").path, "--seconds", seconds, "--binary", binary],
                               executable: "/usr/bin/python3")
        #expect(soak.status == 0, "\(soak.stderr)")
        let result = try json(String(soak.stdout.split(separator: "\n").last ?? ""))
        print("soak (\(binary)): \(soak.stdout)")
        let tcpdump = try #require(result["tcpdump"] as? [String: Any]), framescope = try #require(result["framescope"] as? [String: Any])
        let ours = (framescope["kernelDrops"] as! Int) + (framescope["analysisDrops"] as! Int)
        if tcpdump["kernelDrops"] as? Int == 0 {
            #expect(ours == 0, "tcpdump dropped nothing, framescope dropped \(ours)")
            #expect(framescope["messagesClientToServer"] as? Int == result["sentMessages"] as? Int)
        }
        #expect((framescope["captured"] as! Int) >= (tcpdump["captured"] as? Int ?? 0), "framescope kept fewer packets than tcpdump")
    }
}
