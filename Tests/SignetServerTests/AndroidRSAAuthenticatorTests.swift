// Android authenticators with RSA keys: ALG_KEY_RSA_2048_RAW as the FIDO Registry defines it
// (the exponent in as many bytes as it takes) and RSASSA-PSS SHA-256 signatures.
import CryptoExtras
import Foundation
import SignetCore
import SignetServer
import SignetTesting
import Testing

@Suite("Android RSA authenticators: a raw RSA-2048 key with e = 65537 in three bytes registers and logs in")
struct AndroidRSAAuthenticatorTests {
    let base = AuthenticatorTests()

    @Test("ALG_KEY_RSA_2048_RAW of 259 bytes and RSASSA-PSS SHA-256 raw: registered, and a device login with it; a bad signature refused")
    func pssRegistrationAndLogin() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            let signer = try TestRSAUAFSigner(key: _RSA.Signing.PrivateKey(keySize: .bits2048))
            #expect(signer.publicKey.count == 259, "modulus 256 bytes, e = 65537 in 3")
            #expect(Array(signer.publicKey.suffix(3)) == [0x01, 0x00, 0x01])
            let authenticator = TestAuthenticator(aaid: "F1D0#0002", signer: signer)
            let registered = try await phone.register(authenticator, token: token)
            #expect(registered.status == 201, "\(registered.body)")
            let alice = try #require(try await provider.store.user(username: "alice"))
            let stored = try #require(try await provider.store.authenticator(userID: alice.id, keyID: authenticator.keyIDText))
            #expect(stored.signatureAlgorithm == UAFSignatureAlgorithm.rsaSSAPSSSHA256Raw.rawValue)
            #expect(stored.publicKeyFormat == UAFPublicKeyFormat.rsa2048Raw.rawValue)
            #expect(Data(base64URLEncoded: stored.publicKey).map(Array.init) == signer.publicKey)

            let login = base.login
            let finished = try await phone.login(login, authenticator)
            #expect(finished.status == 200, "\(finished.body)")
            let tokens = try await provider.redeem(
                try #require(finished.json["authorization_code"] as? String), login, clientAuth: [("client_id", "wallet")],
                browser: phone.device.browser)
            #expect(tokens.status == 200, "\(tokens.body)")
            let idToken = try #require(IDTokenClaims.unverified(try tokens.decode(TokenResponse.self).idToken ?? ""))
            #expect(idToken.amr == ["swk", "fpt", "mfa"])

            // One bit of the PSS signature flipped.
            let start = try TestUAFPhone.request(fromStart: try await phone.startLogin(login))
            let refused = try await phone.finish(try base.flip(try await phone.assertion(start, authenticator), fromEnd: 1))
            #expect(refused.status == 401)
            #expect(refused.json["error"] as? String == "invalid_signature", "\(refused.body)")
            #expect(refused.json["uaf_status_code"] as? Int == 1498)
            // The refusal spent only that request: the next login works.
            #expect(try await phone.login(login, authenticator).status == 200)
        }
    }

    @Test("a 260-byte key (a 4-byte exponent) still registers, and PKCS#1 v1.5 SHA-256 raw signatures with a 259-byte key log in")
    func otherLengthsAndPKCS1() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let primitives = try key.publicKey.getKeyPrimitives()
            let fourBytes = try TestRSAUAFSigner(key: key, publicKey: Array(primitives.modulus) + [0x00, 0x01, 0x00, 0x01])
            let wide = TestAuthenticator(aaid: "F1D0#0003", signer: fourBytes)
            #expect(try await phone.register(wide, token: token).status == 201)
            #expect(try await phone.login(base.login, wide).status == 200)

            let pkcs1 = TestAuthenticator(
                aaid: "F1D0#0004", signer: try TestRSAUAFSigner(key: _RSA.Signing.PrivateKey(keySize: .bits2048), algorithm: .rsaEMSAPKCS1SHA256Raw))
            #expect(pkcs1.signer.publicKey.count == 259)
            let registered = try await phone.register(pkcs1, token: token)
            #expect(registered.status == 201, "\(registered.body)")
            #expect(try await phone.login(base.login, pkcs1).status == 200)
        }
    }

    @Test(
        "malformed raw RSA keys are refused: nothing after the modulus, an absurd exponent, an even exponent, exponent 1 or 0, a modulus under 2048 bits"
    )
    func malformedKeys() async throws {
        try await withTestProvider(tls: true) { provider in
            let (phone, token) = try await base.setUp(provider)
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let modulus = Array(try key.publicKey.getKeyPrimitives().modulus)
            let malformed: [(String, [UInt8])] = [
                ("the modulus alone", modulus),
                ("a 9-byte exponent field", modulus + [0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x01]),
                ("a 5-byte exponent", modulus + [0x01, 0x00, 0x00, 0x00, 0x01]),
                ("an even exponent", modulus + [0x01, 0x00, 0x00]),
                ("exponent 1", modulus + [0x01]),
                ("exponent 1 with leading zeros", modulus + [0x00, 0x00, 0x01]),
                ("exponent 0", modulus + [0x00, 0x00, 0x00]),
                ("a modulus under 2048 bits", [0x00] + Array(modulus.dropFirst()) + [0x01, 0x00, 0x01]),
                ("far too long", modulus + [UInt8](repeating: 0x01, count: 300)),
            ]
            for (label, bytes) in malformed {
                let authenticator = TestAuthenticator(aaid: "F1D0#0002", signer: try TestRSAUAFSigner(key: key, publicKey: bytes))
                let refused = try await phone.register(authenticator, token: token)
                #expect(refused.status == 403, "\(label): \(refused.body)")
                #expect(refused.json["error"] as? String == "unacceptable_authenticator", "\(label)")
                #expect((refused.json["error_description"] as? String)?.hasPrefix("TAG_PUB_KEY is not a usable") == true, "\(label): \(refused.body)")
                #expect(refused.json["uaf_status_code"] as? Int == 1498, "\(label)")
            }
            #expect(try await provider.store.authenticators(instanceID: phone.device.instanceID).isEmpty)
            // The same key, declared as the registry says, registers.
            #expect(
                try await phone.register(TestAuthenticator(aaid: "F1D0#0002", signer: try TestRSAUAFSigner(key: key)), token: token).status == 201)
        }
    }
}
