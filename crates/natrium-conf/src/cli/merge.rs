//! Command-line flags over file options, as Go's `MergeOptions` does: every flag given on the
//! command line wins, whatever its value; then Go's startup baseline fills in defaults.

use super::Flags;
use crate::options::ServerOptions;

fn over<T: Clone>(slot: &mut T, flag: Option<&T>) {
    if let Some(v) = flag {
        slot.clone_from(v);
    }
}

/// Go's handling of the `--tls*` flags: `--tls=false` drops TLS (Go visits flags in name
/// order, so it wins over the others); any other of them rebuilds the files and `verify` from
/// the flags alone. Missing certificate or key is reported by [`ServerOptions::validate`].
fn merge_tls(o: &mut ServerOptions, flags: &Flags) {
    if flags.tls == Some(false) {
        o.tls = None;
        return;
    }
    if !flags.has_tls_flags() {
        return;
    }
    let text = |f: &Option<String>| f.clone().unwrap_or_default();
    o.tls = Some(crate::options::tls_from_flags(
        o.tls.as_ref(),
        &text(&flags.tls_cert),
        &text(&flags.tls_key),
        &text(&flags.tls_ca_cert),
        flags.tls_verify.unwrap_or(false),
    ));
}

/// `file` with every option given in `flags` replaced, then
/// [`ServerOptions::apply_baseline`] applied (so `-p 0` means 4222, as in Go).
pub fn merge(file: ServerOptions, flags: &Flags) -> ServerOptions {
    let mut o = file;
    if flags.config_file.is_some() {
        o.config_file.clone_from(&flags.config_file);
    }
    over(&mut o.host, flags.host.as_ref());
    over(&mut o.port, flags.port.as_ref());
    over(&mut o.server_name, flags.server_name.as_ref());
    over(&mut o.pidfile, flags.pidfile.as_ref());
    over(&mut o.http_port, flags.http_port.as_ref());
    over(&mut o.https_port, flags.https_port.as_ref());
    over(&mut o.client_advertise, flags.client_advertise.as_ref());
    over(&mut o.ports_file_dir, flags.ports_file_dir.as_ref());
    over(&mut o.username, flags.username.as_ref());
    over(&mut o.password, flags.password.as_ref());
    over(&mut o.authorization, flags.authorization.as_ref());
    over(&mut o.logfile, flags.logfile.as_ref());
    over(&mut o.logtime, flags.logtime.as_ref());
    over(&mut o.logtime_utc, flags.logtime_utc.as_ref());
    over(&mut o.syslog, flags.syslog.as_ref());
    over(&mut o.remote_syslog, flags.remote_syslog.as_ref());
    over(&mut o.debug, flags.debug.as_ref());
    over(&mut o.trace, flags.trace.as_ref());
    over(&mut o.trace_verbose, flags.trace_verbose.as_ref());
    over(&mut o.log_size_limit, flags.log_size_limit.as_ref());
    over(&mut o.max_traced_msg_len, flags.max_traced_msg_len.as_ref());
    over(&mut o.store_dir, flags.store_dir.as_ref());
    over(&mut o.jetstream.enabled, flags.jetstream.as_ref());
    merge_tls(&mut o, flags);
    o.apply_baseline();
    o
}
