import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport

extension Framescope {
    struct Split: ParsableCommand {
        static let configuration = CommandConfiguration(
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
            try makeDirectories(out)
            var reader = CaptureReader(paths: input.files, filter: try input.packetFilter(), packetLimit: input.count)
            var splitter = FlowSplitter(count: shards, directory: out)
            let errors: [CaptureError]
            do { errors = try splitter.split(&reader, concurrently: input.threads > 1) } catch {
                writeError("framescope: \(error)\n")
                throw ExitCode(1)
            }
            try exitIfNothingOpened(errors, inputs: input.files.count)
            for shard in splitter.shards {
                print("\(shard.path): \(counted(shard.packets, "packet")), \(counted(shard.bytes, "byte"))")
            }
            try finish(with: errors)
        }
    }
}
