/// The evidence kept for the report: `limit` events and a few examples, and how many events
/// there were. What is kept does not depend on the order connections are processed in — the
/// lowest by (connection ID, order found within it), not the first found — so the shards of a
/// capture, analyzed apart and merged, keep what one run over it keeps.
public struct EvidenceRecorder: Sendable {
    public static let limit = 10_000
    private var kept: LowestByKey<AnalysisEvent>
    public private(set) var total = 0
    /// Client and server of the finished connections the kept evidence names: it outlives its
    /// connections, which the analyzer does not keep.
    public private(set) var endpoints: [ConnectionID: (client: Endpoint, server: Endpoint)] = [:]
    /// The connections kept events name.
    private var named: Set<ConnectionID> = []
    /// Events and examples offered so far: their order found.
    private var found = 0

    /// - Parameter limit: events kept (tests use fewer).
    init(limit: Int = Self.limit) { kept = LowestByKey(capacity: limit) }

    /// The kept events by connection, each one's in the order found.
    public var events: [AnalysisEvent] { kept.sorted }

    /// Counts an event; builds it only while it would be kept (past the cap, an event of a
    /// connection after the kept ones costs a count and a comparison, not an allocation).
    mutating func add(_ connection: ConnectionID, _ event: @autoclosure () -> AnalysisEvent) {
        total += 1
        found += 1
        keep(event(), at: EvidenceKey(connection: connection, order: found))
    }

    /// Keeps `event` if its key ranks among the lowest (built only then).
    private mutating func keep(_ event: @autoclosure () -> AnalysisEvent, at key: EvidenceKey) {
        guard kept.admits(key) else { return }
        named.insert(key.connection)
        guard let evicted = kept.insert(event(), at: key)?.connection else { return }
        // The evicted event was the highest kept, its connection the highest named: it is named
        // still exactly when the highest kept now is its (a count per connection cost two more
        // dictionary look-ups an admission).
        guard kept.highestKey?.connection != evicted else { return }
        named.remove(evicted)
        forgetIfUnnamed(evicted)
    }

    mutating func add(_ event: AnalysisEvent) { add(event.connection, event) }

    /// Examples of partial messages and merged segments: the lowest `examplesPerKind` of each
    /// kind per direction, and the lowest of each cause.
    public static let examplesPerKind = 3
    private var examplesByKind = [LowestByKey<SplitExample>](repeating: LowestByKey(capacity: examplesPerKind), count: 4)
    private var examplesByCause = [(key: EvidenceKey, example: SplitExample)?](repeating: nil, count: 4 * SplitCause.allCases.count)

    /// The kept examples by connection, each one's in the order found.
    public var examples: [SplitExample] { keptExamples.sorted { $0.key < $1.key }.map(\.item) }

    /// Every example kept, for its kind or its cause, once.
    private var keptExamples: [(key: EvidenceKey, item: SplitExample)] {
        var all = examplesByKind.flatMap(\.entries)
        for case let (key, example)? in examplesByCause where !all.contains(where: { $0.key == key }) { all.append((key, example)) }
        return all
    }

    /// Whether an example of `kind` found next in `connection` would be kept (checked per
    /// partial message: comparisons, no scan).
    func wantsExample(_ kind: SplitExample.Kind, _ direction: Direction, _ cause: SplitCause, in connection: ConnectionID) -> Bool {
        let key = EvidenceKey(connection: connection, order: found + 1)
        guard let lowest = examplesByCause[Self.slot(kind, direction, cause)] else { return true }
        return key < lowest.key || examplesByKind[Self.slot(kind, direction)].admits(key)
    }

    mutating func add(example: SplitExample) {
        found += 1
        keep(example, at: EvidenceKey(connection: example.connection, order: found))
    }

    /// Keeps `example` where its key ranks among the lowest of its kind or cause.
    private mutating func keep(_ example: SplitExample, at key: EvidenceKey) {
        let cause = Self.slot(example.kind, example.direction, example.cause)
        var evicted: [ConnectionID] = []
        if examplesByCause[cause].map({ key < $0.key }) ?? true {
            if let old = examplesByCause[cause] { evicted.append(old.example.connection) }
            examplesByCause[cause] = (key, example)
        }
        let kind = Self.slot(example.kind, example.direction)
        if examplesByKind[kind].admits(key), let old = examplesByKind[kind].insert(example, at: key) { evicted.append(old.connection) }
        for id in evicted { forgetIfUnnamed(id) }
    }

    private static func slot(_ kind: SplitExample.Kind, _ direction: Direction) -> Int {
        (kind == .partial ? 0 : 2) + direction.rawValue
    }

    private static func slot(_ kind: SplitExample.Kind, _ direction: Direction, _ cause: SplitCause) -> Int {
        slot(kind, direction) * SplitCause.allCases.count + cause.rawValue
    }

    private func names(_ id: ConnectionID) -> Bool {
        named.contains(id) || examplesByCause.contains { $0?.example.connection == id }
            || examplesByKind.contains { $0.contains { $0.connection == id } }
    }

    private mutating func forgetIfUnnamed(_ id: ConnectionID) {
        if endpoints[id] != nil && !names(id) { endpoints[id] = nil }
    }

    /// Takes in the evidence another recorder kept over other connections (a worker's share of
    /// the capture), its connections renumbered: what one recorder over all of them keeps,
    /// since both kept the lowest of theirs. Orders found are compared only within a
    /// connection, which one recorder saw whole. The other's endpoints come last, for what its
    /// connections still name: taken first, one connection's endpoints were forgotten when its
    /// first example was evicted, before its second (kept) was taken in.
    public mutating func absorb(_ other: EvidenceRecorder, renumber: (ConnectionID) -> ConnectionID) {
        total += other.total
        found = max(found, other.found)
        // The other's events, lowest first, renumbered (the renumbering keeps their order: a
        // worker's IDs follow the capture's), merged with these in one pass: offered one by one,
        // each went through the heap, 2,000 instructions an event with the renumbering (a
        // quarter of the serial end of a run with 10,000 events kept).
        var last: (id: ConnectionID, renumbered: ConnectionID)?
        let incoming = other.kept.sortedSlots.map { key, slot in
            var e = other.kept.item(at: slot)
            if last?.id != e.connection { last = (e.connection, renumber(e.connection)) }
            e.connection = last!.renumbered
            return (key: EvidenceKey(connection: e.connection, order: key.order), item: e)
        }
        let evicted = kept.merge(incoming)
        // The heap is in key order now: each connection's events together.
        named.removeAll(keepingCapacity: true)
        var previous: ConnectionID?
        for key in kept.keys where key.connection != previous {
            named.insert(key.connection)
            previous = key.connection
        }
        var forgotten: ConnectionID?
        for key in evicted where key.connection != forgotten {  // (in key order: each connection once)
            forgetIfUnnamed(key.connection)
            forgotten = key.connection
        }
        for (key, example) in other.keptExamples {
            var x = example
            x.connection = renumber(x.connection)
            keep(x, at: EvidenceKey(connection: x.connection, order: key.order))
        }
        for (id, ends) in other.endpoints where names(renumber(id)) { endpoints[renumber(id)] = ends }
    }

    /// Notes the endpoints of a finishing connection if kept evidence names it.
    mutating func connectionFinished(_ info: ConnectionInfo) {
        if names(info.id) { endpoints[info.id] = (info.client, info.server) }
    }
}

/// Where a piece of evidence ranks: by connection, then the order it was found in.
struct EvidenceKey: Comparable, Sendable {
    var connection: ConnectionID
    var order: Int

    static func < (a: Self, b: Self) -> Bool { (a.connection, a.order) < (b.connection, b.order) }
}

/// The `capacity` items of lowest key offered (a max-heap: the highest kept is at the root,
/// the one a lower newcomer evicts). The heap holds keys and where each item lies in `items`:
/// sifting moves those 24-byte entries, never the items (an event is a hundred bytes with
/// references, copied with a retain and a release at each level: 200,000 invalid bodies cost
/// twice the instructions of valid ones through it).
struct LowestByKey<Item: Sendable>: Sendable {
    let capacity: Int
    private var heap: [(key: EvidenceKey, slot: Int)] = []
    private var items: [Item] = []

    init(capacity: Int) { self.capacity = capacity }

    func admits(_ key: EvidenceKey) -> Bool { heap.count < capacity || key < heap[0].key }

    /// The highest key kept: the one a newcomer past `capacity` evicts.
    var highestKey: EvidenceKey? { heap.first?.key }

    /// The kept items with their keys, in no set order.
    var entries: [(key: EvidenceKey, item: Item)] { heap.map { ($0.key, items[$0.slot]) } }

    /// Whether a kept item satisfies `predicate`.
    func contains(where predicate: (Item) -> Bool) -> Bool { items.contains(where: predicate) }

    /// Keeps `item` (which `admits(key)`); returns the item it evicts, if any.
    mutating func insert(_ item: Item, at key: EvidenceKey) -> Item? {
        if heap.count < capacity {
            items.append(item)
            heap.append((key, items.count - 1))
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[parent].key < heap[child].key else { break }
                heap.swapAt(parent, child)
                child = parent
            }
            return nil
        }
        let slot = heap[0].slot
        var evicted = item
        swap(&evicted, &items[slot])
        // The newcomer sinks from the root: larger children move up into the hole it leaves,
        // through the buffer (array accesses checked bounds and uniqueness at every level: 860
        // instructions an insertion past the cap).
        heap.withUnsafeMutableBufferPointer { h in
            var hole = 0
            while true {
                let left = 2 * hole + 1
                guard left < h.count else { break }
                let child = left + 1 < h.count && h[left].key < h[left + 1].key ? left + 1 : left
                guard key < h[child].key else { break }
                h[hole] = h[child]
                hole = child
            }
            h[hole] = (key, slot)
        }
        return evicted
    }

    /// The kept items, lowest key first.
    var sorted: [Item] { sortedSlots.map { items[$0.slot] } }

    /// The keys kept, lowest first, with where each one's item is (`item(at:)`).
    var sortedSlots: [(key: EvidenceKey, slot: Int)] { heap.sorted { $0.key < $1.key } }

    func item(at slot: Int) -> Item { items[slot] }

    /// The keys kept, in heap order.
    var keys: some Sequence<EvidenceKey> { heap.lazy.map(\.key) }

    /// Keeps the `capacity` lowest of those kept and `entries` (lowest key first, keys not kept
    /// here); returns the keys let go. The kept ones, highest key first, are the heap. (Keys and
    /// positions are merged; each item kept is copied once.)
    mutating func merge(_ entries: [(key: EvidenceKey, item: Item)]) -> [EvidenceKey] {
        let mine = sortedSlots
        var chosen: [(key: EvidenceKey, mine: Bool, index: Int)] = []
        chosen.reserveCapacity(min(capacity, mine.count + entries.count))
        var evicted: [EvidenceKey] = []
        var (i, j) = (0, 0)
        while i < mine.count || j < entries.count {
            let takeMine = j == entries.count || (i < mine.count && mine[i].key < entries[j].key)
            let next = takeMine ? (mine[i].key, true, mine[i].slot) : (entries[j].key, false, j)
            if takeMine { i += 1 } else { j += 1 }
            if chosen.count < capacity { chosen.append(next) } else { evicted.append(next.0) }
        }
        var kept: [Item] = []
        kept.reserveCapacity(chosen.count)
        for c in chosen.reversed() { kept.append(c.mine ? items[c.index] : entries[c.index].item) }
        items = kept
        heap = chosen.reversed().enumerated().map { ($1.key, $0) }  // descending: each parent above its children
        return evicted
    }
}
