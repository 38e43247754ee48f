import ArgumentParser

@main
struct Framescope: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "framescope",
        abstract: "See how TCP cut and glued your application's messages, from a packet capture.",
        discussion: """
            Reads pcap/pcapng captures through libpcap, reassembles every TCP connection per direction \
            (as Wireshark's "Follow TCP Stream" does), and reports what happened to the bytes.

            Exit status: 0 when every input was read to its end (findings such as malformed headers are \
            in the report, not in the status); 1 when an input could not be read or broke part-way \
            (everything read before the break is still reported); 3 when a --fail-on condition holds; \
            64 for bad usage.
            """,
        version: "0.1.0",
        subcommands: [Analyze.self, Infer.self, Watch.self, Flows.self, Extract.self, Split.self, Merge.self, Synth.self, Export.self])
}
