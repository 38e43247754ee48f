/// Writes `value` in decimal at `start`, padded with zeros to `width` digits; returns the index
/// after its last digit. For text written by the million (endpoints, epoch times, JSON numbers)
/// without a String in between; `out` must have room (20 digits at most, or `width`).
public func writeDecimal(_ value: UInt64, into out: UnsafeMutableBufferPointer<UInt8>, at start: Int, width: Int = 1) -> Int {
    var digits = 1, rest = value
    while rest >= 10 {
        digits += 1
        rest /= 10
    }
    digits = max(digits, width)
    var v = value
    for i in stride(from: start + digits - 1, through: start, by: -1) {
        out[i] = 0x30 + UInt8(v % 10)
        v /= 10
    }
    return start + digits
}
