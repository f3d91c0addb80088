//! Fuzzes the CONNECT document decoder as a connection drives it: a first CONNECT onto Go's
//! defaults, then the same bytes as a repeated CONNECT merged into the options in force.
//! Checks that nothing panics, that merging an empty object changes nothing, and that a
//! repeated identical CONNECT leaves the options as they were.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nats_proto::ConnectOptions;

fuzz_target!(|data: &[u8]| {
    let Ok(first) = ConnectOptions::parse(data) else {
        return;
    };
    assert_eq!(first.clone().merge(b"{}").ok(), Some(first.clone()));
    let again = first.clone().merge(data);
    assert_eq!(again.ok(), Some(first));
});
