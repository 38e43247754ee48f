/// A value kept out of line and allocated when first written: state most connections never
/// need (recovery windows, anomaly counters) costs them a pointer. Copy-on-write, so the struct
/// holding it keeps value semantics.
struct OutOfLine<Value: Blank>: @unchecked Sendable {
    final class Storage {
        /// Reached only through the one `OutOfLine` that owns it uniquely when writing (copy
        /// on write): the runtime's exclusivity check on every access proves nothing here.
        @exclusivity(unchecked) var value: Value
        init(_ value: Value) { self.value = value }
    }

    /// nil until first written; `stored?.value.field` loads one field without copying the value.
    private(set) var stored: Storage?

    init() {}

    var isAllocated: Bool { stored != nil }

    var value: Value {
        // Read in place: a getter copied the whole value (retaining what it holds) to read one
        // field of it (a recovery window's cause, 734,000 times over a capture cut by a snaplen).
        _read {
            if let stored { yield stored.value } else { yield Value() }
        }
        _modify {
            if stored == nil {
                stored = Storage(Value())
            } else if !isKnownUniquelyReferenced(&stored!) {
                stored = Storage(stored!.value)
            }
            yield &stored!.value
        }
    }
}

/// A value with a blank state to start from.
protocol Blank {
    init()
}

extension OutOfLine: Equatable where Value: Equatable {
    static func == (a: OutOfLine, b: OutOfLine) -> Bool { a.value == b.value }
}
