/// The JSON report written while the analysis runs. Its connections come first (its members are
/// in name order), so each finished connection goes straight into it when every lower ID is
/// there already — most finish in about the order they opened — and only those that wait on an
/// earlier one are spilled and copied later. At the end the report writes the rest
/// (`AnalysisReport.finish(_:)`): after the analysis, what is left to write is what waited, and
/// the totals, not the whole listing.
///
/// For a report without a `capture` section (an `analyze` run; a live capture's comes first).
/// Unchecked: written by the listing during the analysis, then by the report, never both at once.
public final class ReportStream: @unchecked Sendable {
    /// (Unchecked: one writer at a time, as above; checked, each connection's line cost two
    /// dynamic exclusivity checks.)
    @exclusivity(unchecked) var writer: JSONWriter
    /// `{ "connections" : [` is written: the first connection was, or the report is being finished.
    private(set) var isOpen = false

    public init(fd: Int32) {
        writer = JSONWriter(fd: fd)
    }

    /// Writes what comes before the first connection, once.
    func open() {
        guard !isOpen else { return }
        isOpen = true
        AnalysisReport.writeOpening(capture: nil, to: &writer)
    }
}
