// FIDO UAF 1.1 TLV (Authenticator Commands §3.1): a 16-bit tag and a 16-bit length, both
// little-endian, then the value. Written by hand: no Swift library reads UAF's TLV.

/// A UAF TLV tag (FIDO UAF Registry of Predefined Values §3.1, Authenticator Commands §3.1).
///
/// Tags with bit 12 (`0x1000`) set are composite: their value is a sequence of TLVs.
public struct UAFTag: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Whether the value is itself a sequence of TLVs.
    public var isComposite: Bool { rawValue & 0x1000 != 0 }

    public static let regAssertion = UAFTag(rawValue: 0x3E01)  // TAG_UAFV1_REG_ASSERTION
    public static let authAssertion = UAFTag(rawValue: 0x3E02)  // TAG_UAFV1_AUTH_ASSERTION
    public static let keyRegistrationData = UAFTag(rawValue: 0x3E03)  // TAG_UAFV1_KRD
    public static let signedData = UAFTag(rawValue: 0x3E04)  // TAG_UAFV1_SIGNED_DATA
    public static let attestationCertificate = UAFTag(rawValue: 0x2E05)  // TAG_ATTESTATION_CERT
    public static let signature = UAFTag(rawValue: 0x2E06)  // TAG_SIGNATURE
    public static let attestationBasicFull = UAFTag(rawValue: 0x3E07)  // TAG_ATTESTATION_BASIC_FULL
    public static let attestationBasicSurrogate = UAFTag(rawValue: 0x3E08)  // TAG_ATTESTATION_BASIC_SURROGATE
    public static let keyID = UAFTag(rawValue: 0x2E09)  // TAG_KEYID
    public static let finalChallengeHash = UAFTag(rawValue: 0x2E0A)  // TAG_FINAL_CHALLENGE_HASH
    public static let aaid = UAFTag(rawValue: 0x2E0B)  // TAG_AAID
    public static let publicKey = UAFTag(rawValue: 0x2E0C)  // TAG_PUB_KEY
    public static let counters = UAFTag(rawValue: 0x2E0D)  // TAG_COUNTERS
    public static let assertionInfo = UAFTag(rawValue: 0x2E0E)  // TAG_ASSERTION_INFO
    public static let authenticatorNonce = UAFTag(rawValue: 0x2E0F)  // TAG_AUTHENTICATOR_NONCE
    public static let transactionContentHash = UAFTag(rawValue: 0x2E10)  // TAG_TRANSACTION_CONTENT_HASH
    public static let `extension` = UAFTag(rawValue: 0x3E11)  // TAG_EXTENSION (critical)
    public static let extensionNonCritical = UAFTag(rawValue: 0x3E12)  // TAG_EXTENSION_NON_CRITICAL
    public static let extensionID = UAFTag(rawValue: 0x2E13)  // TAG_EXTENSION_ID
    public static let extensionData = UAFTag(rawValue: 0x2E14)  // TAG_EXTENSION_DATA

    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// One TLV item: a tag and its value bytes.
///
/// A value type for building and reading UAF assertions. Parsing never traps: every malformed
/// input (truncated header or value, bytes left over) is a ``SignetError`` with the code
/// ``SignetError/Code/malformedMessage``.
public struct UAFTLV: Sendable, Equatable {
    public var tag: UAFTag
    public var value: [UInt8]

    public init(_ tag: UAFTag, _ value: [UInt8]) {
        self.tag = tag
        self.value = value
    }

    /// A composite item whose value is `children`, encoded in order.
    public init(_ tag: UAFTag, children: [UAFTLV]) {
        self.init(tag, children.flatMap(\.encoded))
    }

    /// The largest value a 16-bit length can carry.
    public static let maximumLength = Int(UInt16.max)

    /// Tag, length and value, as the wire carries them (what UAF signatures cover).
    public var encoded: [UInt8] {
        precondition(value.count <= Self.maximumLength, "a UAF TLV value holds at most 65535 bytes")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + value.count)
        bytes.append(contentsOf: UAFBytes.littleEndian(tag.rawValue))
        bytes.append(contentsOf: UAFBytes.littleEndian(UInt16(value.count)))
        bytes.append(contentsOf: value)
        return bytes
    }

    /// The items of a composite value.
    public func children() throws -> [UAFTLV] {
        guard tag.isComposite else { throw SignetError(.malformedMessage, "the UAF tag \(tag) is not composite") }
        return try Self.sequence(value)
    }

    /// Reads a sequence of items that fills `bytes` exactly.
    public static func sequence(_ bytes: [UInt8]) throws -> [UAFTLV] {
        var items: [UAFTLV] = []
        var offset = 0
        while offset < bytes.count {
            let (item, next) = try read(bytes, at: offset)
            items.append(item)
            offset = next
        }
        return items
    }

    /// Reads exactly one item that fills `bytes`: nothing may follow it.
    public static func single(_ bytes: [UInt8]) throws -> UAFTLV {
        let (item, next) = try read(bytes, at: 0)
        guard next == bytes.count else { throw SignetError(.malformedMessage, "\(bytes.count - next) bytes follow the UAF item \(item.tag)") }
        return item
    }

    private static func read(_ bytes: [UInt8], at offset: Int) throws -> (UAFTLV, Int) {
        guard bytes.count - offset >= 4 else { throw SignetError(.malformedMessage, "a UAF TLV header is cut short at byte \(offset)") }
        let tag = UAFTag(rawValue: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)
        let length = Int(UInt16(bytes[offset + 2]) | UInt16(bytes[offset + 3]) << 8)
        let start = offset + 4
        guard bytes.count - start >= length else {
            throw SignetError(.malformedMessage, "the UAF item \(tag) says \(length) bytes but \(bytes.count - start) remain")
        }
        return (UAFTLV(tag, Array(bytes[start..<start + length])), start + length)
    }
}

/// Little-endian integers as UAF writes them.
enum UAFBytes {
    static func littleEndian(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * UInt32($0))) & 0xFF) } }

    static func uint16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        let start = bytes.startIndex
        return UInt16(bytes[start]) | UInt16(bytes[start + 1]) << 8
    }

    static func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        let start = bytes.startIndex
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[start + $1]) << (8 * UInt32($1)) }
    }
}

/// The items of one composite value, each tag taken at most once, so that a reader can demand
/// every tag it needs and refuse one it does not know.
struct UAFFields {
    private var items: [UAFTag: [UInt8]] = [:]
    private(set) var extensions: [UAFExtension] = []
    let context: String

    /// Reads `composite`'s children; a tag twice, or a tag outside `allowed`, is refused.
    /// Extensions (`TAG_EXTENSION`, `TAG_EXTENSION_NON_CRITICAL`) may repeat.
    init(_ composite: UAFTLV, allowed: Set<UAFTag>, context: String) throws {
        self.context = context
        for child in try composite.children() {
            if child.tag == .extension || child.tag == .extensionNonCritical {
                extensions.append(try UAFExtension(child))
                continue
            }
            guard allowed.contains(child.tag) else { throw SignetError(.malformedMessage, "\(context) holds the unexpected tag \(child.tag)") }
            guard items[child.tag] == nil else { throw SignetError(.malformedMessage, "\(context) holds the tag \(child.tag) twice") }
            items[child.tag] = child.value
        }
    }

    /// The value of a required tag, with a length in `lengths`.
    func required(_ tag: UAFTag, _ name: String, lengths: ClosedRange<Int>) throws -> [UInt8] {
        guard let value = items[tag] else { throw SignetError(.malformedMessage, "\(context) lacks \(name) (\(tag))") }
        guard lengths.contains(value.count) else {
            throw SignetError(
                .malformedMessage,
                "\(context): \(name) has \(value.count) bytes, not \(lengths.lowerBound == lengths.upperBound ? "\(lengths.lowerBound)" : "\(lengths.lowerBound)–\(lengths.upperBound)")"
            )
        }
        return value
    }

    /// The composite item of a required tag.
    func composite(_ tag: UAFTag, _ name: String) throws -> UAFTLV {
        guard let value = items[tag] else { throw SignetError(.malformedMessage, "\(context) lacks \(name) (\(tag))") }
        return UAFTLV(tag, value)
    }

    func has(_ tag: UAFTag) -> Bool { items[tag] != nil }
}

/// A UAF extension carried in TLV (`TAG_EXTENSION` with `TAG_EXTENSION_ID` and `TAG_EXTENSION_DATA`).
///
/// A critical extension the reader does not understand must make it refuse the assertion.
public struct UAFExtension: Sendable, Equatable {
    public var id: String
    public var data: [UInt8]
    public var critical: Bool

    public init(id: String, data: [UInt8], critical: Bool) {
        self.id = id
        self.data = data
        self.critical = critical
    }

    init(_ item: UAFTLV) throws {
        let fields = try UAFFields(item, allowed: [.extensionID, .extensionData], context: "an extension")
        let id = try fields.required(.extensionID, "its id", lengths: 1...32)
        guard let text = String(validating: id, as: UTF8.self) else { throw SignetError(.malformedMessage, "an extension id is not UTF-8") }
        self.init(
            id: text, data: try fields.required(.extensionData, "its data", lengths: 0...UAFTLV.maximumLength), critical: item.tag == .extension)
    }

    public var tlv: UAFTLV {
        UAFTLV(critical ? .extension : .extensionNonCritical, children: [UAFTLV(.extensionID, Array(id.utf8)), UAFTLV(.extensionData, data)])
    }
}
