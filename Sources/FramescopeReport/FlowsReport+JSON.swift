/// `framescope.flows/1` written as a stream (keys in sorted order).
extension FlowsReport {
    public func write(to w: inout JSONWriter) {
        w.object { w in
            w.key("connections")
            w.array(connections) { w, c in c.write(to: &w) }
            w.key("inputs")
            w.array(inputs) { w, input in input.write(to: &w) }
            w.key("limits")
            limits.write(to: &w)
            w.key("packets")
            packets.write(to: &w)
            w.field("schema", schema)
        }
    }
}

extension FlowsReport.Input {
    func write(to w: inout JSONWriter) {
        w.object { w in
            if let error { w.field("error", error) }
            w.field("firstFrame", firstFrame)
            if let frameIndex { w.field("frameIndex", frameIndex) }
            w.field("packets", packets)
            w.field("path", path)
            w.field("reader", reader)
            if let timeZone { w.field("timeZone", timeZone) }
        }
    }
}

extension FlowsReport.Limits {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("bufferLimitGaps", bufferLimitGaps)
            w.field("closedLimitFinalized", closedLimitFinalized)
            w.field("connectionLimitEvictions", connectionLimitEvictions)
            w.field("directionsWithoutConflictCheck", directionsWithoutConflictCheck)
            w.field("globalLimitEvictions", globalLimitEvictions)
            w.field("lateBytes", lateBytes)
            w.field("peakBufferedBytes", peakBufferedBytes)
        }
    }
}

extension FlowsReport.Packets {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("bytesCutBySnaplen", bytesCutBySnaplen)
            w.field("cutBySnaplen", cutBySnaplen)
            w.field("skipped", counts: skipped)
            w.field("tcp", tcp)
            w.field("total", total)
        }
    }
}

extension FlowsReport.Connection {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("client", client)
            w.key("directions")
            w.array(directions) { w, d in d.write(to: &w) }
            w.field("durationSeconds", durationSeconds)
            w.field("end", end)
            w.field("finalizedBy", finalizedBy)
            w.field("firstFrame", firstFrame)
            w.field("firstTime", firstTime)
            w.field("id", id)
            w.field("lastTime", lastTime)
            w.field("packets", packets)
            w.field("roles", roles)
            w.field("server", server)
            w.field("start", start)
        }
    }
}

extension FlowsReport.DirectionReport {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("bytes", bytes)
            w.key("conflicts")
            w.object { w in
                w.field("bytes", conflicts.bytes)
                w.field("count", conflicts.count)
                w.key("list")
                w.array(conflicts.list) { w, c in
                    w.object { w in
                        w.field("frame", c.frame)
                        w.field("length", c.length)
                        w.field("offset", c.offset)
                    }
                }
                w.field("uncheckedBytes", conflicts.uncheckedBytes)
            }
            w.field("fin", fin)
            w.field("from", from)
            w.key("gaps")
            w.object { w in
                w.field("bytes", gaps.bytes)
                w.field("count", gaps.count)
                w.key("list")
                w.array(gaps.list) { w, gap in gap.write(to: &w) }
            }
            w.field("keepAlives", keepAlives)
            w.field("lateBytes", lateBytes)
            w.field("midStream", midStream)
            if let mss { w.field("mss", mss) }
            w.field("outOfOrder", outOfOrder)
            w.field("packets", packets)
            w.field("payloadPackets", payloadPackets)
            w.field("retransmissions", retransmissions)
            w.field("rst", rst)
            w.field("segments", segments)
            w.field("syn", syn)
            w.field("to", to)
            w.field("wireBytes", wireBytes)
        }
    }
}

extension FlowsReport.Gap {
    func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("capturedOffset", capturedOffset)
            w.field("length", length)
            w.field("offset", offset)
            w.field("reason", reason)
        }
    }
}

extension StreamExtractor.Index {
    /// `framescope.extract/1`: a direction without bytes has `"file" : null`.
    public func write(to w: inout JSONWriter) {
        w.object { w in
            w.field("schema", schema)
            w.key("streams")
            w.array(streams) { w, s in
                w.object { w in
                    w.field("bytes", s.bytes)
                    w.field("conflicts", s.conflicts)
                    w.field("connection", s.connection)
                    w.field("direction", s.direction)
                    w.field("file", s.file)
                    w.field("from", s.from)
                    w.key("gaps")
                    w.array(s.gaps) { w, gap in gap.write(to: &w) }
                    w.field("to", s.to)
                }
            }
        }
    }
}
