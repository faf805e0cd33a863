// The JSON bodies of the device endpoints (docs/devices.md), as the SDK sends and reads them.
import Foundation

/// `POST /devices/activation` and `/devices/reactivation`: `{csr, name, platform}`.
struct ActivationRequestBody: Encodable {
    var csr: String
    var name: String?
    var platform: DevicePlatform?
}

/// `POST /devices/initial-certificate`.
struct InitialCertificateRequestBody: Encodable {
    var clientID: String
    var csr: String
    var attestation: String?
    var platform: DevicePlatform?
    var instanceID: String?

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id", csr, attestation, platform
        case instanceID = "instance_id"
    }
}

/// `201 {certificate_chain, device}` of activation and reactivation.
struct ActivationAnswer: Decodable {
    var certificateChain: CertificateChain
    var device: RegisteredDevice

    enum CodingKeys: String, CodingKey {
        case certificateChain = "certificate_chain", device
    }
}

/// `201 {instance_id, certificate_chain, expires_at, attestation}` of the initial certificate.
struct InitialCertificateAnswer: Decodable {
    var instanceID: String
    var certificateChain: CertificateChain
    var expiresAt: Date?
    var attestation: String?

    enum CodingKeys: String, CodingKey {
        case instanceID = "instance_id", certificateChain = "certificate_chain", expiresAt = "expires_at", attestation
    }
}

/// `{device}`.
struct DeviceAnswerBody: Decodable {
    var device: RegisteredDevice
}

/// `{devices: [device]}`.
struct DeviceListAnswer: Decodable {
    var devices: [RegisteredDevice]
}

/// `PATCH /devices/{instance_id}`: `{name}`.
struct RenameRequestBody: Encodable {
    var name: String
}

/// A `certificate_chain` member: an array of PEM certificates, leaf first, or one string of
/// concatenated PEM blocks (both are read; the contract does not say which).
struct CertificateChain: Decodable {
    var certificates: [String]

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let list = try? container.decode([String].self) {
            certificates = list
        } else {
            certificates = Self.split(try container.decode(String.self))
        }
        guard !certificates.isEmpty else { throw DecodingError.dataCorruptedError(in: container, debugDescription: "an empty certificate chain") }
    }

    /// The `-----BEGIN CERTIFICATE-----` … `-----END CERTIFICATE-----` blocks of `text`, in order.
    static func split(_ text: String) -> [String] {
        let end = "-----END CERTIFICATE-----"
        var blocks: [String] = []
        var rest = Substring(text)
        while let begin = rest.range(of: "-----BEGIN CERTIFICATE-----"), let close = rest.range(of: end, range: begin.upperBound..<rest.endIndex) {
            blocks.append(String(rest[begin.lowerBound..<close.upperBound]))
            rest = rest[close.upperBound...]
        }
        return blocks
    }
}
