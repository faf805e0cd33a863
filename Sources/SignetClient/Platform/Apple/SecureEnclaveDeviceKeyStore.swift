// The device key in the Secure Enclave, its certificate beside it in the Keychain (Apple platforms only).
//
// Not compiled on Linux CI: keep it small and change it on a Mac.
#if canImport(CryptoKit) && canImport(Security)
    import CryptoKit
    import Foundation
    import Security
    import X509

    /// Keeps the installation's device key in the Secure Enclave, so it cannot be copied off the
    /// device, and its certificate chain in the Keychain.
    ///
    /// The key is a Keychain key (`SecKeyCreateRandomKey` with the Secure Enclave token), not a
    /// CryptoKit `SecureEnclave.P256` blob as ``SecureEnclaveDPoPKeyStore`` keeps: only a key the
    /// Keychain holds can be paired with its certificate into the `SecIdentity` that `URLSession`
    /// presents for mutual TLS (``URLSessionMutualTLSTransportFactory``). swift-certificates signs
    /// CSRs with it through `Certificate.PrivateKey(SecKey)`.
    ///
    /// Every item is accessible after first unlock (a background request can present the
    /// certificate), this device only, in the data-protection Keychain. A key made by ``makeKey()``
    /// is stored under a fresh tag at once (the Secure Enclave makes it in place); ``save(_:certificateChain:)``
    /// records which tag is current with the chain, then deletes the other keys, so a refused
    /// reactivation leaves the old key current. Without a Secure Enclave (the Simulator, some Macs)
    /// a software Keychain key is made instead, but only when `allowSoftwareFallback` says so.
    public actor SecureEnclaveDeviceKeyStore: DeviceKeyStore {
        public let service: String
        public let account: String
        public let allowSoftwareFallback: Bool
        private var cached: DeviceCredential?

        public init(service: String = "dev.signet.client", account: String = "device-key", allowSoftwareFallback: Bool = false) {
            self.service = service
            self.account = account
            self.allowSoftwareFallback = allowSoftwareFallback
        }

        /// The label of every key and certificate item this store makes.
        private var label: String { "\(service).\(account)" }

        /// What the generic-password item holds: the current key's tag and the chain.
        private struct Record: Codable {
            var version = 1
            var tag: Data
            var certificateChain: [String]

            enum CodingKeys: String, CodingKey {
                case version, tag
                case certificateChain = "certificate_chain"
            }
        }

        public func makeKey() throws -> any DeviceKey {
            var error: Unmanaged<CFError>?
            let tag = Data("\(label).\(UUID().uuidString)".utf8)
            var privateAttributes: [String: Any] = [
                kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: tag, kSecAttrLabel as String: label,
            ]
            var attributes: [String: Any] = [
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
                kSecUseDataProtectionKeychain as String: true,
            ]
            if SecureEnclave.isAvailable {
                guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .privateKeyUsage, &error)
                else {
                    throw Self.failure("no access control for the key", error?.takeRetainedValue())
                }
                attributes[kSecAttrTokenID as String] = kSecAttrTokenIDSecureEnclave
                privateAttributes[kSecAttrAccessControl as String] = access
            } else if allowSoftwareFallback {
                privateAttributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            } else {
                throw Self.failure("this device has no Secure Enclave and software keys are not allowed", nil)
            }
            attributes[kSecPrivateKeyAttrs as String] = privateAttributes
            guard let key = SecKeyCreateRandomKey(attributes as CFDictionary, &error) else {
                throw Self.failure("the Secure Enclave could not make a key", error?.takeRetainedValue())
            }
            return try KeychainDeviceKey(secKey: key, tag: tag)
        }

        public func load() throws -> DeviceCredential? {
            if let cached { return cached }
            guard let record = try readRecord() else { return nil }
            var query = keyQuery
            query[kSecAttrApplicationTag as String] = record.tag
            query[kSecReturnRef as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            guard status == errSecSuccess, let item, CFGetTypeID(item) == SecKeyGetTypeID() else {
                throw Self.keychainError(status, "the device key is gone")
            }
            let credential = try DeviceCredential(
                key: try KeychainDeviceKey(secKey: item as! SecKey, tag: record.tag), certificateChain: record.certificateChain)
            cached = credential
            return credential
        }

        public func save(_ key: any DeviceKey, certificateChain: [String]) throws {
            guard let key = key as? KeychainDeviceKey else {
                throw SignetClientError(.misuse, isRetryable: false, reason: "the key was not made by this store")
            }
            let credential = try DeviceCredential(key: key, certificateChain: certificateChain)
            try addCertificate(credential)
            try writeRecord(Record(tag: key.tag, certificateChain: certificateChain))
            cached = credential
            // The record names the new key: the old key and certificate, and keys made but never kept, go.
            try deleteItems(keepingTag: key.tag, keepingCertificate: try Self.der(credential.certificate))
        }

        public func delete() throws {
            cached = nil
            try remove(recordQuery)
            try deleteItems(keepingTag: nil, keepingCertificate: nil)
        }

        /// The Keychain identity (key and certificate) for `credential`, with its intermediates, for `URLSession`.
        func identity(for credential: DeviceCredential) throws -> KeychainDeviceIdentity {
            let leaf = try Self.der(credential.certificate)
            let query: [String: Any] = [
                kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecUseDataProtectionKeychain as String: true,
            ]
            var items: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &items)
            guard status == errSecSuccess, let identities = items as? [SecIdentity] else {
                throw Self.keychainError(status, "no identity for the device certificate")
            }
            for identity in identities {
                var certificate: SecCertificate?
                if SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess, let certificate,
                    SecCertificateCopyData(certificate) as Data == leaf
                {
                    let intermediates = try credential.certificateChain.dropFirst().map { pem -> SecCertificate in
                        guard let made = SecCertificateCreateWithData(nil, try Self.der(Certificate(pemEncoded: pem)) as CFData) else {
                            throw Self.failure("an intermediate certificate does not parse", nil)
                        }
                        return made
                    }
                    return KeychainDeviceIdentity(identity: identity, intermediates: intermediates)
                }
            }
            throw Self.failure("the Keychain pairs no key with the device certificate", nil)
        }

        // MARK: Keychain items

        private var recordQuery: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        private var keyQuery: [String: Any] {
            [
                kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate, kSecAttrLabel as String: label,
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        private var certificateQuery: [String: Any] {
            [kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: label, kSecUseDataProtectionKeychain as String: true]
        }

        private func readRecord() throws -> Record? {
            var query = recordQuery
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = item as? Data else { throw Self.keychainError(status, "the record cannot be read") }
            do { return try JSONDecoder().decode(Record.self, from: data) } catch { throw Self.failure("the record does not parse", error) }
        }

        private func writeRecord(_ record: Record) throws {
            let data: Data
            do { data = try JSONEncoder().encode(record) } catch { throw Self.failure("the record cannot be encoded", error) }
            var status = SecItemUpdate(recordQuery as CFDictionary, [kSecValueData as String: data] as CFDictionary)
            if status == errSecItemNotFound {
                var item = recordQuery
                item[kSecValueData as String] = data
                item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                status = SecItemAdd(item as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw Self.keychainError(status, "the record cannot be written") }
        }

        private func addCertificate(_ credential: DeviceCredential) throws {
            guard let certificate = SecCertificateCreateWithData(nil, try Self.der(credential.certificate) as CFData) else {
                throw Self.failure("the device certificate does not parse", nil)
            }
            var item = certificateQuery
            item[kSecValueRef as String] = certificate
            item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess || status == errSecDuplicateItem else {
                throw Self.keychainError(status, "the device certificate cannot be kept")
            }
        }

        /// Deletes this store's keys and certificates but the ones to keep (all when both are `nil`).
        private func deleteItems(keepingTag: Data?, keepingCertificate: Data?) throws {
            for attributes in try list(keyQuery) {
                guard let tag = attributes[kSecAttrApplicationTag as String] as? Data, tag != keepingTag else { continue }
                var target = keyQuery
                target[kSecAttrApplicationTag as String] = tag
                try remove(target)
            }
            for attributes in try list(certificateQuery) {
                guard let reference = attributes[kSecValueRef as String], CFGetTypeID(reference as CFTypeRef) == SecCertificateGetTypeID() else {
                    continue
                }
                let certificate = reference as! SecCertificate
                if SecCertificateCopyData(certificate) as Data == keepingCertificate { continue }
                var target = certificateQuery
                target[kSecValueRef as String] = certificate
                try remove(target)
            }
        }

        /// The attributes (and references) of every item `query` matches.
        private func list(_ query: [String: Any]) throws -> [[String: Any]] {
            var search = query
            search[kSecReturnAttributes as String] = true
            search[kSecReturnRef as String] = true
            search[kSecMatchLimit as String] = kSecMatchLimitAll
            var items: CFTypeRef?
            let status = SecItemCopyMatching(search as CFDictionary, &items)
            if status == errSecItemNotFound { return [] }
            guard status == errSecSuccess, let found = items as? [[String: Any]] else {
                throw Self.keychainError(status, "old items cannot be listed")
            }
            return found
        }

        private func remove(_ query: [String: Any]) throws {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.keychainError(status, "an old item cannot be deleted") }
        }

        private static func der(_ certificate: Certificate) throws -> Data {
            do { return Data(try certificate.serializeAsPEM().derBytes) } catch { throw failure("the device certificate cannot be encoded", error) }
        }

        private static func failure(_ reason: String, _ underlying: (any Error)?) -> SignetClientError {
            SignetClientError(.deviceKeyUnavailable, isRetryable: false, reason: reason, underlying: underlying)
        }

        private static func keychainError(_ status: OSStatus, _ reason: String) -> SignetClientError {
            failure("\(reason) (Keychain status \(status))", NSError(domain: NSOSStatusErrorDomain, code: Int(status)))
        }
    }

    /// A device key the Keychain holds (in the Secure Enclave, or in software as a fallback).
    struct KeychainDeviceKey: DeviceKey, @unchecked Sendable {
        // SecKey is an immutable, thread-safe Core Foundation object.
        let secKey: SecKey
        let tag: Data
        let privateKey: Certificate.PrivateKey

        init(secKey: SecKey, tag: Data) throws {
            self.secKey = secKey
            self.tag = tag
            do { self.privateKey = try Certificate.PrivateKey(secKey) } catch {
                throw SignetClientError(
                    .deviceKeyUnavailable, isRetryable: false, reason: "swift-certificates cannot use the Keychain key", underlying: error)
            }
        }
    }

    /// A Keychain identity and the intermediates to send with it.
    struct KeychainDeviceIdentity: @unchecked Sendable {
        // SecIdentity and SecCertificate are immutable, thread-safe Core Foundation objects.
        let identity: SecIdentity
        let intermediates: [SecCertificate]
    }
#endif
