// Text people give that others are shown: names in listings, pages and the audit trail.
import Foundation

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
    /// symbols and the plain space only, no space at either end (in the spirit of PRECIS's
    /// IdentifierClass, RFC 8264), and nothing Unicode marks default-ignorable or that shows
    /// blank (the Hangul, Braille, musical and Khitan fillers), so that two identifiers cannot
    /// look alike through invisible characters. The joiners only where PRECIS allows them
    /// (RFC 5892 Appendix A.1, A.2): after a virama, and a ZWNJ between Arabic-script letters.
    public static func isIdentifier(_ text: String) -> Bool {
        guard text == text.trimmingCharacters(in: .whitespaces) else { return false }
        let scalars = Array(text.unicodeScalars)
        return scalars.indices.allSatisfy { index in
            let scalar = scalars[index]
            if scalar.value == 0x200C || scalar.value == 0x200D {
                guard index > 0, index + 1 < scalars.count else { return false }
                if scalars[index - 1].properties.canonicalCombiningClass == .virama { return true }
                return scalar.value == 0x200C && isArabicLetter(scalars[index - 1]) && isArabicLetter(scalars[index + 1])
            }
            guard !scalar.properties.isDefaultIgnorableCodePoint, !blankLetters.contains(scalar.value) else { return false }
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

    /// Letters and symbols that show as blank though Unicode does not mark them ignorable:
    /// U+2800 (Braille blank), U+1D159 (a blank musical notehead), U+16FE4 (the Khitan filler),
    /// and the Hangul fillers (also default-ignorable, listed for clarity).
    private static let blankLetters: Set<UInt32> = [0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0, 0x1D159, 0x16FE4]

    /// A letter of the Arabic script's blocks.
    private static func isArabicLetter(_ scalar: Unicode.Scalar) -> Bool {
        let arabic: [ClosedRange<UInt32>] = [0x0600...0x06FF, 0x0750...0x077F, 0x08A0...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF]
        return arabic.contains { $0.contains(scalar.value) } && scalar.properties.isAlphabetic
    }

    /// U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069.
    private static let bidirectionalControls: Set<UInt32> = [
        0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069,
    ]
}
