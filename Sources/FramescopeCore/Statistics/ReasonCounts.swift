/// Counts per reason in an array allocated at the first count: hashing a dictionary key for
/// every invalid body cost more than the check that found it.
public struct ReasonCounts<Reason: CaseIterable & Hashable & Sendable>: Sendable, Equatable where Reason.AllCases == [Reason] {
    private var counts: [Int] = []

    public init() {}

    mutating func add(_ reason: Reason) {
        if counts.isEmpty { counts = [Int](repeating: 0, count: Reason.allCases.count) }
        counts[Self.slot(reason)] += 1
    }

    /// The count of `reason`, nil when none (as a dictionary would say).
    public subscript(reason: Reason) -> Int? {
        guard !counts.isEmpty else { return nil }
        let n = counts[Self.slot(reason)]
        return n > 0 ? n : nil
    }

    private static func slot(_ reason: Reason) -> Int { Reason.allCases.firstIndex(of: reason)! }

    /// The reasons counted at least once.
    public var dictionary: [Reason: Int] {
        var all: [Reason: Int] = [:]
        for (i, n) in counts.enumerated() where n > 0 { all[Reason.allCases[i]] = n }
        return all
    }

    public var isEmpty: Bool { !counts.contains { $0 > 0 } }

    mutating func merge(_ other: ReasonCounts) {
        if counts.isEmpty { return counts = other.counts }
        for i in other.counts.indices { counts[i] += other.counts[i] }
    }

    public static func == (a: ReasonCounts, b: ReasonCounts) -> Bool { a.dictionary == b.dictionary }
}
