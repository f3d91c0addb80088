"""Starts our nats-server on a random loopback port for each test that asks for it."""
import os
import re
import subprocess
import threading

import pytest

BIN = os.environ.get("NATRIUM_BIN", os.path.join(os.path.dirname(__file__), "../../target/debug/nats-server"))


class Server:
    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [BIN, "-a", "127.0.0.1", "-p", "-1", *args],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        )
        self.lines = []
        self.port = None
        self.ws_port = None
        ready = threading.Event()

        def follow():
            for line in self.proc.stderr:
                self.lines.append(line)
                m = re.search(r"Listening for client connections on .*:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                m = re.search(r"Listening for websocket clients on .*:(\d+)", line)
                if m:
                    self.ws_port = int(m.group(1))
                if "Server is ready" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=follow, daemon=True).start()
        if not ready.wait(20) or self.port is None:
            self.proc.kill()
            raise RuntimeError("server did not start: " + "".join(self.lines))

    @property
    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.stop()
