extension ProtobufScanner {
    enum WholeVerdict {
        case valid
        case invalid(ProtobufFailure, at: Int64)
        /// Groups nest: the state machine reads those.
        case hasGroups
    }

    /// A whole body without a schema, with the verdict and failure position the state machine
    /// gives; bodies with groups are left to the state machine.
    static func checkWhole(_ b: UnsafeRawBufferPointer) -> WholeVerdict {
        let n = b.count
        var i = 0
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
            case 3, 4:
                return .hasGroups
            default:
                return .invalid(.badWireType, at: Int64(i))
            }
        }
        return .valid
    }
}
