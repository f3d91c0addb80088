"""Permission violations as the official Python client (nats-py) sees them."""
import asyncio

import nats
import pytest

from conftest import Server

CONF = """
authorization { users = [
  {user: svc, password: s, permissions: { subscribe: "svc.>", allow_responses: true }}
  {user: app, password: a, permissions: { publish: ["ok.>", "svc.>"], subscribe: ["ok.>", "_INBOX.>"] }}
]}
"""


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.fixture
def perm_server(tmp_path):
    conf = tmp_path / "perms.conf"
    conf.write_text(CONF)
    s = Server("-c", str(conf))
    yield s
    s.stop()


def test_permissions_violation_reaches_error_callback(perm_server):
    async def main():
        errors = []
        seen = asyncio.Event()

        async def on_error(e):
            errors.append(str(e))
            seen.set()

        nc = await nats.connect(perm_server.url, user="app", password="a", error_cb=on_error)
        await nc.publish("secret", b"x")
        await nc.flush()
        await asyncio.wait_for(seen.wait(), 5)
        # nats-py lower-cases the server's -ERR text.
        assert errors == ['nats: permissions violation for publish to "secret"'], errors
        # The connection stays open and usable.
        sub = await nc.subscribe("ok.>")
        await nc.publish("ok.1", b"fine")
        msg = await sub.next_msg(timeout=5)
        assert msg.data == b"fine"
        assert nc.is_connected
        await nc.close()
    run(main())


def test_permissions_allow_responses_request_reply(perm_server):
    async def main():
        svc = await nats.connect(perm_server.url, user="svc", password="s")

        async def handler(msg):
            await msg.respond(b"re:" + msg.data)

        await svc.subscribe("svc.echo", cb=handler)
        await svc.flush()
        app = await nats.connect(perm_server.url, user="app", password="a")
        for i in range(3):
            reply = await app.request("svc.echo", str(i).encode(), timeout=5)
            assert reply.data == b"re:" + str(i).encode()
        await app.close()
        await svc.close()
    run(main())
