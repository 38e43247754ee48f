#if canImport(Glibc)
import Glibc
#endif
import FramescopeCore

/// How the human formats show times: in UTC, or in the capture's own time zone where its pcapng
/// names one (`if_iana_tzname`) and the system's time-zone database (tzdata) has it. JSON keeps
/// epoch seconds either way.
public struct HumanClock: Sendable {
    /// The IANA name the times are shown in; nil: UTC.
    public let zone: String?
    /// A zone the capture named that this system cannot show (no tzdata, or an unknown name).
    public let unavailableZone: String?

    public static let utc = HumanClock(zone: nil, unavailableZone: nil)

    private init(zone: String?, unavailableZone: String?) {
        self.zone = zone
        self.unavailableZone = unavailableZone
    }

    /// The zone every input that names one agrees on (inputs that disagree: UTC).
    public init(inputs: [FlowsReport.Input]) {
        let named = Set(inputs.compactMap(\.timeZone))
        guard named.count == 1, let name = named.first else {
            self = .utc
            return
        }
        self = Self.isKnown(name) ? HumanClock(zone: name, unavailableZone: nil) : HumanClock(zone: nil, unavailableZone: name)
    }

    /// `2026-03-13T11:00:18.138+01:00` in the zone (its offset at that moment), or `…Z` in UTC.
    public func iso(_ t: Timestamp) -> String {
        guard let zone else { return t.isoString }
        return t.isoString(offsetSeconds: Self.offset(zone, at: t.nanoseconds / 1_000_000_000))
    }

    /// What the times are in: "UTC", "Europe/Berlin (the capture's time zone)".
    public var label: String {
        if let zone { return "\(zone) (the capture's time zone)" }
        if let unavailableZone { return "UTC (the capture names \(unavailableZone), which this system's tzdata does not have)" }
        return "UTC"
    }

    /// An IANA name (letters, digits, `_+-/`, no `..`) whose file the time-zone database has.
    private static func isKnown(_ name: String) -> Bool {
        guard !name.isEmpty, !name.contains(".."), !name.hasPrefix("/"),
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_+-/".contains($0)) })
        else { return false }
        let directory = getenv("TZDIR").map { String(cString: $0) } ?? "/usr/share/zoneinfo"
        return access(directory + "/" + name, R_OK) == 0
    }

    /// Seconds east of UTC in `zone` at `seconds` since the epoch (glibc's reading of tzdata).
    private static func offset(_ zone: String, at seconds: Int64) -> Int {
        let saved = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", ":" + zone, 1)
        tzset()
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        var time = time_t(seconds), local = tm()
        guard localtime_r(&time, &local) != nil else { return 0 }
        return local.tm_gmtoff
    }
}
