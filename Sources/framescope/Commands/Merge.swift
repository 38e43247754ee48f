import ArgumentParser
import FramescopeReport

extension Framescope {
    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Combine the JSON reports of a capture's shards into the report of the whole capture.",
            discussion: """
                The shards come from `split --by-flow`, each analyzed with the same options and \
                --format json (on other cores or machines). Connections are numbered as one run over \
                the whole capture numbers them (by first frame; frame numbers are the capture's), \
                counts are summed and distributions computed from the shards' histograms (`sketches`), \
                so the totals, TCP figures, response times and connections are the single run's. \
                Give every shard of the split: the IDs are the capture's stream numbers only then.
                  framescope split --by-flow 8 big.pcap -o shards/
                  parallel framescope analyze {} --dissector varint --format json -o {}.json ::: shards/*.pcap
                  framescope merge shards/*.json -o big.json
                """)

        @Argument(help: ArgumentHelp("JSON reports of `analyze --format json`.", valueName: "report"))
        var reports: [String]

        @Option(name: [.customShort("o"), .long], help: "Write the merged report to this file instead of standard output.")
        var output: String?

        func validate() throws {
            if reports.isEmpty { throw ValidationError("give the JSON reports to merge") }
        }

        func run() throws {
            let report: AnalysisReport
            do { report = try ReportMerge.merge(reports) } catch {
                writeError("framescope: \(error)\n")
                throw ExitCode(1)
            }
            try writeJSON(to: output) { report.write(to: &$0) }
        }
    }
}
