//! Writes a fresh operator/account/user scenario (`natrium_tests::jwt::Scenario`) to a
//! directory, to poke a server by hand: `server.conf`, `a.creds`, `b.creds`.

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let s = natrium_tests::jwt::Scenario::new();
    let write = |name: &str, text: String| {
        std::fs::write(format!("{dir}/{name}"), text).expect("write");
    };
    write("server.conf", s.config());
    write("a.creds", s.creds_a());
    write("b.creds", s.creds_b());
}
