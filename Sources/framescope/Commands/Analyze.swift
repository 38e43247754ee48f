import ArgumentParser
import FramescopeCapture
import FramescopeCore
import FramescopeReport

extension Framescope {
    struct Analyze: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "analyze",
            abstract: "Cut every TCP stream into messages and show how TCP split and glued them.",
            discussion: """
                Reports per direction: messages, partial messages (bytes in ≥ 2 segments), merged segments \
                (bytes of ≥ 2 messages), the messages a one-read-one-message receiver would lose, malformed \
                headers, messages cut off at the end and damaged by capture gaps, with the frame numbers and \
                bytes to find each problem in Wireshark. Definitions: README.md; JSON schema \
                framescope.report/4: docs/json-schemas.md.
                """)

        @OptionGroup var input: InputOptions
        @OptionGroup var analysis: AnalysisOptions
        @OptionGroup(title: "Output") var out: OutputOptions
        @OptionGroup(title: "CI gates") var gates: FailOnOptions
        @OptionGroup(title: "Export") var export: ExportMessagesOptions

        func validate() throws {
            if analysis.dissectors.dissector.isEmpty {
                throw ValidationError("give --dissector SPEC (e.g. varint, lines, preset:tls, length:offset=0,width=4)")
            }
        }

        func run() throws {
            var choice = try analysis.dissectors.choiceOrExit()
            var inferred: [FramingInference.PortInference] = []
            if analysis.dissectors.wantsAuto {
                let auto = try inferDissectors(input: input, limits: analysis.limits, minimumEvidence: analysis.minEvidence)
                inferred = auto.ports
                for (port, spec) in auto.specs where choice.byServerPort[port] == nil {
                    choice.byServerPort[port] = spec
                }
            }
            let selection = try export.selection(for: choice)
            var (report, errors, selected, streamed) =
                ShardedPipeline.applies(threads: input.threads, analysis: analysis, exporting: selection != nil)
                ? try analyzeSharded(choice) : try analyze(choice, export: selection)
            report.inference = inferred
            try out.write(report, streamed: streamed)
            if let path = export.exportMessages, let selected { try exportMessages(selected, to: path) }
            try finish(with: errors)
            try gates.check(report)
        }

        /// One flow table, on this thread: with `--threads 1`, or when what is written as the
        /// analysis goes must come from one table (then with `--threads` past 1 libpcap reads on a
        /// second thread and finished connections are listed on a third).
        private func analyze(
            _ choice: DissectorChoice, export selection: MessageExport?
        ) throws -> (AnalysisReport, [CaptureError], MessageExport?, StreamedReport?) {
            let streamed = try out.openStreamedReport(listing: analysis.connections)
            let chain = try AnalysisChain(
                options: analysis, choice: choice, format: out.format, export: selection, listsOffThread: input.threads > 1, report: streamed?.stream)
            var pipeline = try CapturePipeline(input: input, limits: analysis.limits, sink: chain.sink)
            let errors = pipeline.run()
            try exitIfNothingOpened(errors, inputs: pipeline.inputs.count)
            var report = try chain.report(of: pipeline.sink, decode: pipeline.decodeStatistics, context: pipeline.context, inputs: pipeline.inputs)
            report.specSuggestions = try suggestSpecs(for: chain.listing.suggestionCandidates, input: input, limits: analysis.limits)
            return (report, errors, pipeline.sink.first.context.export, streamed)
        }

        /// `--threads N` past 1: the connections shared out among N − 1 workers (and, with one, the
        /// reading thread: `ShardPlan`).
        private func analyzeSharded(_ choice: DissectorChoice) throws -> (AnalysisReport, [CaptureError], MessageExport?, StreamedReport?) {
            let streamed = try out.openStreamedReport(listing: analysis.connections)
            var pipeline = try ShardedPipeline(input: input, analysis: analysis, choice: choice, format: out.format, report: streamed?.stream)
            let errors = pipeline.run()
            try exitIfNothingOpened(errors, inputs: pipeline.inputs.count)
            var (report, listing) = try pipeline.report()
            report.specSuggestions = try suggestSpecs(for: listing.suggestionCandidates, input: input, limits: analysis.limits)
            return (report, errors, nil, streamed)
        }

        /// The second pass of `--export-messages`: the frames as captured, or each message's
        /// bytes cut from the reassembled streams as exported-PDU records.
        private func exportMessages(_ selected: MessageExport, to path: String) throws {
            guard export.exportFormat == .pdu else {
                let copied = try FrameCopier.copy(selected.frames, from: input.files, to: path)
                if !input.quiet { writeError("framescope: \(counted(copied, "frame")) of the selected messages written to \(path)\n") }
                return
            }
            let file = try ExportedPDUFile(path: path)
            var cut = try CapturePipeline(
                input: input, limits: analysis.limits, sink: ExportedPDUCutter(selected.messages) { file.write($0.bytes, at: $0.timestamp) })
            _ = cut.run()  // the analysis already reported what the inputs hold
            try file.close()
            if !input.quiet {
                var note = "framescope: \(counted(file.records, "message")) written to \(path) as exported PDUs"
                if selected.messagesLeftOut > 0 { note += " (\(selected.messagesLeftOut) more left out: at most \(MessageExport.maxMessages))" }
                writeError(note + "\n")
            }
        }
    }
}
