/// Inline SVG charts for the HTML report: no script, no network, a `<title>` tooltip on every
/// mark. Every mark carries `data-json` (the path of its figure in the JSON report) and
/// `data-value`, so a test can hold the picture to the numbers.
struct BarChart {
    struct Series {
        var name: String
        var cssClass: String
        /// One value per category, with its JSON path (nil: no bar).
        var values: [(value: Int, json: String)?]
    }

    var title: String
    var caption: String
    var categories: [(label: String, title: String)]
    var series: [Series]
    var unit: String

    static let width = 560.0, height = 230.0
    static let left = 52.0, right = 10.0, top = 22.0, bottom = 40.0
    static var plotWidth: Double { width - left - right }
    static var plotHeight: Double { height - top - bottom }

    func render() -> String {
        let largest = series.flatMap { $0.values.compactMap { $0?.value } }.max() ?? 0
        guard largest > 0, !categories.isEmpty else { return "" }
        let band = Self.plotWidth / Double(categories.count)
        let barWidth = min(28, band * 0.8 / Double(series.count))
        let labelEvery = max(1, Int((Double(categories.count) / 16).rounded(.up)))
        let showCounts = categories.count * series.count <= 24
        var svg = """
            <figure><figcaption>\(escapeHTML(title))<small>\(escapeHTML(caption))</small></figcaption>
            <svg class="chart" viewBox="0 0 \(n(Self.width)) \(n(Self.height))" width="\(n(Self.width))" height="\(n(Self.height))" role="img" aria-label="\(escapeHTML(title))">
            """
        svg += axis(largest: largest)
        for (c, category) in categories.enumerated() {
            let x0 = Self.left + band * Double(c) + (band - barWidth * Double(series.count)) / 2
            for (s, one) in series.enumerated() {
                guard let (value, json) = one.values[c], value > 0 else { continue }
                let h = max(1, Double(value) / Double(largest) * Self.plotHeight)
                let x = x0 + barWidth * Double(s), y = Self.top + Self.plotHeight - h
                svg += "<rect class=\"\(one.cssClass)\" x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(barWidth - 1))\" height=\"\(n(h))\""
                svg += " data-json=\"\(json)\" data-value=\"\(value)\" data-max=\"\(largest)\" data-plot-height=\"\(n(Self.plotHeight))\">"
                svg += "<title>\(escapeHTML(one.name)): \(value) \(unit) with \(escapeHTML(category.title))</title></rect>"
                if showCounts {
                    svg += "<text class=\"count\" x=\"\(n(x + (barWidth - 1) / 2))\" y=\"\(n(y - 3))\">\(value)</text>"
                }
            }
            if c % labelEvery == 0 {
                let room = max(3, Int(band * Double(labelEvery) / 6.5))
                let label = category.label.count > room ? category.label.prefix(room - 1) + "…" : category.label
                svg += "<text class=\"tick\" x=\"\(n(Self.left + band * (Double(c) + 0.5)))\" y=\"\(n(Self.top + Self.plotHeight + 14))\">"
                svg += "<title>\(escapeHTML(category.title))</title>\(escapeHTML(label))</text>"
            }
        }
        svg += legend()
        return svg + "</svg></figure>\n"
    }

    private func axis(largest: Int) -> String {
        var svg = ""
        for fraction in [0.0, 0.5, 1.0] {
            let y = Self.top + Self.plotHeight * (1 - fraction)
            svg += "<line class=\"grid\" x1=\"\(n(Self.left))\" x2=\"\(n(Self.width - Self.right))\" y1=\"\(n(y))\" y2=\"\(n(y))\"/>"
            svg += "<text class=\"ytick\" x=\"\(n(Self.left - 6))\" y=\"\(n(y + 4))\">\(Int((Double(largest) * fraction).rounded()))</text>"
        }
        return svg
    }

    private func legend() -> String {
        guard series.count > 1 else { return "" }
        var svg = "", x = Self.left
        for one in series {
            svg += "<rect class=\"\(one.cssClass)\" x=\"\(n(x))\" y=\"\(n(Self.height - 14))\" width=\"10\" height=\"10\"/>"
            svg += "<text class=\"legend\" x=\"\(n(x + 14))\" y=\"\(n(Self.height - 5))\">\(escapeHTML(one.name))</text>"
            x += 24 + Double(one.name.count) * 7
        }
        return svg
    }
}

/// Partial, merged and malformed over capture time, one row per connection direction: a lane
/// per kind, each bucket a mark whose opacity grows with its count.
struct TimelineChart {
    struct Row {
        var label: String
        var title: String
        var timeline: AnalysisReport.Timeline
        /// JSON path of the direction (`connections.#ID.directions.N`).
        var json: String

        /// Epoch seconds from the start of its first interval with an event to the end of its last.
        var eventSpan: ClosedRange<Double>? {
            let series = [timeline.partial, timeline.merged, timeline.malformed]
            guard let first = series.compactMap({ $0.firstIndex { $0 > 0 } }).min(),
                let last = series.compactMap({ $0.lastIndex { $0 > 0 } }).max()
            else { return nil }
            let origin = epochSeconds(timeline.origin), width = timeline.bucketSeconds
            return (origin + Double(first) * width)...(origin + Double(last + 1) * width)
        }
    }

    var rows: [Row]
    /// Capture span in epoch seconds.
    var start: Double
    var end: Double

    static let width = 900.0, labelWidth = 160.0, right = 40.0, rowHeight = 30.0, top = 8.0, bottom = 28.0
    static let kinds: [(name: String, cssClass: String, path: String)] = [
        ("partial", "partial", "partial"), ("merged", "merged", "merged"), ("malformed", "malformed", "malformed"),
    ]

    func render() -> String {
        guard !rows.isEmpty else { return "" }
        let plot = Self.width - Self.labelWidth - Self.right
        let span = max(end - start, 1e-3)
        let height = Self.top + Self.rowHeight * Double(rows.count) + Self.bottom
        let largest = rows.flatMap { r in Self.kinds.flatMap { series(r.timeline, $0.path) } }.max() ?? 1
        var svg = """
            <svg class="chart timeline" viewBox="0 0 \(n(Self.width)) \(n(height))" width="\(n(Self.width))" height="\(n(height))" role="img" aria-label="timeline">
            """
        for (i, row) in rows.enumerated() {
            let y = Self.top + Self.rowHeight * Double(i)
            svg += "<text class=\"rowlabel\" x=\"0\" y=\"\(n(y + 19))\"><title>\(escapeHTML(row.title))</title>\(escapeHTML(row.label))</text>"
            svg += "<rect class=\"lane\" x=\"\(n(Self.labelWidth))\" y=\"\(n(y + 2))\" width=\"\(n(plot))\" height=\"\(n(Self.rowHeight - 4))\"/>"
            let origin = epochSeconds(row.timeline.origin) - start, width = row.timeline.bucketSeconds
            for (k, kind) in Self.kinds.enumerated() {
                for (b, count) in series(row.timeline, kind.path).enumerated() where count > 0 {
                    let x = Self.labelWidth + (origin + Double(b) * width) / span * plot
                    let w = max(2, width / span * plot)
                    let opacity = 0.3 + 0.7 * Double(count) / Double(largest)
                    let from = origin + Double(b) * width
                    svg += "<rect class=\"\(kind.cssClass)\" x=\"\(n(x))\" y=\"\(n(y + 4 + Double(k) * 7.5))\" width=\"\(n(w))\" height=\"7\" fill-opacity=\"\(n(opacity))\""
                    svg += " data-json=\"\(row.json).timeline.\(kind.path).\(b)\" data-value=\"\(count)\">"
                    svg += "<title>\(escapeHTML(row.label)): \(count) \(kind.name) at +\(seconds(from))–\(seconds(from + width)) s</title></rect>"
                }
            }
        }
        let axisY = Self.top + Self.rowHeight * Double(rows.count) + 4
        for q in 0...4 {
            let x = Self.labelWidth + plot * Double(q) / 4
            svg += "<line class=\"grid\" x1=\"\(n(x))\" x2=\"\(n(x))\" y1=\"\(n(Self.top))\" y2=\"\(n(axisY))\"/>"
            svg += "<text class=\"tick\" x=\"\(n(x))\" y=\"\(n(axisY + 14))\">+\(seconds(span * Double(q) / 4)) s</text>"
        }
        return svg + "</svg>\n"
    }

    private func series(_ t: AnalysisReport.Timeline, _ path: String) -> [Int] {
        switch path {
        case "partial": t.partial
        case "merged": t.merged
        default: t.malformed
        }
    }
}

/// Epoch seconds from the report's `"seconds.nanoseconds"` text.
func epochSeconds(_ text: String) -> Double { Double(text) ?? 0 }

/// Seconds with up to three decimals (milliseconds), without trailing zeros.
func seconds(_ value: Double) -> String {
    let ms = (value * 1000).rounded()
    return ms.truncatingRemainder(dividingBy: 1000) == 0 ? String(Int(ms / 1000)) : String(ms / 1000)
}

/// A coordinate with at most two decimals.
func n(_ value: Double) -> String {
    let v = (value * 100).rounded() / 100
    return v == v.rounded() ? String(Int(v)) : String(v)
}

func escapeHTML(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for c in text {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(c)
        }
    }
    return out
}
