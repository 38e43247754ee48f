/// Counts per reason in an array allocated at the first count: hashing a dictionary key for
/// every invalid body cost more than the check that found it.
public struct ReasonCounts<Reason: CaseIterable & Hashable & Sendable>: Sendable, Equatable where Reason.AllCases == [Reason] {
    private var counts: [Int] = []

    public init() {}

    mutating func add(_ reason: Reason, _ n: Int = 1) {
        if counts.isEmpty { counts = [Int](repeating: 0, count: Reason.allCases.count) }
        counts[Reason.allCases.firstIndex(of: reason)!] += n
    }

    /// The count of `reason`, nil when none (as a dictionary would say).
    public subscript(reason: Reason) -> Int? {
        guard !counts.isEmpty else { return nil }
        let n = counts[Reason.allCases.firstIndex(of: reason)!]
        return n > 0 ? n : nil
    }

    /// The reasons counted at least once.
    public var dictionary: [Reason: Int] {
        var all: [Reason: Int] = [:]
        for (i, n) in counts.enumerated() where n > 0 { all[Reason.allCases[i]] = n }
        return all
    }

    public var isEmpty: Bool { !counts.contains { $0 > 0 } }

    mutating func merge(_ other: ReasonCounts) {
        for (i, n) in other.counts.enumerated() where n > 0 { add(Reason.allCases[i], n) }
    }

    public static func == (a: ReasonCounts, b: ReasonCounts) -> Bool { a.dictionary == b.dictionary }
}
