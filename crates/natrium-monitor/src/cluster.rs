//! The documents of subsystems Natrium does not run yet, exactly as Go answers without them:
//! `/routez`, `/gatewayz`, `/leafz` (empty) and `/jsz` (JetStream disabled).

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

#[derive(Serialize)]
pub struct ApiStats {
    level: u64,
    total: u64,
    errors: u64,
}

#[derive(Serialize)]
pub struct JsConfig {
    max_memory: u64,
    max_storage: u64,
}

#[derive(Serialize)]
pub struct Jsz {
    memory: u64,
    storage: u64,
    reserved_memory: u64,
    reserved_storage: u64,
    accounts: u64,
    ha_assets: u64,
    api: ApiStats,
    server_id: String,
    now: String,
    disabled: bool,
    config: JsConfig,
    streams: u64,
    consumers: u64,
    messages: u64,
    bytes: u64,
    total: u64,
}

pub fn jsz(server: &Server) -> Jsz {
    Jsz {
        memory: 0,
        storage: 0,
        reserved_memory: 0,
        reserved_storage: 0,
        accounts: 0,
        ha_assets: 0,
        api: ApiStats {
            level: 0,
            total: 0,
            errors: 0,
        },
        server_id: server.id().to_owned(),
        now: rfc3339(chrono::Utc::now()),
        disabled: true,
        config: JsConfig {
            max_memory: 0,
            max_storage: 0,
        },
        streams: 0,
        consumers: 0,
        messages: 0,
        bytes: 0,
        total: 0,
    }
}
