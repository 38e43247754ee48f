extension ProtobufScanner {
    enum WholeVerdict {
        case valid
        case invalid(ProtobufFailure, at: Int64)
        /// A group was met and `groups` was not asked for.
        case hasGroups
    }

    /// A whole body without a schema, with the verdict and failure position the state machine
    /// gives. `groups`: read groups as it does (random bytes start one in most bodies: handing
    /// those to the state machine made an invalid body cost four valid ones); else a body with
    /// a group is `hasGroups` (recovery's and inference's odds were measured so).
    static func checkWhole(_ b: UnsafeRawBufferPointer, groups: Bool = false) -> WholeVerdict {
        guard groups else { return checkWhole(b, openGroups: nil) }
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: maxDepth) { checkWhole(b, openGroups: $0) }
    }

    /// Whether `checkWhole(b)` is `.valid` (groups not read), without a verdict to build: a
    /// recovery search asks once an offset it scores (a sixth of its work went into the verdicts).
    static func isValidWhole(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let base = b.baseAddress else { return true }
        let n = b.count
        var i = 0
        /// A varint from `i`, or nil when the body ends inside it or it is too long.
        @inline(__always) func varint() -> UInt64? {
            var value: UInt64 = 0, shift: UInt64 = 0
            while i < n {
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                i &+= 1
                value |= UInt64(byte & 0x7F) &<< shift
                shift &+= 7
                if byte < 0x80 { return value }
                if shift >= 70 { return nil }
            }
            return nil
        }
        while i < n {
            guard let tag = varint() else { return false }
            let number = tag >> 3
            guard number != 0, number <= 0x1FFF_FFFF else { return false }
            switch tag & 7 {
            case 0:
                guard varint() != nil else { return false }
            case 1:
                guard n &- i >= 8 else { return false }
                i &+= 8
            case 5:
                guard n &- i >= 4 else { return false }
                i &+= 4
            case 2:
                guard let length = varint(), length <= UInt64(n &- i) else { return false }
                i &+= Int(length)
            default:  // a group (not read) or no wire type
                return false
            }
        }
        return true
    }

    /// `openGroups`: room for the field numbers of the groups open (nil: groups not read).
    private static func checkWhole(_ b: UnsafeRawBufferPointer, openGroups: UnsafeMutableBufferPointer<UInt64>?) -> WholeVerdict {
        let n = b.count
        var i = 0
        var depth = 0  // groups open
        /// A varint from `i`: its value, or nil when the body ends inside it or it is too long.
        func varint() -> (value: UInt64, failure: ProtobufFailure?) {
            var value: UInt64 = 0, shift: UInt64 = 0
            while i < n {
                let byte = b[i]
                i += 1
                value |= UInt64(byte & 0x7F) << shift
                shift += 7
                if byte < 0x80 { return (value, nil) }
                if shift >= 70 { return (0, .badVarint) }
            }
            return (0, .truncated)
        }
        while i < n {
            let tag = varint()
            if let failure = tag.failure { return .invalid(failure, at: Int64(i)) }
            let number = tag.value >> 3
            guard number != 0, number <= 0x1FFF_FFFF else { return .invalid(.badFieldNumber, at: Int64(i)) }
            switch tag.value & 7 {
            case 0:
                if let failure = varint().failure { return .invalid(failure, at: Int64(i)) }
            case 1, 5:
                let size = tag.value & 7 == 1 ? 8 : 4
                guard n - i >= size else { return .invalid(.truncated, at: Int64(n)) }
                i += size
            case 2:
                let length = varint()
                if let failure = length.failure { return .invalid(failure, at: Int64(i)) }
                guard length.value <= UInt64(n - i) else { return .invalid(.lengthPastEnd, at: Int64(i)) }
                i += Int(length.value)
            case 3:
                guard let openGroups else { return .hasGroups }
                // The body counts as the first level of nesting, as in the state machine.
                guard depth + 1 < maxDepth else { return .invalid(.tooDeep, at: Int64(i)) }
                openGroups[depth] = number
                depth += 1
            case 4:
                guard let openGroups else { return .hasGroups }
                guard depth > 0, openGroups[depth - 1] == number else { return .invalid(.unmatchedEndGroup, at: Int64(i)) }
                depth -= 1
            default:
                return .invalid(.badWireType, at: Int64(i))
            }
        }
        return depth == 0 ? .valid : .invalid(.truncated, at: Int64(n))
    }
}
