"""Client TLS through nats-py: certificates are generated per test with `cryptography`."""
import asyncio
import datetime
import ipaddress
import ssl

import nats
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conftest import Server


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _issue(subject, issuer, issuer_key, public_key, *, ca=False, sans=(), usage=None):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    if usage:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write(path, cert, key):
    path.with_suffix(".pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    if key is not None:
        path.with_name(path.name + "-key.pem").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )


@pytest.fixture
def certs(tmp_path):
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _issue(_name("Python Test CA"), _name("Python Test CA"), ca_key, ca_key.public_key(), ca=True)
    _write(tmp_path / "ca", ca, None)
    server_key = ec.generate_private_key(ec.SECP256R1())
    sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = _issue(_name("localhost"), ca.subject, ca_key, server_key.public_key(), sans=sans,
                    usage=ExtendedKeyUsageOID.SERVER_AUTH)
    _write(tmp_path / "server", server, server_key)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _issue(_name("py-client"), ca.subject, ca_key, client_key.public_key(),
                    usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    _write(tmp_path / "client", client, client_key)
    return {name: str(tmp_path / f"{name}.pem") for name in
            ["ca", "server", "server-key", "client", "client-key"]}


def _context(certs, client=False):
    ctx = ssl.create_default_context(cafile=certs["ca"])
    if client:
        ctx.load_cert_chain(certs["client"], certs["client-key"])
    return ctx


async def _roundtrip(nc):
    sub = await nc.subscribe("tls.py")
    await nc.publish("tls.py", b"over tls")
    msg = await sub.next_msg(timeout=5)
    assert msg.data == b"over tls"


def test_tls_pub_sub(certs):
    server = Server("--tls", "--tlscert", certs["server"], "--tlskey", certs["server-key"])
    try:
        async def main():
            nc = await nats.connect(server.url, tls=_context(certs), tls_hostname="localhost")
            await _roundtrip(nc)
            await nc.close()
        run(main())
    finally:
        server.stop()


def test_tls_verify_requires_a_client_certificate(certs):
    server = Server("--tlsverify", "--tlscert", certs["server"], "--tlskey", certs["server-key"],
                    "--tlscacert", certs["ca"])
    try:
        async def main():
            with pytest.raises(Exception):
                await nats.connect(server.url, tls=_context(certs), tls_hostname="localhost",
                                   allow_reconnect=False, max_reconnect_attempts=0,
                                   connect_timeout=5)
            nc = await nats.connect(server.url, tls=_context(certs, client=True),
                                    tls_hostname="localhost")
            await _roundtrip(nc)
            await nc.close()
        run(main())
    finally:
        server.stop()
