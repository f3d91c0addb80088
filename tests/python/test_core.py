"""Core NATS through the official Python client (nats-py) against our server."""
import asyncio

import nats
from nats.errors import NoRespondersError


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_core_pub_sub_roundtrip(server):
    async def main():
        nc = await nats.connect(server.url)
        sub = await nc.subscribe("greet.*")
        await nc.publish("greet.joe", b"hello")
        msg = await sub.next_msg(timeout=5)
        assert msg.subject == "greet.joe" and msg.data == b"hello"
        await nc.close()
    run(main())


def test_core_request_reply(server):
    async def main():
        nc = await nats.connect(server.url)

        async def handler(msg):
            await msg.respond(msg.data.upper())

        await nc.subscribe("svc.upper", cb=handler)
        reply = await nc.request("svc.upper", b"abc", timeout=5)
        assert reply.data == b"ABC"
        await nc.close()
    run(main())


def test_core_no_responders(server):
    async def main():
        nc = await nats.connect(server.url)
        try:
            await nc.request("nobody.home", b"", timeout=5)
            raise AssertionError("expected NoRespondersError")
        except NoRespondersError:
            pass
        await nc.close()
    run(main())


def test_core_headers_pass_through(server):
    async def main():
        nc = await nats.connect(server.url)
        sub = await nc.subscribe("h")
        await nc.publish("h", b"body", headers={"X-Key": "v1", "Another": "two words"})
        msg = await sub.next_msg(timeout=5)
        assert msg.headers == {"X-Key": "v1", "Another": "two words"}
        assert msg.data == b"body"
        await nc.close()
    run(main())


def test_core_queue_group_delivers_once(server):
    async def main():
        nc = await nats.connect(server.url)
        got = {"a": 0, "b": 0}
        done = asyncio.Event()

        def counter(name):
            async def cb(_msg):
                got[name] += 1
                if got["a"] + got["b"] == 200:
                    done.set()
            return cb

        await nc.subscribe("work", queue="q", cb=counter("a"))
        await nc.subscribe("work", queue="q", cb=counter("b"))
        await nc.flush()
        for _ in range(200):
            await nc.publish("work", b"x")
        await nc.flush()
        await asyncio.wait_for(done.wait(), 10)
        assert got["a"] + got["b"] == 200
        assert got["a"] > 0 and got["b"] > 0
        await nc.close()
    run(main())


def test_core_auto_unsubscribe(server):
    async def main():
        nc = await nats.connect(server.url)
        sub = await nc.subscribe("auto", max_msgs=2)
        for i in range(5):
            await nc.publish("auto", str(i).encode())
        await nc.flush()
        first = await sub.next_msg(timeout=5)
        second = await sub.next_msg(timeout=5)
        assert (first.data, second.data) == (b"0", b"1")
        await nc.close()
    run(main())
