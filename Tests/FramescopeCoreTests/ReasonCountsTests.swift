@testable import FramescopeCore
import Testing

/// Counts by reason: each reason in its own slot (its place among the cases), merged slot by slot.
@Suite struct ReasonCountsTests {
    @Test func everyReasonHasItsPlaceAmongTheCases() {
        for (i, reason) in MalformedReason.allCases.enumerated() { #expect(reason.ordinal == i, "\(reason)") }
        for (i, reason) in ProtobufFailure.allCases.enumerated() { #expect(reason.ordinal == i, "\(reason)") }
    }

    @Test func countsAndMerges() {
        var a = ReasonCounts<ProtobufFailure>(), b = ReasonCounts<ProtobufFailure>()
        #expect(a.isEmpty && a[.tooDeep] == nil)
        for reason in ProtobufFailure.allCases { for _ in 0...reason.ordinal { a.add(reason) } }
        b.add(.truncated)
        b.merge(a)
        #expect(b[.truncated] == 2 && b[.tooDeep] == 9 && b.dictionary.count == ProtobufFailure.allCases.count)
    }
}
