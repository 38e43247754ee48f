import Synchronization

/// The dissectors framescope has, as a closed enum: one `switch` per decode, no existential.
public enum AnyDissector: FrameDissector, Sendable, Hashable {
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

    public var hasStreamStart: Bool {
        switch self {
        case .lengthField(let d): d.hasStreamStart
        case .delimiter(let d): d.hasStreamStart
        case .postgres(let d): d.hasStreamStart
        }
    }

    public func decode(_ bytes: UnsafeRawBufferPointer, consumed: Int, atStreamStart: inout Bool) -> DecodeStep {
        switch self {
        case .lengthField(let d): d.decode(bytes, consumed: consumed, atStreamStart: &atStreamStart)
        case .delimiter(let d): d.decode(bytes, consumed: consumed, atStreamStart: &atStreamStart)
        case .postgres(let d): d.decode(bytes, consumed: consumed, atStreamStart: &atStreamStart)
        }
    }

    /// For delimiter framing: frames start right after a delimiter.
    var delimiter: InlineBytes? {
        if case .delimiter(let d) = self { return d.delimiter }
        return nil
    }
}

/// A dissector shared by reference: every direction framed by one SPEC reads the same one.
/// Unchecked: `lengthField` is written once, in `init`.
final class SharedDissector: @unchecked Sendable {
    let dissector: AnyDissector
    /// A length-field dissector once more, in memory of its own, where it is read in place: the
    /// enum's `switch` copies its 200 bytes out to decode with them, once a frame (a tenth of
    /// framing a message with a varint length).
    private let lengthField: UnsafeMutablePointer<LengthFieldDissector>?
    /// The same once more when its header is a varint length and nothing else, without a
    /// preamble: decoded on a path of its own.
    private let plainVarint: PlainVarintDissector?
    /// Measured the first time recovery needs it: most SPECs never recover.
    private let measuredEvidence = Mutex<BoundaryEvidence?>(nil)

    init(_ dissector: AnyDissector) {
        self.dissector = dissector
        if case .lengthField(let d) = dissector {
            lengthField = .allocate(capacity: 1)
            lengthField!.initialize(to: d)
            plainVarint = d.preamble.isEmpty ? d.plainVarintLimit.map(PlainVarintDissector.init(limit:)) : nil
        } else {
            lengthField = nil
            plainVarint = nil
        }
    }

    deinit {
        lengthField?.deinitialize(count: 1)
        lengthField?.deallocate()
    }

    /// `dissector.decode`.
    @inline(__always)
    func decode(_ bytes: UnsafeRawBufferPointer, consumed: Int, atStreamStart: inout Bool) -> DecodeStep {
        if let plainVarint { return plainVarint.decode(bytes, consumed: consumed, atStreamStart: &atStreamStart) }
        if let lengthField { return lengthField.pointee.decode(bytes, consumed: consumed, atStreamStart: &atStreamStart) }
        return dissector.decode(bytes, consumed: consumed, atStreamStart: &atStreamStart)
    }

    /// `dissector.headerLength`.
    var headerLength: Int { lengthField?.pointee.headerLength ?? dissector.headerLength }

    /// What a decoded frame says about a frame start, for recovery.
    var evidence: BoundaryEvidence {
        measuredEvidence.withLock { cached in
            if let cached { return cached }
            let measured = BoundaryEvidence(dissector)
            cached = measured
            return measured
        }
    }
}
