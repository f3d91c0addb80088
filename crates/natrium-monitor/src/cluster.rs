//! The documents of subsystems Natrium does not run yet, exactly as Go answers without them:
//! `/routez`, `/gatewayz`, `/leafz` (empty).

use natrium_core::Server;
use serde::Serialize;

use crate::varz::rfc3339;

#[derive(Serialize)]
pub struct Routez {
    server_id: String,
    server_name: String,
    now: String,
    num_routes: u64,
    routes: [(); 0],
}

pub fn routez(server: &Server) -> Routez {
    Routez {
        server_id: server.id().to_owned(),
        server_name: server.name().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        num_routes: 0,
        routes: [],
    }
}

/// Serialises as `{}` (no gateways configured).
#[derive(Serialize)]
pub struct NoGateways {}

#[derive(Serialize)]
pub struct Gatewayz {
    server_id: String,
    now: String,
    outbound_gateways: NoGateways,
    inbound_gateways: NoGateways,
}

pub fn gatewayz(server: &Server) -> Gatewayz {
    Gatewayz {
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        outbound_gateways: NoGateways {},
        inbound_gateways: NoGateways {},
    }
}

#[derive(Serialize)]
pub struct Leafz {
    server_id: String,
    now: String,
    leafnodes: u64,
    leafs: [(); 0],
}

pub fn leafz(server: &Server) -> Leafz {
    Leafz {
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        leafnodes: 0,
        leafs: [],
    }
}
