// A device key store that lives as long as the process: for tests.

/// Keeps software device keys and their chains in memory (tests and short-lived tools).
public actor MemoryDeviceKeyStore: DeviceKeyStore {
    private var current: DeviceCredential?
    /// How many keys ``makeKey()`` has made.
    public private(set) var keysMade = 0

    /// An empty store, or one holding `credential`.
    public init(credential: DeviceCredential? = nil) { self.current = credential }

    public func makeKey() -> any DeviceKey {
        keysMade += 1
        return SoftwareDeviceKey()
    }

    public func load() -> DeviceCredential? { current }

    public func save(_ key: any DeviceKey, certificateChain: [String]) throws {
        current = try DeviceCredential(key: key, certificateChain: certificateChain)
    }

    public func delete() { current = nil }
}
