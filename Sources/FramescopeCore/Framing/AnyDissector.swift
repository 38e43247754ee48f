/// The dissectors framescope has, as a closed enum: one `switch` per decode, no existential.
public enum AnyDissector: FrameDissector, Sendable, Equatable {
    case lengthField(LengthFieldDissector)
    case delimiter(DelimiterDissector)
    case postgres(PostgresDissector)

    public var headerLength: Int {
        switch self {
        case .lengthField(let d): d.headerLength
        case .delimiter(let d): d.headerLength
        case .postgres(let d): d.headerLength
        }
    }

    public mutating func decode(_ bytes: UnsafeRawBufferPointer, consumed: Int) -> DecodeStep {
        switch self {
        case .lengthField(var d):
            defer { self = .lengthField(d) }
            return d.decode(bytes, consumed: consumed)
        case .delimiter(let d):
            return d.decode(bytes, consumed: consumed)
        case .postgres(var d):
            defer { self = .postgres(d) }
            return d.decode(bytes, consumed: consumed)
        }
    }

    public mutating func reset() {
        switch self {
        case .lengthField(var d): d.reset(); self = .lengthField(d)
        case .delimiter: break
        case .postgres(var d): d.reset(); self = .postgres(d)
        }
    }

    /// For delimiter framing: frames start right after a delimiter.
    var delimiter: InlineBytes? {
        if case .delimiter(let d) = self { return d.delimiter }
        return nil
    }
}
