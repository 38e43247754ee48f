import FramescopeCore

extension MessageRecord {
    /// One `--messages` line: the message's place in its stream and the frames that carried it.
    public func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("connection", connection.rawValue)
            w.field("direction", direction.description)
            w.field("firstFrame", firstFrame)
            w.field("firstTime", firstTimestamp.epochString)
            w.field("lastFrame", lastFrame)
            w.field("lastTime", lastTimestamp.epochString)
            w.field("length", length)
            w.field("offset", offset)
            w.field("segments", segments)
            w.key("type")
            if let type { w.int(type) } else { w.null() }
        }
        w.endLine()
    }
}
