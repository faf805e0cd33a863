// Tokens in the Keychain, on Apple platforms.
#if canImport(Security)
    import Foundation
    import Security

    /// Keeps tokens in the Keychain as one generic-password item, readable only while the
    /// device is unlocked and never synced or restored to another device.
    public struct KeychainAuthStateStorage: AuthStateStorage {
        public let service: String
        public let account: String

        public init(service: String = "dev.signet.client", account: String = "tokens") {
            self.service = service
            self.account = account
        }

        private var query: [String: Any] {
            [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        }

        public func load() throws -> AuthState.StoredTokens? {
            var query = self.query
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = item as? Data else {
                throw SignetClientError(.storage, isRetryable: true, reason: "Keychain status \(status)")
            }
            return try JSONDecoder().decode(AuthState.StoredTokens.self, from: data)
        }

        public func save(_ tokens: AuthState.StoredTokens) throws {
            try clear()
            var item = query
            item[kSecValueData as String] = try JSONEncoder().encode(tokens)
            item[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw SignetClientError(.storage, isRetryable: true, reason: "Keychain status \(status)") }
        }

        public func clear() throws {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw SignetClientError(.storage, isRetryable: true, reason: "Keychain status \(status)")
            }
        }
    }
#endif
