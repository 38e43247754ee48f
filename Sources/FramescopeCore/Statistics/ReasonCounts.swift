/// A reason counted by `ReasonCounts`, with its place among its cases (`allCases` builds an
/// array at every call: reading the place there cost 140 instructions per invalid body).
public protocol CountedReason: CaseIterable, Hashable, Sendable where AllCases == [Self] {
    /// Its index in `allCases`.
    var ordinal: Int { get }
}

extension MalformedReason: CountedReason {
    public var ordinal: Int {
        switch self {
        case .badMagic: 0
        case .lengthTooLarge: 1
        case .lengthSmallerThanHeader: 2
        case .nonDigitLength: 3
        case .varintTooLong: 4
        case .badBERLength: 5
        case .delimiterNotFound: 6
        }
    }
}

extension ProtobufFailure: CountedReason {
    public var ordinal: Int {
        switch self {
        case .truncated: 0
        case .badVarint: 1
        case .badWireType: 2
        case .badFieldNumber: 3
        case .lengthPastEnd: 4
        case .unmatchedEndGroup: 5
        case .invalidUTF8: 6
        case .missingRequired: 7
        case .tooDeep: 8
        }
    }
}

/// Counts per reason in an array allocated at the first count: hashing a dictionary key for
/// every invalid body cost more than the check that found it.
public struct ReasonCounts<Reason: CountedReason>: Sendable, Equatable {
    private var counts: [Int] = []

    public init() {}

    mutating func add(_ reason: Reason) {
        if counts.isEmpty { counts.append(contentsOf: repeatElement(0, count: Reason.allCases.count)) }  // (as in ValueCounts)
        counts[reason.ordinal] += 1
    }

    /// The count of `reason`, nil when none (as a dictionary would say).
    public subscript(reason: Reason) -> Int? {
        guard !counts.isEmpty else { return nil }
        let n = counts[reason.ordinal]
        return n > 0 ? n : nil
    }

    /// The reasons counted at least once.
    public var dictionary: [Reason: Int] {
        var all: [Reason: Int] = [:]
        let reasons = Reason.allCases
        for (i, n) in counts.enumerated() where n > 0 { all[reasons[i]] = n }
        return all
    }

    public var isEmpty: Bool { !counts.contains { $0 > 0 } }

    mutating func merge(_ other: ReasonCounts) {
        if counts.isEmpty { return counts = other.counts }
        for i in other.counts.indices { counts[i] += other.counts[i] }
    }

    public static func == (a: ReasonCounts, b: ReasonCounts) -> Bool { a.dictionary == b.dictionary }
}
