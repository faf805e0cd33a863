// Eight bytes at a time over the plain stretches of a JSON string, for the scanner and the writer.

/// Where the plain part of a JSON string's bytes ends: bytes that are neither `"`, `\`, a control
/// character (below 0x20) nor above 0x7F, which a reader or a writer of a JSON string passes
/// over as they are. Tokens and records are mostly such bytes (base64url, ids, URLs).
///
/// Written by hand (the standard word-at-a-time tests for a byte below a bound or equal to a
/// value, on eight bytes in one `UInt64`): no library here offers it.
enum JSONPlainBytes {
    /// The offset, at or after `start` and a whole number of eight-byte words from it, of the
    /// first word that may hold a byte that is not plain (or that the text's end cuts short).
    /// Every byte before it is plain; the caller looks at the rest byte by byte. A word is
    /// never passed over wrongly: the tests below can only report a byte that is not there.
    static func plainPrefixEnd(in text: UnsafeRawBufferPointer, from start: Int) -> Int {
        var offset = start
        while offset + 8 <= text.count {
            let word = UInt64(littleEndian: text.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            if mayHoldSpecialByte(word) { break }
            offset += 8
        }
        return offset
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether `word` may hold a byte above 0x7F, below 0x20, `"` or `\`.
    static func mayHoldSpecialByte(_ word: UInt64) -> Bool {
        // A byte above 0x7F has its high bit set; the other tests assume there is none.
        if word & highBits != 0 { return true }
        // Some byte is below n when (word - n·ones) & ~word & highBits is not zero (n ≤ 0x80).
        if (word &- ones &* 0x20) & ~word & highBits != 0 { return true }
        return hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
    }

    private static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- ones) & ~word & highBits != 0
    }
}
