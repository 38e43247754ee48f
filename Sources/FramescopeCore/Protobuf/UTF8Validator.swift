/// Validates UTF-8 fed in pieces (a character may be split across them), as protobuf's proto3
/// strings must be: no overlong forms, no surrogates, nothing above U+10FFFF.
struct UTF8Validator {
    private var need = 0
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    /// No character is left unfinished.
    var atCharacterBoundary: Bool { need == 0 }

    /// Checks `count` bytes from `start`; returns the index of the first byte that cannot be
    /// UTF-8 there.
    mutating func firstInvalid(_ bytes: UnsafeRawBufferPointer, from start: Int, count: Int) -> Int? {
        var i = start
        let end = start + count
        while i < end {
            let b = bytes[i]
            i += 1
            if need == 0 {
                if b < 0x80 { continue }
                low = 0x80
                high = 0xBF
                switch b {
                case 0xC2...0xDF: need = 1
                case 0xE0: need = 2; low = 0xA0
                case 0xE1...0xEC, 0xEE...0xEF: need = 2
                case 0xED: need = 2; high = 0x9F
                case 0xF0: need = 3; low = 0x90
                case 0xF1...0xF3: need = 3
                case 0xF4: need = 3; high = 0x8F
                default: return i - 1
                }
            } else {
                guard b >= low && b <= high else { return i - 1 }
                low = 0x80
                high = 0xBF
                need -= 1
            }
        }
        return nil
    }
}
