//! Help texts for `-h` and `--help_tls`, in Natrium's words, listing the same flags as Go's
//! `nats-server` so that scripts and muscle memory carry over.

/// Printed to standard output by `-h`/`--help`, and after a flag syntax error. Written with
/// `println!` it has Go's layout: an empty first line and an empty last line.
pub const HELP_TEXT: &str = "
Usage: nats-server [options]

Server Options:
    -a, --addr, --net <host>         Interface to accept clients on (default: 0.0.0.0)
    -p, --port <port>                Client port; -1 picks a free one (default: 4222)
    -n, --name
        --server_name <server_name>  Name of this server (default: the server ID)
    -P, --pid <file>                 Write the process ID to this file
    -m, --http_port <port>           Serve HTTP monitoring on this port
    -ms,--https_port <port>          Serve HTTPS monitoring on this port
    -c, --config <file>              Read options from this configuration file
    -t                               Check the configuration file, then exit
    -sl,--signal <signal>[=<pid>]    Signal a running server: ldm, stop, quit, term, reopen, reload
                                     <pid> is a process ID (e.g. 1) or a PID file path
                                     (e.g. /var/run/nats-server.pid)
        --client_advertise <string>  Client URL to advertise instead of the listen address
        --ports_file_dir <dir>       Write <executable_name>_<pid>.ports into this directory

Logging Options:
    -l, --log <file>                 Log to this file instead of standard error
    -T, --logtime                    Prefix log lines with a timestamp (default: true)
        --logtime_utc                Use UTC for log timestamps (default: false)
    -s, --syslog                     Log to syslog (or the Windows event log)
    -r, --remote_syslog <addr>       Log to a remote syslog server (udp://localhost:514)
    -D, --debug                      Log debug messages
    -V, --trace                      Log the raw protocol
    -VV                              Log the raw protocol, system account included
    -DV                              Debug messages and protocol trace
    -DVV                             Debug messages and protocol trace, system account included
        --log_size_limit <limit>     Rotate the log file at this size (default: no rotation)
        --max_traced_msg_len <len>   Longest message body shown in traces (default: unlimited)

JetStream Options:
    -js, --jetstream                 Enable JetStream
    -sd, --store_dir <dir>           JetStream storage directory

Authorization Options:
        --user <user>                Require this user name from clients
        --pass <password>            Require this password from clients
        --auth <token>               Require this token from clients

TLS Options:
        --tls                        Enable TLS without verifying clients (default: false)
        --tlscert <file>             Server certificate
        --tlskey <file>              Server certificate's private key
        --tlsverify                  Enable TLS and verify client certificates
        --tlscacert <file>           CA certificate for verifying clients

Cluster Options:
        --routes <rurl-1, rurl-2>    Routes to other servers to connect to
        --cluster <cluster-url>      Cluster URL to accept routes on
        --cluster_name <string>      Cluster name (default: generated)
        --no_advertise <bool>        Do not tell clients about other cluster members
        --cluster_advertise <string> Cluster URL to advertise to other servers
        --connect_retries <number>   Connect attempts for implicit routes
        --cluster_listen <url>       Cluster URL to accept routes on

Profiling Options:
        --profile <port>             Serve profiling over HTTP on this port

Common Options:
    -h, --help                       Show this help
    -v, --version                    Show the version
        --help_tls                   Explain TLS configuration
";

/// Printed to standard output by `--help_tls`, with `println!` (Go's layout: an empty first
/// line, no empty last line).
pub const TLS_HELP_TEXT: &str = "
TLS is configured in a tls block of the configuration file, for example:

    tls {
        cert_file:      \"./certs/server-cert.pem\"
        key_file:       \"./certs/server-key.pem\"
        ca_file:        \"./certs/ca.pem\"
        verify:         true
        verify_and_map: true

        cipher_suites: [
            \"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\",
            \"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\"
        ]
        curve_preferences: [
            \"CurveP256\",
            \"CurveP384\",
            \"CurveP521\"
        ]
    }

cert_file and key_file hold the server's certificate and key; ca_file the authorities used to
check client certificates when verify is true; verify_and_map also maps the certificate's
subject to a user. timeout bounds the handshake (seconds, default 2); handshake_first makes
clients start TLS before the server's INFO (true, or auto/a duration to fall back to INFO first
for clients that wait); min_version is 1.2 or 1.3; pinned_certs lists hex SHA-256 digests
of accepted client public keys. allow_non_tls, at the top level, also accepts plain clients.
The flags --tls, --tlscert, --tlskey, --tlscacert and --tlsverify replace the block's files.

cipher_suites restricts TLS 1.2 suites (TLS 1.3 suites are always on) and curve_preferences
orders key exchange groups. Names are Go's; Natrium implements these cipher suites:
    TLS_AES_128_GCM_SHA256
    TLS_AES_256_GCM_SHA384
    TLS_CHACHA20_POLY1305_SHA256
    TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
    TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
    TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
    TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384
    TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256

and these curve preferences:
    X25519
    CurveP256
    CurveP384

Other names Go knows (CBC suites, CurveP521, the ML-KEM hybrids) are refused at startup.";
