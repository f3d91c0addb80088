"""Accounts as the official Python client (nats-py) sees them: configured accounts with an
import between them, and operator mode with .creds files (nkeys signs the nonce)."""
import asyncio
import os
import signal
import subprocess

import nats
import pytest

from conftest import BIN, Server

CONF = """
accounts {
  A { users = [ {user: a, password: a} ], exports = [ {service: "svc.>"}, {stream: "s.>"} ] }
  B { users = [ {user: b, password: b} ], imports = [
    {service: {account: A, subject: "svc.x"}, to: "local.x"}
    {stream: {account: A, subject: "s.>"}, prefix: "p"}
  ] }
}
"""

SCENARIO = os.path.join(os.path.dirname(BIN), "examples", "jwt_scenario")


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.fixture
def accounts_server(tmp_path):
    conf = tmp_path / "accounts.conf"
    conf.write_text(CONF)
    s = Server("-c", str(conf))
    yield s
    s.stop()


async def request_across(url, a_opts, b_opts):
    a = await nats.connect(url, **a_opts)
    b = await nats.connect(url, **b_opts)

    async def serve(msg):
        await msg.respond(b"from A")

    await a.subscribe("svc.>", cb=serve)
    got = []

    async def collect(msg):
        got.append(msg.subject)

    await b.subscribe("p.s.>", cb=collect)
    await a.flush()
    await b.flush()
    reply = await b.request("local.x", b"hi", timeout=5)
    await a.publish("s.tick", b"t")
    await a.flush()
    for _ in range(100):
        if got:
            break
        await asyncio.sleep(0.02)
    await a.close()
    await b.close()
    return reply.data, got


def test_accounts_import_request_and_stream(accounts_server):
    data, got = run(request_across(
        accounts_server.url, {"user": "a", "password": "a"}, {"user": "b", "password": "b"}))
    assert data == b"from A"
    assert got == ["p.s.tick"]


def test_accounts_isolation(accounts_server):
    async def main():
        a = await nats.connect(accounts_server.url, user="a", password="a")
        b = await nats.connect(accounts_server.url, user="b", password="b")
        sub = await b.subscribe("iso")
        await b.flush()
        await a.publish("iso", b"x")
        await a.flush()
        with pytest.raises(nats.errors.TimeoutError):
            await sub.next_msg(timeout=0.3)
        await a.close()
        await b.close()

    run(main())


@pytest.mark.skipif(not os.path.exists(SCENARIO), reason="jwt_scenario example not built")
def test_operator_mode_with_creds(tmp_path):
    pytest.importorskip("nkeys")
    subprocess.run([SCENARIO, str(tmp_path)], check=True)
    s = Server("-c", str(tmp_path / "server.conf"))
    try:
        data, got = run(request_across(
            s.url,
            {"user_credentials": str(tmp_path / "a.creds")},
            {"user_credentials": str(tmp_path / "b.creds")},
        ))
        assert data == b"from A"
        assert got == ["p.s.tick"]
    finally:
        s.stop()


def test_accounts_reload_adds_imports_for_connected_clients(tmp_path):
    """SIGHUP with a new import: connected nats-py clients keep their connections and
    subscriptions, and the import works for them at once."""
    conf = tmp_path / "reload.conf"
    conf.write_text(CONF.split("  B {")[0] + "  B { users = [ {user: b, password: b} ] }\n}\n")
    s = Server("-c", str(conf))

    async def main():
        a = await nats.connect(s.url, user="a", password="a")
        b = await nats.connect(s.url, user="b", password="b")
        sub = await b.subscribe("p.s.>")
        await b.flush()
        conf.write_text(CONF)
        s.proc.send_signal(signal.SIGHUP)
        for _ in range(500):
            if any("Reloaded server configuration" in line for line in s.lines):
                break
            await asyncio.sleep(0.01)
        await a.publish("s.tick", b"t")
        await a.flush()
        msg = await sub.next_msg(timeout=5)
        assert msg.subject == "p.s.tick"
        assert a.stats["reconnects"] == 0 and b.stats["reconnects"] == 0
        await a.close()
        await b.close()

    try:
        run(main())
    finally:
        s.stop()
