// The device API: instance ids, activation, initial certificates, self-service, certificate status.
extension DeviceInstances: EndpointGroup {
    var endpoints: [Endpoint] {
        [Endpoint(.post, "/devices/instances", body: .form(required: false), dialect: .oauth) { try await create($0, context: $1) }]
    }
}

extension DeviceActivation: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.post, "/devices/activation", body: .mediaTypes(EnrolmentBody.mediaTypes), dialect: .oauth) {
                try await activate($0, context: $1)
            },
            Endpoint(.post, "/devices/reactivation", body: .mediaTypes(EnrolmentBody.mediaTypes), dialect: .oauth) {
                try await reactivate($0, context: $1)
            },
        ]
    }
}

extension InitialCertificates: EndpointGroup {
    var endpoints: [Endpoint] { [Endpoint(.post, "/devices/initial-certificate", body: .json, dialect: .oauth) { try await issue($0, context: $1) }] }
}

extension DeviceSelfService: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/devices/status", dialect: .oauth) { try await status($0, context: $1) },
            Endpoint(.post, "/devices/deactivation", body: .form(required: false), dialect: .oauth) { try await deactivate($0, context: $1) },
            Endpoint(.get, "/devices", dialect: .oauth) { try await list($0, context: $1) },
            Endpoint(.patch, "/devices/:instance_id", dialect: .oauth) { try await rename($0, context: $1) },
            Endpoint(.delete, "/devices/:instance_id", dialect: .oauth) { try await remove($0, context: $1) },
            Endpoint(.post, "/devices/:instance_id/lock", body: .form(required: false), dialect: .oauth) { try await lock($0, context: $1) },
        ]
    }
}

extension CertificateStatus: EndpointGroup {
    var endpoints: [Endpoint] {
        [
            Endpoint(.get, "/devices/certificate-status", dialect: .oauth) { try await status($0, context: $1) },
            Endpoint(.get, "/devices/ca.pem", dialect: .oauth) { try await caCertificates($0, context: $1) },
        ]
    }
}
