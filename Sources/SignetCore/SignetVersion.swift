// The version of this build of Signet.

/// The version `signet --version` prints and the provider reports.
public enum SignetVersion {
    /// Semantic version of the release this source tree becomes (see CHANGELOG.md).
    public static let current = "0.9.0"
}
