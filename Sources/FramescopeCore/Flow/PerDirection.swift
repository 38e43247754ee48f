/// One value for each direction of a connection, held as stored properties: no array (and so
/// no heap allocation) per connection.
public struct PerDirection<Value> {
    public var clientToServer: Value
    public var serverToClient: Value

    public init(clientToServer: Value, serverToClient: Value) {
        self.clientToServer = clientToServer
        self.serverToClient = serverToClient
    }

    public init(_ make: (Direction) throws -> Value) rethrows {
        clientToServer = try make(.clientToServer)
        serverToClient = try make(.serverToClient)
    }

    public subscript(direction: Direction) -> Value {
        get { direction == .clientToServer ? clientToServer : serverToClient }
        _modify {
            switch direction {
            case .clientToServer: yield &clientToServer
            case .serverToClient: yield &serverToClient
            }
        }
    }

    public func map<T>(_ transform: (Value) throws -> T) rethrows -> PerDirection<T> {
        PerDirection<T>(clientToServer: try transform(clientToServer), serverToClient: try transform(serverToClient))
    }

    /// Both values, client to server first.
    public var both: [Value] { [clientToServer, serverToClient] }
}

extension PerDirection: Sendable where Value: Sendable {}
extension PerDirection: Equatable where Value: Equatable {}
