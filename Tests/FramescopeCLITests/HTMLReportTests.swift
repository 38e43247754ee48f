import Foundation
import Testing

/// The HTML report of every seed sample, opened in a real headless Chromium: it renders every
/// chart, raises no script error, and every figure on the page equals the JSON report's.
@Suite(.serialized) struct HTMLReportTests {
    let cli = CLITests()

    static let chromium = ["chromium", "chromium-browser", "google-chrome"].lazy.compactMap { name in
        ["/usr/bin/", "/usr/local/bin/", "/snap/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }.first
    /// In CI a missing browser is a failure, not a skip (scripts/install-deps --test installs it).
    static let runs = chromium != nil || ProcessInfo.processInfo.environment["CI"] != nil

    /// The timeline's axis spans its events: the first starts at the left of the plot and the
    /// last ends at its right (events filled a quarter of the old axis, the connections' lives).
    @Test(arguments: MarkdownReportTests.seeds.indices)
    func theTimelineAxisSpansItsEvents(index: Int) throws {
        let (name, spec) = MarkdownReportTests.seeds[index]
        let sample = CLITests.root.appendingPathComponent("samples/\(name).pcap").path
        let html = try cli.run(["analyze", sample, "--dissector", spec, "--format", "html"]).stdout
        let svg = try #require(firstMatch(#"(<svg class="chart timeline"[\s\S]*?</svg>)"#, in: html)?.first, "\(name): no timeline")
        let bars = matches(#"<rect class="(?:partial|merged|malformed)" x="[\d.]+" y="[\d.]+" width="[\d.]+""#, in: svg).map { rect in
            let x = Double(firstMatch(#"x="([\d.]+)""#, in: rect)![0])!, width = Double(firstMatch(#"width="([\d.]+)""#, in: rect)![0])!
            return (x, x + width)
        }
        try #require(!bars.isEmpty, "\(name): a timeline without bars")
        let plot = 900.0 - 160 - 40  // TimelineChart: width less the label column and the right margin
        #expect(bars.map(\.0).min()! <= 160 + 0.01 * plot, "\(name): the first event is not at the axis' start")
        #expect(bars.map(\.1).max()! >= 160 + 0.97 * plot, "\(name): the last event ends short of the axis' end")
    }

    @Test(.enabled(if: runs, "needs Chromium (apt-get install chromium, or scripts/install-deps --test)"), arguments: MarkdownReportTests.seeds.indices)
    func htmlRendersInChromiumWithTheJSONFigures(index: Int) throws {
        let browser = try #require(Self.chromium, "Chromium is not installed")
        let (name, spec) = MarkdownReportTests.seeds[index]
        let sample = CLITests.root.appendingPathComponent("samples/\(name).pcap").path
        let directory = cli.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let page = directory + "/report.html"
        let extra = try MarkdownReportTests.extra(name)
        #expect(try cli.run(["analyze", sample, "--dissector", spec, "--format", "html", "-o", page] + extra).status == 0)
        let json = try cli.run(["analyze", sample, "--dissector", spec, "--format", "json"] + extra)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])

        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(!html.contains("http://") && !html.contains("https://"), "the page must not reach the network")

        let browserRun = try cli.run(
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(directory)/profile", "--enable-logging=stderr",
                "--v=0", "--window-size=1280,2000", "--dump-dom", URL(fileURLWithPath: page).absoluteString,
            ], executable: browser)
        #expect(browserRun.status == 0, "\(browserRun.stderr.suffix(2000))")
        let consoleErrors = browserRun.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") && $0.contains("Uncaught") }
        #expect(consoleErrors.isEmpty, "\(name): script errors: \(consoleErrors)")
        let dom = browserRun.stdout

        // The script ran and found every chart laid out with a real size.
        let rendered = try #require(firstMatch(#"data-charts-rendered="(\d+)/(\d+)""#, in: dom), "\(name): the page script did not run")
        #expect(rendered[0] == rendered[1] && Int(rendered[1])! >= 3, "\(name): charts rendered \(rendered)")
        // No address breaks across lines, even in a narrow window (they once wrapped mid-port).
        let narrow = try cli.run(
            ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(directory)/profile", "--window-size=420,2000", "--dump-dom",
             URL(fileURLWithPath: page).absoluteString], executable: browser)
        #expect(firstMatch(#"data-addresses-wrapped="(\d+)""#, in: narrow.stdout)?[0] == "0", "\(name): an address wraps at 420 px")

        // Every figure on the page equals the JSON report's, and bars are drawn to scale.
        var checked = 0
        for element in matches(#"<[a-z]+ [^>]*data-json="[^"]+"[^>]*>"#, in: dom) {
            let path = try #require(firstMatch(#"data-json="([^"]+)""#, in: element)?[0])
            let shown = try #require(firstMatch(#"data-value="([^"]+)""#, in: element).flatMap { Double($0[0]) })
            let value = try #require(lookUp(path, in: report).flatMap(number), "\(name): \(path) is not in the JSON report")
            #expect(shown == value, "\(name): \(path) shows \(shown), JSON has \(value)")
            if let scale = firstMatch(#"data-max="(\d+)" data-plot-height="([\d.]+)""#, in: element),
                let height = firstMatch(#" height="([\d.]+)""#, in: element).flatMap({ Double($0[0]) })
            {
                let expected = max(1, value / Double(scale[0])! * Double(scale[1])!)
                #expect(abs(height - expected) <= 0.02, "\(name): bar \(path) is \(height) px, \(expected) expected")
            }
            checked += 1
        }
        #expect(checked >= 60, "\(name): only \(checked) figures carry their JSON path")
        // …and the text a reader sees in a cell is that value.
        for cell in matches(#"<(?:td|span) [^>]*data-value="[^"]+"[^>]*>[^<]*<"#, in: dom) {
            let value = try #require(firstMatch(#"data-value="([^"]+)""#, in: cell)?[0])
            let text = try #require(firstMatch(#">([^<]*)<$"#, in: cell)?[0]).replacingOccurrences(of: ",", with: "")
            // A cell in another unit says by how much (seconds shown as milliseconds, to 3 decimals).
            let scale = firstMatch(#"data-scale="(\d+)""#, in: cell).flatMap { Double($0[0]) } ?? 1
            let shown = try #require(Double(text), "\(name): a cell shows \(text) for \(value)")
            #expect(abs(shown - Double(value)! * scale) <= (scale == 1 ? 0 : 0.0005), "\(name): a cell shows \(text) for \(value)")
        }

        // The verdict leads, with the JSON's counts.
        let totals = try #require(report["totals"] as? [String: Any])
        let down = try #require(totals["serverToClient"] as? [String: Any])
        let verdict = try #require(dom.range(of: "class=\"verdict\""))
        let messages = down["messages"] as! Int
        if messages > 0 { #expect(dom[verdict.lowerBound...].contains("of \(messages) messages arrive split across segments")) }
        if (report["eventsTotal"] as? Int ?? 0) > 0 {
            #expect(dom.contains("tcp.stream == ") && dom.contains("class=\"hex\""), "\(name): evidence with filters and hex")
        }
    }

    /// `connections.#3.directions.1.figures.messages`: keys, array indices, `#ID` = the connection with that id.
    private func lookUp(_ path: String, in root: Any) -> Any? {
        var node: Any? = root, previous = ""
        for part in path.split(separator: ".").map(String.init) {
            if part.hasPrefix("#"), let id = Int(part.dropFirst()), let list = node as? [[String: Any]] {
                node = list.first { $0["id"] as? Int == id }
            } else if let i = Int(part), let list = node as? [Any] {
                node = i < list.count ? list[i] : nil
            } else if let object = node as? [String: Any] {
                // A connection's directions and their figures leave out what is 0 or empty (the totals have every figure).
                let inDirection = path.hasPrefix("connections.") && (previous == "figures" || Int(previous) != nil)
                let absent: Any? = !inDirection ? nil : part == "figures" ? [String: Any]() as Any : 0 as Any
                node = object[part] ?? absent
            } else {
                node = nil
            }
            previous = part
        }
        return node
    }

    private func number(_ value: Any) -> Double? {
        (value as? NSNumber)?.doubleValue
    }

    private func matches(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
    }

    private func firstMatch(_ pattern: String, in text: String) -> [String]? {
        let regex = try! NSRegularExpression(pattern: pattern)
        guard let m = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        return (1..<m.numberOfRanges).map { String(text[Range(m.range(at: $0), in: text)!]) }
    }
}
