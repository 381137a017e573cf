"""A certificate authority of its own for TLS tests: it issues the development broker's certificate and client
certificates, as a company CA does for a production cluster. Keys are EC P-256; certificates last two days.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=2)


@dataclass(frozen=True)
class Issued:
    """A certificate (PEM) and its unencrypted PKCS#8 key (PEM)."""

    certificate: str
    key: str


class Authority:
    """A self-signed CA; `certificate` is what clients and the broker trust."""

    def __init__(self, name: str = "kafka-sql test CA") -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        ca = x509.BasicConstraints(ca=True, path_length=0)
        usage = x509.KeyUsage(False, False, False, False, False, True, True, False, False)  # cert and CRL signing
        self._certificate = (
            self._builder(self._name, self._key.public_key())
            .add_extension(ca, critical=True)
            .add_extension(usage, critical=True)
            .sign(self._key, hashes.SHA256())
        )

    @property
    def certificate(self) -> str:
        return self._certificate.public_bytes(serialization.Encoding.PEM).decode()

    def issue(self, name: str, hosts: tuple[str, ...] = ()) -> Issued:
        """A certificate for `name`; with `hosts` (names or IP addresses) a server certificate valid for them,
        else a client certificate."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        purpose = ExtendedKeyUsageOID.SERVER_AUTH if hosts else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            self._builder(subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([purpose]), critical=False)
        )
        if hosts:
            builder = builder.add_extension(x509.SubjectAlternativeName([_general_name(h) for h in hosts]), False)
        certificate = builder.sign(self._key, hashes.SHA256())
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return Issued(certificate.public_bytes(serialization.Encoding.PEM).decode(), key_pem.decode())

    def _builder(self, subject: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        now = datetime.datetime.now(datetime.timezone.utc)
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._name)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
        )


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)
