"""nats-py over WebSocket (its `ws://` transport needs aiohttp): pub/sub and request/reply
with a plain TCP client on the other side, and the websocket block's token override."""
import asyncio

import nats
import pytest
from nats.errors import NoServersError

from conftest import Server

# nats-py's websocket transport passes aiohttp a deprecated timeout argument, and leaves its
# aiohttp session open when a connect fails; neither is about the server.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.fixture
def ws_server(tmp_path):
    def start(block=""):
        conf = tmp_path / "ws.conf"
        conf.write_text(
            'websocket {\n  listen: "127.0.0.1:-1"\n  no_tls: true\n  %s\n}\n' % block
        )
        return Server("-c", str(conf))

    servers = []

    def make(block=""):
        s = start(block)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


async def _subscribed(sub, via, subject):
    """Publishes probes until `sub` sees one: a flush proves nothing about another connection."""
    for _ in range(100):
        await via.publish(subject, b"probe")
        await via.flush()
        try:
            await sub.next_msg(timeout=0.1)
            return
        except nats.errors.TimeoutError:
            pass
    raise AssertionError("subscription never ready")


def test_websocket_pubsub_and_request_with_tcp_client(ws_server):
    server = ws_server()

    async def main():
        ws = await nats.connect(f"ws://127.0.0.1:{server.ws_port}")
        tcp = await nats.connect(server.url)
        sub = await ws.subscribe("py.ws")
        await _subscribed(sub, tcp, "py.ws")
        big = bytes(range(256)) * 400
        await tcp.publish("py.ws", big)
        msg = await sub.next_msg(timeout=5)
        assert msg.data == big

        sub2 = await tcp.subscribe("py.tcp")
        await _subscribed(sub2, ws, "py.tcp")
        await ws.publish("py.tcp", b"from websocket")
        assert (await sub2.next_msg(timeout=5)).data == b"from websocket"

        async def echo(msg):
            await msg.respond(msg.data.upper())

        await ws.subscribe("py.svc", cb=echo)
        await ws.flush()
        for _ in range(100):
            try:
                reply = await tcp.request("py.svc", b"hello", timeout=1)
                break
            except nats.errors.NoRespondersError:
                await asyncio.sleep(0.02)
        assert reply.data == b"HELLO"
        await ws.close()
        await tcp.close()

    run(main())


def test_websocket_token_override(ws_server):
    server = ws_server('authorization { token: "s3cret" }')

    async def main():
        # TCP clients are not affected by the websocket block's authorization.
        tcp = await nats.connect(server.url)
        await tcp.close()
        ok = await nats.connect(f"ws://127.0.0.1:{server.ws_port}", token="s3cret")
        await ok.close()
        with pytest.raises((NoServersError, nats.errors.Error)):
            await nats.connect(
                f"ws://127.0.0.1:{server.ws_port}", token="wrong", allow_reconnect=False,
                max_reconnect_attempts=0, connect_timeout=2,
            )

    run(main())
