import FramescopeCore

#if canImport(Glibc)
import Glibc
#endif

/// Streams pretty-printed JSON to a file descriptor through a 64 KiB buffer, in the layout
/// `JSONEncoder` uses (`"key" : value`, two-space indents). For reports too large to build as a
/// tree first. Keys must come in sorted order: the writer checks that in debug builds, so the
/// output stays deterministic and diffable. `lines` writes one compact value per line (NDJSON).
public struct JSONWriter {
    public enum Layout: Sendable { case pretty, lines }

    /// Raw storage, so that a byte is a store and a run a memcpy (an array checked uniqueness and
    /// capacity on every append: a third of the time of listing 50,000 connections). The writer
    /// is not meant to be copied: copies would share it.
    private let out = OutputBuffer()
    private let fd: Int32
    private var layout: Layout
    private var depth = 0
    /// Bytes written to `fd` so far.
    private var flushed = 0
    /// Bit `d`: the container open at depth `d` has a member yet (a report nests a few levels;
    /// a bit per level costs no allocation per container).
    private var hasMember: UInt64 = 0
    #if DEBUG
    /// Per open object, the last key written (the order check).
    private var lastKeys: [String?] = []
    #endif
    public private(set) var failed = false
    /// The seconds of the last two `epoch`s' digits (texts in `out.secondsTexts`): a connection's
    /// line has its first and last times, often a second apart (with one kept, varint-50k's
    /// listing wrote 107,000 seconds' digits for 150,000 times).
    private var keptSeconds = KeptTexts<Int64, SIMD32<UInt8>>(empty: 0)
    /// The last `recurringString`.
    private var recurring = ""
    /// The length of its JSON in `out.recurringJSON` (0: not kept: none yet, or longer than
    /// `OutputBuffer.recurringCapacity`).
    private var recurringCount = 0
    /// The last two endpoints written (texts in `out.endpointTexts`): a line's client and server,
    /// and most lines of a capture share one of them.
    private var keptEndpoints = KeptTexts<Endpoint, EndpointText>(empty: Endpoint(address: IPAddress(high: 0, low: 0), port: 0))

    public init(fd: Int32, layout: Layout = .pretty) {
        self.fd = fd
        self.layout = layout
    }

    /// A writer into memory: what it writes is kept for `takeCollected`, not written to a file.
    init(collecting layout: Layout) {
        fd = -1
        self.layout = layout
        out.collected = ByteBlock(capacity: 0)
    }

    /// What a writer into memory has written so far, handed over; positions go on counting from
    /// where they were. Its buffer itself goes, and the writer goes on in `spare`'s storage (a
    /// block handed over before, given back) or a new one: nothing is copied unless the buffer
    /// filled since the last hand-over (then what it held went into a block of its own, to
    /// which the rest is added).
    mutating func takeCollected(spare: ByteBlock?) -> ByteBlock {
        let overflow = out.collected!
        if overflow.count > 0 {
            flush()
            out.collected = ByteBlock(capacity: 0)
            return overflow
        }
        let taken = spare ?? ByteBlock(capacity: OutputBuffer.allocation)
        taken.exchangeStorage(with: out)
        flushed += taken.count
        return taken
    }

    /// Bytes written so far, buffered ones included: where the next value starts in the file.
    public var position: Int { flushed + out.count }

    /// Room for `bytes` more (at most `maxRoom`), the buffer flushed first when it lacks them:
    /// where they go. Pieces are written there (`JSONText`), and `commit` takes their end.
    @inline(__always)
    mutating func room(_ bytes: Int) -> UnsafeMutablePointer<UInt8> {
        precondition(bytes <= Self.maxRoom)
        if out.count &+ bytes > OutputBuffer.capacity { flush() }
        roomEnd = out.base + out.count + bytes
        return out.base + out.count
    }

    /// Where `at`, in the room `room` made, is in the file (`position` for bytes written there).
    func position(at: UnsafeMutablePointer<UInt8>) -> Int { flushed + (at - out.base) }

    /// The bytes up to `end` written in the room `room` made.
    @inline(__always)
    mutating func commit(_ end: UnsafeMutablePointer<UInt8>) {
        precondition(end >= out.base + out.count && end <= roomEnd, "JSON written past the room made for it")
        out.count = end - out.base
    }

    /// The most one `room` holds; the buffer has as much again past its capacity, so a run that
    /// overstepped its room traps in `commit` before it corrupts memory.
    static let maxRoom = 4096
    private var roomEnd = UnsafeMutablePointer<UInt8>(bitPattern: 1)!

    /// Starts the next member of the container open, in the pretty layout, at `at` (in room
    /// made for it, at most `breakRoom` bytes): `,` after the first, a line break and the indent.
    /// For a value whose members are written at a pointer (a report's events: through `field`,
    /// 4,300 instructions each).
    @inline(__always)
    mutating func memberBreak(at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let indent = depth &* 2
        precondition(layout == .pretty && indent &+ 2 <= Self.breakRoom)
        var at = start
        let bit = depthBit
        if hasMember & bit != 0 { at = JSONText.byte(0x2C, at: at) }
        hasMember |= bit
        copyShort(from: Self.lineBreak.utf8Start, to: at, count: indent &+ 1)
        return at + (indent &+ 1)
    }

    static let breakRoom = 64
    /// A line break and the indent of the levels a report nests to: the first `1 + 2 depth` bytes.
    private static var lineBreak: StaticString { "\n                                                              " }

    // MARK: Containers

    /// Writes `body`'s value on one line, whatever the layout.
    public mutating func compact(_ body: (inout JSONWriter) -> Void) {
        let outer = beginCompact()
        body(&self)
        endCompact(outer)
    }

    /// `compact` begun and ended apart (`beginCompact` returns the layout to restore), for a
    /// body that would otherwise be a closure.
    mutating func beginCompact() -> Layout {
        defer { layout = .lines }
        return layout
    }

    mutating func endCompact(_ outer: Layout) { layout = outer }

    /// An array whose members `body` writes with `encodedMember`.
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        open(0x5B)
        body(&self)
        close(0x5D)
    }

    /// An array of `count` counts read `stride` apart from `values[start]`: `[0,0,3]`. On one
    /// line they go straight into the buffer, a comma and a digit for most (a timeline's series,
    /// interleaved in its counts, read where they lie: through a closure per count, the series
    /// were a thirtieth of listing 50,000 connections).
    public mutating func naturals(_ values: UnsafeBufferPointer<UInt32>, from start: Int = 0, stride: Int = 1, count: Int) {
        precondition(count == 0 || (start >= 0 && stride > 0 && start + (count - 1) * stride < values.count), "counts past the buffer")
        guard layout == .lines, count &* 11 &+ 2 <= OutputBuffer.capacity else {
            return array(0..<count) { $0.int(Int(values[start + $1 * stride])) }
        }
        if out.count &+ count &* 11 &+ 2 > OutputBuffer.capacity { flush() }
        var at = JSONText.byte(0x5B, at: out.base + out.count)
        var i = start
        for k in 0..<count {
            if k > 0 { at = JSONText.byte(0x2C, at: at) }
            at = JSONText.natural(UInt64(values[i]), at: at)
            i &+= stride
        }
        out.count = JSONText.byte(0x5D, at: at) - out.base
    }

    /// The next member of the current array: `[a, b]`.
    public mutating func pair(_ a: Int64, _ b: Int64) {
        member()
        open(0x5B)
        member()
        int64(a)
        member()
        int64(b)
        close(0x5D)
    }

    /// The next member of the current array, written by `body`.
    public mutating func member(_ body: (inout JSONWriter) -> Void) {
        member()
        body(&self)
    }

    /// The bytes written since `position`, when none of them has gone to the file yet.
    public func unflushed(since position: Int) -> UnsafeRawBufferPointer? {
        guard position >= flushed, position <= self.position else { return nil }
        return UnsafeRawBufferPointer(start: out.base + (position - flushed), count: self.position - position)
    }

    /// Takes back the bytes written since `position` (`unflushed`), as if never written: a line
    /// kept elsewhere. The value they were must be whole (the writer's nesting is as before it).
    public mutating func takeBack(since position: Int) {
        precondition(position >= flushed && position <= self.position, "taking back bytes already written out")
        out.count = position - flushed
    }

    /// Makes `failed` true: a part of the document could not be produced.
    public mutating func markFailed() { failed = true }

    /// The next member of the current array: `json`, one value already encoded.
    public mutating func encodedMember(_ json: UnsafeRawBufferPointer) {
        member()
        put(json)
    }

    /// `encodedMember(json)` with the `count` digits at `at` replaced by `number`'s (a line
    /// written under another ID), without a String for either: head, digits and tail with one
    /// check for room (the last pass of a sharded run copies every line so).
    public mutating func encodedMember(_ json: UnsafeRawBufferPointer, replacingDigitsAt at: Int, count: Int, with number: Int) {
        member()
        let n = json.count
        guard number >= 0, at >= 0, count >= 0, at &+ count <= n, n <= OutputBuffer.capacity &- 21, let source = json.baseAddress else {
            put(UnsafeRawBufferPointer(rebasing: json[..<at]))
            int(number)
            return put(UnsafeRawBufferPointer(rebasing: json[(at + count)...]))
        }
        if out.count &+ 21 &+ n > OutputBuffer.capacity { flush() }
        let head = out.base + out.count
        UnsafeMutableRawPointer(head).copyMemory(from: source, byteCount: at)
        let tail = JSONText.natural(UInt64(number), at: head + at), rest = n &- at &- count
        UnsafeMutableRawPointer(tail).copyMemory(from: source + (at &+ count), byteCount: rest)
        out.count = tail + rest - out.base
    }

    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        beginObject()
        body(&self)
        endObject()
    }

    /// `object` and `array` opened and closed apart, for a document written over the run
    /// (`ReportStream`).
    public mutating func beginObject() { open(0x7B) }
    public mutating func endObject() { close(0x7D) }
    public mutating func beginArray() { open(0x5B) }
    public mutating func endArray() { close(0x5D) }

    public mutating func array<S: Sequence>(_ elements: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        open(0x5B)
        for element in elements {
            member()
            body(&self, element)
        }
        close(0x5D)
    }

    /// Starts the member `key` of the current object; the value follows. For keys made at run
    /// time; a literal goes to `key(_: StaticString)` (with both named `key(_:)`, a literal chose
    /// this one, the default literal type: 270 instructions a key instead of 60).
    public mutating func key(named key: String) {
        #if DEBUG
        checkOrder(key)
        #endif
        member()
        string(key)
        append(layout == .pretty ? " : " as StaticString : ":")
    }

    /// A literal key: plain ASCII, so it is copied without an escape scan.
    @inline(__always)
    public mutating func key(_ key: StaticString) {
        let count = key.utf8CodeUnitCount
        guard key.hasPointerRepresentation, count &+ 8 <= OutputBuffer.capacity else { return self.key(named: key.description) }
        #if DEBUG
        checkOrder(key.description)  // (in debug builds only: building the String costs more than the key)
        #endif
        guard layout == .lines else { return prettyKey(key.utf8Start, count: count) }
        // `,"key":` with a check for room once and the key in a few word copies: a connection's
        // line has 40 keys or more (a separator's own checks and a byte loop cost twice as much).
        if out.count &+ count &+ 4 > OutputBuffer.capacity { flush() }
        var at = out.base + out.count
        let bit = depthBit
        if hasMember & bit != 0 {
            at[0] = 0x2C
            at += 1
        }
        hasMember |= bit
        at[0] = 0x22
        copyShort(from: key.utf8Start, to: at + 1, count: count)
        at += count &+ 1
        at[0] = 0x22
        at[1] = 0x3A
        out.count = at + 2 - out.base
    }

    /// `"key" : ` on a line of its own, in the pretty layout (the report's outer levels).
    private mutating func prettyKey(_ text: UnsafePointer<UInt8>, count: Int) {
        member()
        if out.count + count + 5 > OutputBuffer.capacity { flush() }
        let at = out.base + out.count
        at[0] = 0x22
        copyShort(from: text, to: at + 1, count: count)
        let end = at + count + 1
        end[0] = 0x22
        end[1] = 0x20
        end[2] = 0x3A
        end[3] = 0x20
        out.count += count + 5
    }

    #if DEBUG
    private mutating func checkOrder(_ k: String) {
        let last = lastKeys[lastKeys.count - 1]
        assert(last.map { $0 < k } ?? true, "JSON keys out of order: \(k) after \(last ?? "")")
        lastKeys[lastKeys.count - 1] = k
    }
    #endif

    // MARK: Pieces

    /// Text written as it is, none of it needing escapes: punctuation with the keys (`,"bytes":`),
    /// for a value whose writer puts its own commas and brackets (a connection's line). Inlined,
    /// a literal is a few word stores where `key` and `object` keep count of the members. Its
    /// keys escape the debug builds' order check: their writer keeps them in order, and the tests
    /// hold its lines to the HTML page's figures, built from `Figures`.
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        let count = text.utf8CodeUnitCount
        guard text.hasPointerRepresentation, count <= 64 else { return append(text) }
        if out.count &+ count > OutputBuffer.capacity { flush() }
        copyShort(from: text.utf8Start, to: out.base + out.count, count: count)
        out.count &+= count
    }

    /// Bytes already encoded, as they are (a line kept elsewhere, written again).
    mutating func raw(_ bytes: UnsafeRawBufferPointer) { put(bytes) }

    /// One byte of punctuation, as `raw(_: StaticString)`.
    @inline(__always)
    mutating func raw(_ byte: UInt8) { put(byte) }

    /// The object `field(_:counts:)` writes after its key: the counts in key order.
    mutating func counts(_ counts: [String: Int]) {
        object { w in
            for (k, v) in counts.sorted(by: { $0.key < $1.key }) {
                w.key(named: k)
                w.int(v)
            }
        }
    }

    // MARK: Values

    public mutating func string(_ value: String) {
        put(0x22)
        characters(of: value)
        put(0x22)
    }

    /// `string(value)` for a string most lines repeat (a connection's dissector): escaped once,
    /// then copied while it comes again (an escape scan and a String's UTF-8 each time cost 400
    /// instructions a line).
    public mutating func recurringString(_ value: String) {
        if recurringCount > 0 && value == recurring {
            if out.count &+ OutputBuffer.recurringCapacity > OutputBuffer.capacity { flush() }
            copyShort(from: out.recurringJSON, to: out.base + out.count, count: recurringCount)
            out.count &+= recurringCount
            return
        }
        if out.count &+ OutputBuffer.recurringCapacity > OutputBuffer.capacity { flush() }
        let start = out.count, flushedBefore = flushed
        string(value)
        let count = out.count - start
        // Kept when it is all still in the buffer and fits what is kept.
        recurringCount = flushed == flushedBefore && count <= OutputBuffer.recurringCapacity ? count : 0
        if recurringCount > 0 { out.recurringJSON.update(from: out.base + start, count: count) }
        recurring = value
    }

    /// `string(text + literal + String(number))`, without the String.
    public mutating func string(_ text: String, then literal: StaticString, _ number: UInt64) {
        put(0x22)
        characters(of: text)
        append(literal)
        decimal(number, negative: false)
        put(0x22)
    }

    /// A string's characters, escaped where JSON needs it, without the quotes.
    private mutating func characters(of value: String) {
        var value = value
        let plain = value.withUTF8 { utf8 in
            // Most strings need no escaping: copy them whole.
            guard !needsEscape(utf8) else { return false }
            put(UnsafeRawBufferPointer(utf8))
            return true
        }
        if plain { return }
        for unit in value.utf8 {
            switch unit {
            case 0x22: append("\\\"")
            case 0x5C: append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                for byte in [0x5C, 0x75, 0x30, 0x30, hex[Int(unit >> 4)], hex[Int(unit & 15)]] { put(byte) }
            default: put(unit)
            }
        }
    }

    public mutating func int(_ value: Int) { int64(Int64(value)) }

    public mutating func int(_ value: Int64) { int64(value) }

    public mutating func int(_ value: UInt64) {
        decimal(value, negative: false)
    }

    private mutating func int64(_ value: Int64) { decimal(value.magnitude, negative: value < 0) }

    /// Decimal digits straight into the buffer, no String in between.
    @inline(__always)  // (into `int`: a call less per number of a connection's line)
    private mutating func decimal(_ magnitude: UInt64, negative: Bool) {
        if out.count &+ 21 > OutputBuffer.capacity { flush() }
        var at = out.base + out.count
        if negative { at = JSONText.byte(0x2D, at: at) }
        out.count = JSONText.natural(magnitude, at: at) - out.base
    }

    public mutating func double(_ value: Double) {
        if out.count &+ JSONText.scaledRoom > OutputBuffer.capacity { flush() }
        out.count = JSONText.shortest(value, at: out.base + out.count) - out.base
    }

    /// A value of one decimal (a percentage or bits rounded to tenths, `k / 10`), as `double`
    /// writes it, without `Double.description`.
    public mutating func tenths(_ value: Double) {
        if out.count &+ JSONText.scaledRoom > OutputBuffer.capacity { flush() }
        out.count = JSONText.tenths(value, at: out.base + out.count) - out.base
    }

    /// A string whose text `write` puts straight into the buffer: at most `capacity` bytes, none
    /// that needs escaping (digits, dots, colons, brackets).
    private mutating func plainString(capacity: Int, _ write: (UnsafeMutableBufferPointer<UInt8>, Int) -> Int) {
        if out.count + capacity + 2 > OutputBuffer.capacity { flush() }
        put(0x22)
        out.count = write(UnsafeMutableBufferPointer(start: out.base, count: OutputBuffer.capacity), out.count)
        put(0x22)
    }

    /// An endpoint as a string, its text made digit by digit in the buffer (`Endpoint.write`).
    public mutating func endpoint(_ endpoint: Endpoint) {
        if out.count &+ Self.endpointRoom > OutputBuffer.capacity { flush() }
        out.count = self.endpoint(endpoint, at: out.base + out.count) - out.base
    }

    /// The most `endpoint(_:at:)` writes.
    static let endpointRoom = Endpoint.maxTextLength + 2

    /// `endpoint(endpoint)` at `at`, in room made for it (`room`); the last two endpoints'
    /// texts are kept (`keptEndpoints`).
    mutating func endpoint(_ endpoint: Endpoint, at: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        at[0] = 0x22
        let end = keptEndpoints.write(endpoint, at: at + 1, texts: out.endpointTexts) { text in
            endpoint.write(into: UnsafeMutableBufferPointer(start: text, count: Endpoint.maxTextLength), at: 0)
        }
        end[0] = 0x22
        return end + 1
    }

    /// Bytes in lower-case hex, separated by spaces (`hex(bytes)`), without the String.
    public mutating func hex(_ bytes: [UInt8]) {
        guard 3 * bytes.count + 2 <= OutputBuffer.capacity else { return string(FramescopeReport.hex(bytes)) }
        plainString(capacity: 3 * bytes.count) { writeHex(bytes, into: $0, at: $1) }
    }

    /// `string(time.epochString)`, without the String. A capture's times share their seconds from
    /// line to line: the digits of the last two seconds written are kept and copied (a
    /// connection's line has two or three times; their digits were a twentieth of the listing).
    public mutating func epoch(_ time: Timestamp) {
        if out.count &+ Self.epochRoom > OutputBuffer.capacity { flush() }
        out.count = epoch(time, at: out.base + out.count) - out.base
    }

    /// The most `epoch(_:at:)` writes (a 32-byte store of the seconds' digits, the point, nine
    /// digits and the quotes).
    static let epochRoom = 64

    /// `epoch(time)` at `at`, in room made for it (`room`).
    mutating func epoch(_ time: Timestamp, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let parts = time.nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let seconds = parts.remainder < 0 ? parts.quotient - 1 : parts.quotient
        let nanoseconds = parts.remainder < 0 ? parts.remainder + 1_000_000_000 : parts.remainder
        var at = start
        at[0] = 0x22
        at += 1
        at = keptSeconds.write(seconds, at: at, texts: out.secondsTexts) { text in
            // (`writeDecimal` writes the magnitude; the digits of -1 s are "-1".)
            var n = 0
            if seconds < 0 {
                text[0] = 0x2D
                n = 1
            }
            return writeDecimal(seconds.magnitude, into: UnsafeMutableBufferPointer(start: text, count: 32), at: n)
        }
        at[0] = 0x2E
        // Nine digits, the nanoseconds zero-padded: four pairs and the first.
        var v = Int(truncatingIfNeeded: nanoseconds)
        for i in stride(from: 8, to: 0, by: -2) {
            let q = v / 100
            writePair(v &- q &* 100, at: at + i)
            v = q
        }
        at[1] = 0x30 &+ UInt8(truncatingIfNeeded: v)
        at[10] = 0x22
        return at + 11
    }

    /// `double(Double(units) / 10^scale)` — e.g. nanoseconds as seconds — digit by digit
    /// (`JSONText.scaled`).
    public mutating func decimal(_ units: Int64, scale: Int) {
        if out.count &+ JSONText.scaledRoom > OutputBuffer.capacity { flush() }
        out.count = JSONText.scaled(units, scale: scale, at: out.base + out.count) - out.base
    }

    public mutating func bool(_ value: Bool) { append(value ? "true" as StaticString : "false") }

    public mutating func null() { append("null" as StaticString) }

    // MARK: Convenience (literal keys; computed ones go through key(_: String))

    public mutating func field(_ key: StaticString, _ value: String) {
        self.key(key)
        string(value)
    }

    public mutating func field(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    public mutating func field(_ key: StaticString, _ value: Int) {
        self.key(key)
        int(value)
    }

    public mutating func field(_ key: StaticString, _ value: Int64) {
        self.key(key)
        int(value)
    }

    public mutating func field(_ key: StaticString, _ value: UInt64) {
        self.key(key)
        int(value)
    }

    public mutating func field(_ key: StaticString, _ value: Double) {
        self.key(key)
        double(value)
    }


    public mutating func field(_ key: StaticString, hex bytes: [UInt8]) {
        self.key(key)
        hex(bytes)
    }

    public mutating func field(_ key: StaticString, _ value: Timestamp) {
        self.key(key)
        epoch(value)
    }

    public mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bool(value)
    }

    public mutating func field(_ key: StaticString, counts: [String: Int]) {
        self.key(key)
        self.counts(counts)
    }

    /// Writes what is buffered; call once at the end.
    public mutating func finish() {
        append("\n" as StaticString)
        flush()
    }

    /// Ends a line of `lines` layout (the buffer is written when full or at `flush`).
    public mutating func endLine() {
        append("\n" as StaticString)
    }

    // MARK: Layout

    private mutating func open(_ bracket: UInt8) {
        put(bracket)
        depth += 1
        precondition(depth < 64, "JSON nested deeper than 63 levels")
        hasMember &= ~depthBit
        #if DEBUG
        lastKeys.append(nil)
        #endif
    }

    private mutating func close(_ bracket: UInt8) {
        let hadMember = hasMember & depthBit != 0
        depth -= 1
        #if DEBUG
        lastKeys.removeLast()
        #endif
        if layout == .pretty {
            if !hadMember { put(0x0A) }
            newline()
        }
        put(bracket)
    }

    /// The container open at `depth`'s bit in `hasMember` (a masking shift: `depth` < 64).
    private var depthBit: UInt64 { 1 &<< UInt64(truncatingIfNeeded: depth) }

    /// The separator and, in the pretty layout, the break before the next member: at the
    /// depths a report nests to, with one check for room (`memberBreak`; through `put` and
    /// `newline`, the calls were a fifth of copying a waiting line into the report).
    /// Inlined, with masking shifts and the layout checked here: called for every key and array
    /// member (1.8 million times listing 50,000 connections), it cost 100 instructions a call.
    @inline(__always)
    private mutating func member() {
        guard layout == .pretty, depth &* 2 &+ 2 <= Self.breakRoom else {
            let bit = depthBit
            if hasMember & bit != 0 { put(0x2C) }
            hasMember |= bit
            if layout == .pretty { newline() }
            return
        }
        if out.count &+ Self.breakRoom > OutputBuffer.capacity { flush() }
        out.count = memberBreak(at: out.base + out.count) - out.base
    }

    private static let spaces = [UInt8](repeating: 0x20, count: 256)

    /// A line break and the indent (pretty layout only: callers check). Most indents are a few
    /// levels deep: the break and the spaces in one copy of a literal (a connection's line in the
    /// report starts with one).
    private mutating func newline() {
        if depth &* 2 < Self.lineBreak.utf8CodeUnitCount {
            if out.count &+ 64 > OutputBuffer.capacity { flush() }
            copyShort(from: Self.lineBreak.utf8Start, to: out.base + out.count, count: depth &* 2 &+ 1)
            out.count &+= depth &* 2 &+ 1
            return
        }
        put(0x0A)
        var indent = depth * 2
        while indent > 0 {
            let n = min(indent, Self.spaces.count)
            Self.spaces.withUnsafeBytes { put(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            indent -= n
        }
    }

    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { put(UnsafeRawBufferPointer($0)) }
    }

    private mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { put(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        if out.count == OutputBuffer.capacity { flush() }
        out.base[out.count] = byte
        out.count += 1
    }

    private mutating func put(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if bytes.count > OutputBuffer.capacity - out.count {
            flush()
            if bytes.count > OutputBuffer.capacity { return writeAll(bytes) }
        }
        if bytes.count <= 32 {  // a literal's few bytes: word copies, no call
            copyShort(from: source.assumingMemoryBound(to: UInt8.self), to: out.base + out.count, count: bytes.count)
        } else {
            UnsafeMutableRawPointer(out.base + out.count).copyMemory(from: source, byteCount: bytes.count)
        }
        out.count += bytes.count
    }

    public mutating func flush() {
        writeAll(UnsafeRawBufferPointer(start: out.base, count: out.count))
        out.count = 0
    }

    private mutating func writeAll(_ bytes: UnsafeRawBufferPointer) {
        if let collected = out.collected {
            collected.append(bytes)
            flushed += bytes.count
            return
        }
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n <= 0 {
                failed = true
                return
            }
            offset += n
        }
        flushed += offset
    }
}

/// The texts of the last two values of a kind written (an endpoint, an epoch's seconds), found
/// by value: a connection's line has a client and a server and two times, and most lines repeat
/// one of each. A new value's text goes where the one used less recently was.
private struct KeptTexts<Value: Equatable, Text> {
    /// Each slot's value, and its text's length (0: the slot is empty).
    private var values: (Value, Value)
    private var counts = (0, 0)
    private var lastSlot = 0
    /// Bytes a text may take, moved whole as one `Text`: the writer's room covers them.
    static var size: Int { MemoryLayout<Text>.size }

    /// - Parameter empty: what the empty slots hold (never found: their counts are 0).
    init(empty: Value) { values = (empty, empty) }

    /// Copies `value`'s text to `at` (`size` bytes, of which the text's are kept) and returns its
    /// end: the kept one in `texts` (`2 * size` bytes), else the one `make` writes there (at
    /// most `size` bytes, returning their count).
    @inline(__always)
    mutating func write(
        _ value: Value, at: UnsafeMutablePointer<UInt8>, texts: UnsafeMutablePointer<UInt8>, make: (UnsafeMutablePointer<UInt8>) -> Int
    ) -> UnsafeMutablePointer<UInt8> {
        let slot: Int, count: Int
        if counts.0 != 0 && values.0 == value {
            (slot, count) = (0, counts.0)
        } else if counts.1 != 0 && values.1 == value {
            (slot, count) = (1, counts.1)
        } else {
            slot = 1 &- lastSlot
            count = make(texts + slot &* Self.size)
            if slot == 0 { (values.0, counts.0) = (value, count) } else { (values.1, counts.1) = (value, count) }
        }
        lastSlot = slot
        let text = UnsafeRawPointer(texts + slot &* Self.size).loadUnaligned(as: Text.self)
        UnsafeMutableRawPointer(at).storeBytes(of: text, as: Text.self)
        return at + count
    }
}

/// An endpoint's text as `KeptTexts` moves it: `Endpoint.maxTextLength` bytes.
private struct EndpointText {
    var head = SIMD32<UInt8>(), tail = SIMD32<UInt8>()
}

/// Bytes in one block, grown by doubling: what a writer into memory wrote. (An array of bytes
/// took them in one by one, a byte an instruction.)
final class ByteBlock {
    private var base: UnsafeMutableRawPointer
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 4096)
        base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    /// Empty, for reuse.
    func reset() { count = 0 }

    /// Takes the writer's buffered bytes as its own and gives the writer its storage instead
    /// (empty; made large enough first).
    fileprivate func exchangeStorage(with out: OutputBuffer) {
        var storage = base
        if capacity < OutputBuffer.allocation {
            storage.deallocate()
            storage = .allocate(byteCount: OutputBuffer.allocation, alignment: 16)
        }
        (base, capacity, count) = (UnsafeMutableRawPointer(out.base), OutputBuffer.allocation, out.count)
        out.base = storage.assumingMemoryBound(to: UInt8.self)
        out.count = 0
    }

    deinit { base.deallocate() }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        if count + bytes.count > capacity {
            capacity = max(2 * capacity, count + bytes.count)
            let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            grown.copyMemory(from: base, byteCount: count)
            base.deallocate()
            base = grown
        }
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// The bytes, valid while the block lives.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}

/// The writer's 64 KiB of buffered output.
private final class OutputBuffer {
    static let capacity = 1 << 16
    /// The bytes `base` points to: `capacity` and room for a last value past it.
    static let allocation = capacity + JSONWriter.maxRoom
    /// (A writer into memory hands it over with the bytes in it: `ByteBlock.exchangeStorage`.)
    var base = UnsafeMutablePointer<UInt8>.allocate(capacity: allocation)
    var count = 0
    /// A writer into memory's flushed bytes (nil: the writer writes to its file): what its
    /// buffer held when it filled between two hand-overs.
    var collected: ByteBlock?
    /// The texts `JSONWriter` keeps (`KeptTexts`: two of each) and its recurring string's JSON.
    let endpointTexts: UnsafeMutablePointer<UInt8> = {
        precondition(MemoryLayout<EndpointText>.size >= Endpoint.maxTextLength)
        return .allocate(capacity: 2 * MemoryLayout<EndpointText>.size)
    }()
    let secondsTexts = UnsafeMutablePointer<UInt8>.allocate(capacity: 2 * MemoryLayout<SIMD32<UInt8>>.size)
    static let recurringCapacity = 64
    let recurringJSON = UnsafeMutablePointer<UInt8>.allocate(capacity: recurringCapacity)

    deinit {
        base.deallocate()
        endpointTexts.deallocate()
        secondsTexts.deallocate()
        recurringJSON.deallocate()
    }
}
