// Which authenticators a client's users may register.
import SignetCore
import SignetStore

extension AuthenticatorCatalog {
    /// The AAIDs a client's users may register: its own list (``ClientRecord/authenticatorAAIDs``), or all.
    static func accepted(by client: ClientRecord) -> [String] {
        client.authenticatorAAIDs?.map { $0.uppercased() } ?? all.map(\.aaid)
    }
}
