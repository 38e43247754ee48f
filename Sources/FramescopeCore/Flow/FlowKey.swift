/// The 4-tuple of a connection, in canonical order so that both directions hash alike.
struct FlowKey: Hashable {
    var low: Endpoint
    var high: Endpoint

    init(_ a: Endpoint, _ b: Endpoint) {
        if a < b { low = a; high = b } else { low = b; high = a }
    }
}
