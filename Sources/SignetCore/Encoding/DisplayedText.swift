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

    /// An identifier (a username): a name with no format character but the two joiners, so
    /// that two identifiers cannot look alike through invisible characters (U+200B, U+2060,
    /// U+FEFF, tags).
    public static func isIdentifier(_ text: String) -> Bool {
        isName(text)
            && text.unicodeScalars.allSatisfy { $0.properties.generalCategory != .format || $0.value == 0x200C || $0.value == 0x200D }
    }

    /// U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069.
    private static let bidirectionalControls: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
}
