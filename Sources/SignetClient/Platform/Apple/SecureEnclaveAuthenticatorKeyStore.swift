// FIDO UAF authenticator keys in the Secure Enclave, guarded by Touch ID, Face ID or the passcode (Apple platforms only).
//
// Not compiled on Linux CI: keep it small and change it on a Mac.
#if canImport(CryptoKit) && canImport(LocalAuthentication) && canImport(Security)
    import CryptoKit
    import Foundation
    import LocalAuthentication
    import Security
    import SignetCore

    /// Keeps each authenticator's UAuth key in the Secure Enclave and the list of authenticators
    /// (AAID, KeyID, the key's opaque Secure Enclave blob, counter, PIN salt) in the Keychain.
    ///
    /// The access control follows the authenticator's verification and the registration options
    /// (seed 002): biometric keys need `.biometryCurrentSet` (`invalidateOnNewOsBiometrics`: a new
    /// fingerprint or face invalidates them) or `.biometryAny`, with `.devicePasscode` as an
    /// alternative when `allowDevicePasscodeAsFallback`; passcode keys `.devicePasscode`; PIN keys
    /// only `.privateKeyUsage` (the PIN is proved to the provider). Every key is
    /// `WhenPasscodeSetThisDeviceOnly`, so removing the device lock wipes it: the next use throws
    /// ``SignetClientError/Code/authenticatorInvalidated``.
    public actor SecureEnclaveAuthenticatorKeyStore: AuthenticatorKeyStore {
        public let service: String
        public let account: String
        private var cached: [StoredAuthenticator]?

        public init(service: String = "dev.signet.client", account: String = "authenticators") {
            self.service = service
            self.account = account
        }

        public func makeKey(aaid: String, der: Bool, options: AuthenticatorOptions) throws -> (signer: any UAFSigner, keyMaterial: Data) {
            guard SecureEnclave.isAvailable else { throw Self.failure("this device has no Secure Enclave", nil) }
            let verification = AuthenticatorCatalog.kind(aaid)?.verification ?? .pin
            var flags: SecAccessControlCreateFlags = [.privateKeyUsage]
            switch verification {
            case .pin: break
            case .passcode: flags.insert(.devicePasscode)
            case .fingerprint, .face, .biometric:
                flags.insert(options.invalidateOnNewOsBiometrics ? .biometryCurrentSet : .biometryAny)
                if options.allowDevicePasscodeAsFallback { flags.formUnion([.or, .devicePasscode]) }
            }
            var error: Unmanaged<CFError>?
            guard let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, flags, &error) else {
                throw Self.failure("no access control for the key", error?.takeRetainedValue())
            }
            do {
                let key = try SecureEnclave.P256.Signing.PrivateKey(accessControl: access)
                return (SecureEnclaveUAFSigner(key: key, der: der), key.dataRepresentation)
            } catch {
                throw Self.failure("the Secure Enclave could not make a key", error)
            }
        }

        public func signer(for authenticator: StoredAuthenticator, reason: String) throws -> any UAFSigner {
            let context = LAContext()
            context.localizedReason = reason
            do {
                let key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: authenticator.keyMaterial, authenticationContext: context)
                return SecureEnclaveUAFSigner(key: key, der: authenticator.der)
            } catch {
                // The OS wiped or invalidated it (lock screen removed, biometrics changed).
                throw SignetClientError(
                    .authenticatorInvalidated, isRetryable: false, reason: "the Secure Enclave no longer has this key", underlying: error)
            }
        }

        public func all() throws -> [StoredAuthenticator] {
            if let cached { return cached }
            var query = baseQuery
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return [] }
            guard status == errSecSuccess, let data = item as? Data else { throw Self.failure("the Keychain could not be read (\(status))", nil) }
            do {
                let list = try JSONDecoder().decode([StoredAuthenticator].self, from: data)
                cached = list
                return list
            } catch {
                throw Self.failure("the authenticators item is not readable", error)
            }
        }

        public func save(_ authenticator: StoredAuthenticator) throws {
            var list = try all().filter { $0.keyID != authenticator.keyID }
            list.append(authenticator)
            try write(list)
        }

        public func delete(keyID: String) throws {
            try write(try all().filter { $0.keyID != keyID })
        }

        public func advanceCounter(keyID: String) throws -> StoredAuthenticator {
            guard var authenticator = try all().first(where: { $0.keyID == keyID }) else { throw StoredAuthenticator.notKept(keyID) }
            authenticator.signCounter &+= 1
            try save(authenticator)
            return authenticator
        }

        private var baseQuery: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        private func write(_ list: [StoredAuthenticator]) throws {
            let data: Data
            do { data = try JSONEncoder().encode(list) } catch { throw Self.failure("the authenticators could not be encoded", error) }
            let update = [kSecValueData as String: data]
            var status = SecItemUpdate(baseQuery as CFDictionary, update as CFDictionary)
            if status == errSecItemNotFound {
                var add = baseQuery
                add[kSecValueData as String] = data
                add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                status = SecItemAdd(add as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw Self.failure("the Keychain could not be written (\(status))", nil) }
            cached = list
        }

        private static func failure(_ reason: String, _ underlying: (any Error)?) -> SignetClientError {
            SignetClientError(.deviceKeyUnavailable, isRetryable: false, reason: reason, underlying: underlying)
        }
    }

    /// A UAuth key in the Secure Enclave; signing prompts for the user as its access control says.
    struct SecureEnclaveUAFSigner: UAFSigner {
        let key: SecureEnclave.P256.Signing.PrivateKey
        let der: Bool

        var publicKey: [UInt8] { der ? Array(key.publicKey.derRepresentation) : Array(key.publicKey.x963Representation) }
        var signatureAlgorithm: UAFSignatureAlgorithm { der ? .secp256r1ECDSASHA256DER : .secp256r1ECDSASHA256Raw }
        var publicKeyFormat: UAFPublicKeyFormat { der ? .eccX962DER : .eccX962Raw }

        func sign(_ data: [UInt8]) throws -> [UInt8] {
            do {
                let signature = try key.signature(for: Data(data))
                return der ? Array(signature.derRepresentation) : Array(signature.rawRepresentation)
            } catch let error as LAError {
                // The user cancelled or failed the prompt: the key is fine, try again.
                throw SignetClientError(
                    .cancelled, isRetryable: true, reason: "the user was not verified (\(error.code.rawValue))", underlying: error)
            } catch {
                throw SignetClientError(
                    .authenticatorInvalidated, isRetryable: false, reason: "the Secure Enclave refused to sign", underlying: error)
            }
        }
    }
#endif
