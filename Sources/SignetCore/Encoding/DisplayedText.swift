// Text people give that others are shown: names in listings, pages and the audit trail.

/// What a name or an identifier given by a person may hold, so that what a terminal or a page
/// shows is what is stored: no character that ends a line, moves the cursor, colours the screen,
/// reorders the text around it or is invisible where an identifier must be told apart.
public enum DisplayedText {
    /// A name (a person's, a device's): no control or line-separating characters (Unicode's Cc,
    /// Zl, Zp) and no bidirectional controls. Other format characters stay: the joiners Persian,
    /// Indic scripts and emoji need (U+200C, U+200D), the soft hyphen.
    public static func isName(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: return false
            default: return !bidirectionalControls.contains(scalar.value)
            }
        }
    }

    /// An identifier (a username, an email address): letters, marks, digits, punctuation,
    /// symbols and the plain space only (in the spirit of PRECIS's IdentifierClass, RFC 8264),
    /// without the marks and letters that show nothing (variation selectors, the combining
    /// grapheme joiner, the Hangul and Braille fillers), so that two identifiers cannot look alike
    /// through invisible characters. Format, private-use and unassigned characters are refused,
    /// the joiners too.
    public static func isIdentifier(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            guard !invisibleLetters.contains(scalar.value), !(0xFE00...0xFE0F).contains(scalar.value), !(0xE0100...0xE01EF).contains(scalar.value)
            else { return false }
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark, .spacingMark, .enclosingMark,
                .decimalNumber, .letterNumber, .otherNumber, .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
                .initialPunctuation, .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
                return true
            case .spaceSeparator: return scalar.value == 0x20
            default: return false
            }
        }
    }

    /// Letters and marks that show as blank: U+034F, U+115F, U+1160, U+2800, U+3164, U+FFA0.
    private static let invisibleLetters: Set<UInt32> = [0x034F, 0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0]

    /// U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069.
    private static let bidirectionalControls: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
}
