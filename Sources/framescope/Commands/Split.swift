import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport

#if canImport(Glibc)
import Glibc
#endif

extension Framescope {
    struct Split: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "split",
            abstract: "Cut captures into N pcaps by connection, to analyze them apart (on other cores or machines).",
            discussion: """
                Every packet of a TCP connection goes to the same shard, DIR/shard-K.pcap with K the \
                connection's hash (of its addresses and ports, the same both ways) modulo N; packets \
                that are not TCP go to shard-000. Beside each shard, shard-K.pcap.frames keeps the \
                original frame number of every record: framescope reads it whenever it reads the shard, \
                so frames in reports are the original capture's (and Wireshark filters name \
                connections by address, since a shard's tcp.stream numbers are its own). Timestamps \
                keep their nanoseconds; a pcapng's interface options (its time zone) are not carried.
                  framescope split --by-flow 8 big.pcap -o shards/
                  parallel framescope analyze {} --dissector varint --format json -o {}.json ::: shards/*.pcap
                """)

        @Option(name: .customLong("by-flow"), help: ArgumentHelp("Number of captures to write.", valueName: "n"))
        var shards: Int

        @OptionGroup var input: InputOptions

        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Directory to write the shards to (created if missing).", valueName: "dir"))
        var out: String

        func validate() throws {
            if shards < 1 || shards > 4096 { throw ValidationError("--by-flow takes 1 to 4096 captures") }
        }

        func run() throws {
            try allowOpenFiles(3 * shards + 16)  // a savefile (two descriptors) and an index a shard
            try makeDirectories(out)
            var reader = CaptureReader(paths: input.files, filter: try input.packetFilter(), packetLimit: input.count)
            if !input.quiet && isatty(2) != 0 { reader.progress = Progress(paths: input.files).show }
            var splitter = FlowSplitter(count: shards, directory: out)
            let errors: [CaptureError]
            do { errors = try splitter.split(&reader, concurrently: input.threads > 1) } catch {
                writeError("framescope: \(error)\n")
                throw ExitCode(1)
            }
            if reader.progress != nil { writeError("\r\u{1B}[K") }
            try exitIfNothingOpened(errors, inputs: input.files.count)
            for shard in splitter.shards {
                print("\(shard.path): \(counted(shard.packets, "packet")), \(counted(shard.bytes, "byte"))")
            }
            let written = Set(splitter.shards.map { String($0.path.split(separator: "/").last!) })
            for stale in shardFiles(in: out).filter({ !written.contains($0) }) {
                writeError("framescope: \(out)/\(stale) is left from an earlier split: remove it before analyzing \(out)/shard-*.pcap\n")
            }
            try finish(with: errors)
        }
    }
}

/// The `shard-*.pcap` files in `directory`.
private func shardFiles(in directory: String) -> [String] {
    guard let folder = opendir(directory) else { return [] }
    defer { closedir(folder) }
    var names: [String] = []
    while let entry = readdir(folder) {
        // Read in place, up to its NUL: a record is only as long as its name (copying the
        // 256-byte field read past it, which AddressSanitizer caught).
        let name = withUnsafeMutablePointer(to: &entry.pointee.d_name) {
            String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
        }
        if name.hasPrefix("shard-") && name.hasSuffix(".pcap") { names.append(name) }
    }
    return names.sorted()
}

/// Raises the soft limit of open files to `needed` where the hard limit allows (a shell's 1,024
/// would stop a split into 1,000 shards half-way), else says what to do.
private func allowOpenFiles(_ needed: Int) throws {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(needed) else { return }
    if limit.rlim_max >= rlim_t(needed) {
        limit.rlim_cur = rlim_t(needed)
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { return }
    }
    throw ValidationError("--by-flow needs \(needed) open files and this process may open \(limit.rlim_max) (ulimit -Hn): split into fewer, or split the shards again")
}
