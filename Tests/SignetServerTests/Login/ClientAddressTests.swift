import SignetServer
import Testing

@Suite("Client addresses for throttling")
struct ClientAddressTests {
    @Test("IPv4 counts alone; IPv6 by its /64, however it is written; IPv4-mapped IPv6 as its IPv4")
    func groups() {
        #expect(ClientAddress.throttleGroup("192.0.2.7") == "192.0.2.7")
        #expect(ClientAddress.throttleGroup("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(ClientAddress.throttleGroup("2001:0db8:0001:0002:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(ClientAddress.throttleGroup("2001:db8:1:3::1") != ClientAddress.throttleGroup("2001:db8:1:2::1"))
        #expect(ClientAddress.throttleGroup("::ffff:192.0.2.7") == "192.0.2.7")
        #expect(ClientAddress.throttleGroup("unknown") == "unknown")
    }
}
