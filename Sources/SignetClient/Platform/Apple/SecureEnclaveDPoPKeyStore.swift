// The DPoP key in the Secure Enclave, its wrapped form in the Keychain (Apple platforms only).
//
// Not compiled on Linux CI: keep it small and change it on a Mac.
#if canImport(CryptoKit) && canImport(Security)
    import CryptoKit
    import Foundation
    import Security
    import SignetCore

    /// Keeps the installation's DPoP key in the Secure Enclave, so it cannot be copied off the device.
    ///
    /// The key's `dataRepresentation` (an opaque blob only this device's Secure Enclave can use) is
    /// kept in the Keychain as a generic password, accessible after first unlock (so a background
    /// refresh can sign) and never synced or restored to another device. On a device without a
    /// Secure Enclave (the Simulator, some Macs) a software P-256 key is kept in the same item
    /// instead, but only when `allowSoftwareFallback` says so; otherwise ``key()`` throws
    /// ``SignetClientError/Code/keyUnavailable``.
    public actor SecureEnclaveDPoPKeyStore: DPoPKeyStore {
        public let service: String
        public let account: String
        public let allowSoftwareFallback: Bool
        private var current: (any DPoPSigningKey)?

        /// The item's first byte says what follows.
        private enum Kind: UInt8 { case secureEnclave = 1, software = 2 }

        public init(service: String = "dev.signet.client", account: String = "dpop-key", allowSoftwareFallback: Bool = false) {
            self.service = service
            self.account = account
            self.allowSoftwareFallback = allowSoftwareFallback
        }

        public func key() throws -> any DPoPSigningKey {
            if let current { return current }
            let key = try load() ?? make()
            current = key
            return key
        }

        /// Deletes the key; the next ``key()`` makes a new one (tokens bound to the old one stop working).
        public func deleteKey() throws {
            current = nil
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.keychainError(status) }
        }

        private var query: [String: Any] {
            [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
        }

        private func load() throws -> (any DPoPSigningKey)? {
            var query = self.query
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = item as? Data, let first = data.first, let kind = Kind(rawValue: first) else {
                throw Self.keychainError(status)
            }
            let body = Data(data.dropFirst())
            do {
                switch kind {
                case .secureEnclave: return try SecureEnclaveDPoPKey(dataRepresentation: body)
                case .software: return SoftwareDPoPKey(privateKey: try P256.Signing.PrivateKey(rawRepresentation: body))
                }
            } catch {
                throw SignetClientError(.keyUnavailable, isRetryable: false, reason: "the stored DPoP key cannot be used", underlying: error)
            }
        }

        private func make() throws -> any DPoPSigningKey {
            let kind: Kind
            let body: Data
            let key: any DPoPSigningKey
            if SecureEnclave.isAvailable {
                var error: Unmanaged<CFError>?
                guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .privateKeyUsage, &error)
                else {
                    throw SignetClientError(.keyUnavailable, isRetryable: false, underlying: error?.takeRetainedValue())
                }
                do {
                    let made = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
                    key = try SecureEnclaveDPoPKey(dataRepresentation: made.dataRepresentation)
                    kind = .secureEnclave
                    body = made.dataRepresentation
                } catch {
                    throw SignetClientError(.keyUnavailable, isRetryable: false, reason: "the Secure Enclave could not make a key", underlying: error)
                }
            } else if allowSoftwareFallback {
                let made = SoftwareDPoPKey()
                key = made
                kind = .software
                body = made.privateKey.rawRepresentation
            } else {
                throw SignetClientError(
                    .keyUnavailable, isRetryable: false, reason: "this device has no Secure Enclave and software keys are not allowed")
            }
            var item = query
            item[kSecValueData as String] = Data([kind.rawValue]) + body
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw Self.keychainError(status) }
            return key
        }

        private static func keychainError(_ status: OSStatus) -> SignetClientError {
            SignetClientError(
                .keyUnavailable, isRetryable: false, reason: "Keychain status \(status)",
                underlying: NSError(domain: NSOSStatusErrorDomain, code: Int(status)))
        }
    }

    /// A Secure Enclave P-256 key, held as its wrapped `dataRepresentation` and opened per signature.
    struct SecureEnclaveDPoPKey: DPoPSigningKey {
        let dataRepresentation: Data
        let publicJWK: [String: String]

        init(dataRepresentation: Data) throws {
            let key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation)
            let raw = key.publicKey.rawRepresentation  // x ‖ y
            self.dataRepresentation = dataRepresentation
            self.publicJWK = [
                "kty": "EC", "crv": "P-256", "x": Data(raw.prefix(32)).base64URLEncodedString(), "y": Data(raw.suffix(32)).base64URLEncodedString(),
            ]
        }

        var algorithm: String { "ES256" }

        func signature(for signingInput: Data) async throws -> Data {
            let key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation)
            return try key.signature(for: signingInput).rawRepresentation
        }
    }
#endif
