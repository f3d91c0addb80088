#!/usr/bin/env python3
"""Re-records tests/data/go_check.jsonl from the Go server.

For every case the configuration is written to a fresh directory as `t.conf` and checked
with `nats-server -t -c <dir>/t.conf`; the exit status and everything printed are stored with
the file path replaced by {FILE} and its directory by {DIR}. Cases where Natrium refuses on
purpose (an option it does not implement yet) keep a `natrium` field with Natrium's own
output, produced by `cargo run -p natrium-conf --example conf_check`.

Usage: record_go.py [path/to/nats-server]   (default /opt/go-nats/bin/nats-server)
"""
import json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GO = sys.argv[1] if len(sys.argv) > 1 else '/opt/go-nats/bin/nats-server'
CHECK = os.path.join(HERE, '../../../../target/debug/examples/conf_check')
DATA = os.path.join(HERE, 'go_check.jsonl')

def run(cmd, conf):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 't.conf')
        with open(path, 'w', encoding='utf-8', newline='') as f:
            f.write(conf)
        env = {'PATH': os.environ.get('PATH', '')}
        r = subprocess.run(cmd + [path], capture_output=True, env=env, cwd=d)
        out = (r.stdout + r.stderr).decode('utf-8', errors='replace')
        return (0 if r.returncode == 0 else 1), out.replace(path, '{FILE}').replace(d, '{DIR}')

cases = [json.loads(line)['conf'] for line in open(DATA, encoding='utf-8')]
with open(DATA, 'w', encoding='utf-8') as out:
    for conf in cases:
        status, go = run([GO, '-t', '-c'], conf)
        rec = {'conf': conf, 'status': status, 'go': go}
        nstatus, nat = run([CHECK], conf)
        if (nstatus, nat) != (status, go) and 'is not supported yet' in nat:
            rec['natrium'] = nat
            rec['natrium_status'] = nstatus
        out.write(json.dumps(rec, ensure_ascii=False) + '\n')
print(f'recorded {len(cases)} cases')
