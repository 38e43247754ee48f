/// Counts per value: values below 256 in an array (no hashing per message), larger ones in a
/// dictionary.
struct ValueCounts: Sendable, Equatable {
    private var small: [UInt32] = []
    private var large: [UInt64: Int] = [:]

    var all: [UInt64: Int] {
        var all = large
        for (value, n) in small.enumerated() where n > 0 { all[UInt64(value)] = Int(n) }
        return all
    }

    mutating func add(_ value: UInt64) {
        if value < 256 {
            let i = Int(value)
            // (Appended zeros, not `+= [UInt32](repeating:count:)`: a temporary array from an
            // unspecialized initializer, 650 instructions a direction.)
            if i >= small.count { small.append(contentsOf: repeatElement(0, count: i + 1 - small.count)) }
            small[i] &+= 1
        } else {
            large[value, default: 0] += 1
        }
    }

    mutating func merge(_ o: ValueCounts) {
        if o.small.count > small.count { small.append(contentsOf: repeatElement(0, count: o.small.count - small.count)) }
        for (i, n) in o.small.enumerated() { small[i] &+= n }
        large.merge(o.large, uniquingKeysWith: +)
    }
}
