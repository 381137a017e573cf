"""Java key and trust stores for the tests, made the way users make them: `keytool` for JKS and Java's PKCS12,
`cryptography` (as openssl would) for a PKCS12 key store; certificates from `connector.dev.certificates`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, load_pem_private_key, pkcs12

from connector.dev.certificates import Issued


def keytool(*arguments: str) -> None:
    subprocess.run(["keytool", *arguments], check=True, capture_output=True, timeout=60)


def trust_store(path: Path, certificates: dict[str, str], password: str, store_type: str = "JKS") -> Path:
    """A trust store of `certificates` (alias to PEM), made with keytool."""
    for alias, pem in certificates.items():
        pem_file = path.with_name(f"{alias}.pem")
        pem_file.write_text(pem)
        keytool("-importcert", "-noprompt", "-alias", alias, "-file", str(pem_file), "-keystore", str(path),
                "-storetype", store_type, "-storepass", password)
    return path


def pkcs12_key_store(path: Path, issued: Issued, password: str) -> Path:
    """A PKCS12 key store of `issued`'s key and certificate (as `openssl pkcs12 -export` makes one)."""
    key = load_pem_private_key(issued.key.encode(), None)
    certificate = x509.load_pem_x509_certificate(issued.certificate.encode())
    data = pkcs12.serialize_key_and_certificates(
        b"client", key, certificate, None, BestAvailableEncryption(password.encode())  # type: ignore[arg-type]
    )
    path.write_bytes(data)
    return path


def jks_key_store(path: Path, issued: Issued, password: str, key_password: str) -> Path:
    """A JKS key store whose key has a password of its own, converted by keytool from a PKCS12 one."""
    source = pkcs12_key_store(path.with_suffix(".source.p12"), issued, password)
    keytool("-importkeystore", "-noprompt", "-srckeystore", str(source), "-srcstoretype", "PKCS12",
            "-srcstorepass", password, "-destkeystore", str(path), "-deststoretype", "JKS",
            "-deststorepass", password, "-destkeypass", key_password)
    source.unlink()
    return path
