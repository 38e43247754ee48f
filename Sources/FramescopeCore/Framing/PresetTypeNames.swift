/// Names of the type values of the presets that read a type: what the protocol's own
/// documentation calls each message, so reports say "PUBLISH ×3", not "48 ×3".
extension DissectorSpec {
    /// Names for the client's messages and, where the protocol names the server's differently
    /// (PostgreSQL's letters), for the server's.
    static func presetTypeNames(_ preset: String) -> (client: [UInt64: String], server: [UInt64: String]?) {
        switch preset {
        case "tls":
            return ([20: "ChangeCipherSpec", 21: "Alert", 22: "Handshake", 23: "ApplicationData", 24: "Heartbeat"], nil)
        case "http2":
            let frames = ["DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"]
            return (Dictionary(uniqueKeysWithValues: frames.enumerated().map { (UInt64($0.offset), $0.element) }), nil)
        case "mqtt":
            // The type field is the whole first byte: the packet type in its high nibble, flags
            // (PUBLISH's QoS, DUP and RETAIN) in the low one.
            let packets = [
                1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP", 8: "SUBSCRIBE", 9: "SUBACK",
                10: "UNSUBSCRIBE", 11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT", 15: "AUTH",
            ]
            var names: [UInt64: String] = [:]
            for (type, name) in packets {
                for flags in 0..<16 { names[UInt64(type << 4 | flags)] = name }
            }
            return (names, nil)
        case "bgp":
            return ([1: "OPEN", 2: "UPDATE", 3: "NOTIFICATION", 4: "KEEPALIVE", 5: "ROUTE-REFRESH"], nil)
        case "amqp":
            return ([1: "METHOD", 2: "HEADER", 3: "BODY", 8: "HEARTBEAT"], nil)
        case "postgres":
            let client: [Character: String] = [
                "B": "Bind", "C": "Close", "D": "Describe", "E": "Execute", "F": "FunctionCall", "H": "Flush", "P": "Parse", "Q": "Query",
                "S": "Sync", "X": "Terminate", "d": "CopyData", "c": "CopyDone", "f": "CopyFail", "p": "PasswordMessage",
            ]
            let server: [Character: String] = [
                "1": "ParseComplete", "2": "BindComplete", "3": "CloseComplete", "A": "NotificationResponse", "C": "CommandComplete",
                "D": "DataRow", "E": "ErrorResponse", "G": "CopyInResponse", "H": "CopyOutResponse", "I": "EmptyQueryResponse",
                "K": "BackendKeyData", "N": "NoticeResponse", "R": "Authentication", "S": "ParameterStatus", "T": "RowDescription",
                "V": "FunctionCallResponse", "W": "CopyBothResponse", "Z": "ReadyForQuery", "c": "CopyDone", "d": "CopyData",
                "n": "NoData", "s": "PortalSuspended", "t": "ParameterDescription", "v": "NegotiateProtocolVersion",
            ]
            func byValue(_ names: [Character: String]) -> [UInt64: String] {
                Dictionary(uniqueKeysWithValues: names.map { (UInt64($0.key.asciiValue!), $0.value) })
            }
            return (byValue(client), byValue(server))
        default:
            return ([:], nil)
        }
    }
}
