import ArgumentParser
import FramescopeReport

/// `--fail-on EXPR`: a condition on the report's totals that makes the run exit with status 3.
///
/// ```
/// malformed | incomplete | gaps | undissected | drops | invalid-protobuf    any at all
/// METRIC OP NUMBER[%]                                            e.g. naive-loss>1%, partial>=10%, malformed>0
/// ```
/// METRIC: messages, partial, merged, naive-loss, malformed, incomplete, gaps (damaged messages),
/// undissected (bytes, with those of connections no dissector applied to), invalid-protobuf (bodies). With `%`, partial and naive-loss are shares of
/// messages, merged of segments, invalid-protobuf of the bodies checked.
struct FailCondition: ExpressibleByArgument, CustomStringConvertible {
    enum Metric: String, CaseIterable {
        case messages, partial, merged, malformed, incomplete, gaps, undissected, drops
        case naiveLoss = "naive-loss"
        case invalidProtobuf = "invalid-protobuf"
    }

    enum Comparison: String { case greater = ">", greaterOrEqual = ">=", less = "<", lessOrEqual = "<=", equal = "=" }

    let text: String
    let metric: Metric
    let comparison: Comparison
    let value: Double
    let percent: Bool

    init?(argument: String) {
        text = argument
        let compact = argument.replacing(" ", with: "").lowercased()
        if let metric = Metric(rawValue: compact) {
            self.metric = metric
            comparison = .greater
            value = 0
            percent = false
            return
        }
        guard let range = Self.comparisonRange(in: compact),
            let metric = Metric(rawValue: String(compact[..<range.lowerBound])),
            let comparison = Comparison(rawValue: String(compact[range]))
        else { return nil }
        var number = String(compact[range.upperBound...])
        percent = number.hasSuffix("%")
        if percent { number.removeLast() }
        guard let value = Double(number), value >= 0 else { return nil }
        if percent && ![.partial, .merged, .naiveLoss, .invalidProtobuf].contains(metric) { return nil }
        self.metric = metric
        self.comparison = comparison
        self.value = value
    }

    var description: String { text }

    /// Where the first comparison operator (`>=`, `<=`, `>`, `<` or `=`) is.
    private static func comparisonRange(in text: String) -> Range<String.Index>? {
        guard let start = text.firstIndex(where: { "<>=".contains($0) }) else { return nil }
        let two = text[start...].prefix(2)
        return start..<(two == ">=" || two == "<=" ? two : two.prefix(1)).endIndex
    }

    /// The measured value (a percentage when the condition has `%`), and whether the condition holds.
    func evaluate(_ report: AnalysisReport) -> (measured: Double, holds: Bool) {
        let all = report.totals.all
        let measured: Double
        switch metric {
        case .messages: measured = Double(all.messages)
        case .partial: measured = percent ? all.partialPercent : Double(all.partialMessages)
        case .merged: measured = percent ? all.mergedPercent : Double(all.mergedSegments)
        case .naiveLoss: measured = percent ? all.naiveReaderLossPercent : Double(all.naiveReaderLoss)
        case .malformed: measured = Double(all.malformed)
        case .incomplete: measured = Double(all.incompleteAtEnd)
        case .gaps: measured = Double(all.damagedByGaps)
        case .undissected:
            // With the bytes of connections no dissector applied to (a port auto could not frame).
            measured = Double(all.undissectedBytes + report.totals.undissectedConnectionBytes)
        case .drops: measured = Double(report.capture?.drops ?? 0)
        case .invalidProtobuf:
            let p = all.protobuf
            measured = percent ? p?.invalidPercent ?? 0 : Double(p?.invalid ?? 0)
        }
        let holds: Bool
        switch comparison {
        case .greater: holds = measured > value
        case .greaterOrEqual: holds = measured >= value
        case .less: holds = measured < value
        case .lessOrEqual: holds = measured <= value
        case .equal: holds = measured == value
        }
        return (measured, holds)
    }
}

struct FailOnOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Exit with status 3 when this holds for the totals (repeatable), e.g. malformed, incomplete, 'naive-loss>1%'.",
            discussion: "Metrics: messages, partial, merged, naive-loss, malformed, incomplete, gaps, undissected, drops, invalid-protobuf; "
                + "operators > >= < <= =; a % makes partial, merged, naive-loss and invalid-protobuf shares.",
            valueName: "expr"))
    var failOn: [FailCondition] = []

    /// Says which conditions hold, on standard error, and exits 3 if any does.
    func check(_ report: AnalysisReport) throws {
        var held = false
        for condition in failOn {
            let (measured, holds) = condition.evaluate(report)
            guard holds else { continue }
            held = true
            let shown = condition.percent ? "\(measured)%" : (measured == measured.rounded() ? String(Int(measured)) : String(measured))
            writeError("framescope: --fail-on '\(condition)' holds (\(condition.metric.rawValue) is \(shown))\n")
        }
        if held { throw ExitCode(3) }
    }
}
