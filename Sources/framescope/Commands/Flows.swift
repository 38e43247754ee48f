import ArgumentParser
import FramescopeCore
import FramescopeReport

extension Framescope {
    struct Flows: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "flows",
            abstract: "List TCP connections: endpoints, times, bytes each way, retransmissions, gaps.",
            discussion: """
                One row per connection, numbered in order of first appearance like tshark's tcp.stream. \
                A new SYN on a reused 4-tuple starts a new connection. Client and server come from the \
                SYN (or SYN/ACK); without a handshake the endpoint with the lower port is the server.
                The JSON schema (framescope.flows/1) is documented in docs/json-schemas.md.
                """)

        @OptionGroup var input: InputOptions
        @OptionGroup(title: "Reassembly limits") var limits: LimitOptions

        @OptionGroup(title: "Output") var out: OutputOptions

        func run() throws {
            var pipeline = try CapturePipeline(input: input, limits: limits, sink: FlowsCollector())
            let errors = pipeline.run()
            try exitIfNothingOpened(errors, inputs: pipeline.inputs.count)
            let report = FlowsReport(collector: pipeline.sink, decode: pipeline.decodeStatistics, context: pipeline.context, inputs: pipeline.inputs)
            try out.write(report)
            try finish(with: errors)
        }
    }
}
