"""Java key and trust stores (`ssl.truststore.*`, `ssl.keystore.*`, `ssl.key.password`, as Flink users configure
Kafka's Java client) turned into the PEM texts librdkafka reads (`ssl.ca.pem`, `ssl.certificate.pem`, `ssl.key.pem`).

Decision: the PEM texts travel in the client configuration, not in files. Every executor of a cluster gets them
with the settings (a store path exists on the driver's machine only), a crash leaves no key file behind, and the
private key is never written to disk unencrypted. The configuration is masked like every secret (`secrets`).

Stores are read the way Java reads them: PKCS#12 and PEM with `cryptography`; JKS and JCEKS (Kafka's default type)
through the Java runtime's `keytool`, which Spark's JVM brings. keytool converts the store into PKCS#12 in a
private temporary directory (0700) that is removed right after; passwords reach it through its environment, never
its command line.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from connector.errors import KafkaSqlError

_TRUST = ("ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type", "ssl.truststore.certificates")
_KEY = ("ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type", "ssl.keystore.key",
        "ssl.keystore.certificate.chain")
_JAVA_MAGIC = (b"\xfe\xed\xfe\xed", b"\xce\xce\xce\xce")  # JKS, JCEKS
KEYTOOL_TIMEOUT_SECONDS = 60.0


class StoreError(KafkaSqlError, ValueError):
    """A store that cannot be read; `key` is the property (without 'properties.') to point the user at."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def pem_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """`properties` with Java's store properties replaced by librdkafka's PEM ones; StoreError if a store does not
    exist, does not open with its password, or holds no usable certificate or key. librdkafka's own `ssl.*`
    properties pass unchanged."""
    has_keystore = any(key in properties for key in _KEY)
    consumed = set(_TRUST) | set(_KEY) | ({"ssl.key.password"} if has_keystore else set())
    translated = {key: value for key, value in properties.items() if key not in consumed}
    trusted = _trusted(properties)
    if trusted:
        translated["ssl.ca.pem"] = trusted
    if has_keystore:
        translated["ssl.certificate.pem"], translated["ssl.key.pem"] = _identity(properties)
    return translated


def _trusted(properties: Mapping[str, str]) -> str | None:
    """The CA certificates of the trust store, as PEM text."""
    if "ssl.truststore.certificates" in properties:
        text = properties["ssl.truststore.certificates"].encode()
        certificates = _pem_certificates(text, "ssl.truststore.certificates")
    elif properties.get("ssl.truststore.location"):
        store_type = properties.get("ssl.truststore.type", "JKS")
        location = properties["ssl.truststore.location"]
        if store_type.upper() == "PEM":
            certificates = _pem_certificates(_read(location, "ssl.truststore.location"), "ssl.truststore.location")
        else:
            _, certificates = _store("ssl.truststore", location, properties.get("ssl.truststore.password"), None)
    else:
        return None
    if not certificates:
        raise StoreError("ssl.truststore.location", "the trust store holds no certificate")
    return _pem(certificates)


def _identity(properties: Mapping[str, str]) -> tuple[str, str]:
    """(certificate chain, unencrypted PKCS#8 key) of the key store, as PEM texts."""
    key_password = properties.get("ssl.key.password")
    key: PrivateKeyTypes | None
    if "ssl.keystore.key" in properties or "ssl.keystore.certificate.chain" in properties:
        chain_text = properties.get("ssl.keystore.certificate.chain", "").encode()
        chain = _pem_certificates(chain_text, "ssl.keystore.certificate.chain")
        key = _pem_key(properties.get("ssl.keystore.key", "").encode(), key_password, "ssl.keystore.key")
    else:
        location = properties.get("ssl.keystore.location")
        if not location:
            raise StoreError("ssl.keystore.password", "'properties.ssl.keystore.*' is set but not its location")
        if properties.get("ssl.keystore.type", "JKS").upper() == "PEM":
            text = _read(location, "ssl.keystore.location")
            chain = _pem_certificates(text, "ssl.keystore.location")
            key = _pem_key(text, key_password, "ssl.keystore.location")
        else:
            password = properties.get("ssl.keystore.password")
            key, chain = _store("ssl.keystore", location, password, key_password)
    if key is None or not chain:
        raise StoreError("ssl.keystore.location", "the key store holds no private key with its certificate")
    if key.public_key() != chain[0].public_key():
        raise StoreError("ssl.keystore.location", "the key store's private key does not match its certificate")
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return _pem(chain), key_pem


def _store(
    option: str, location: str, password: str | None, key_password: str | None
) -> tuple[PrivateKeyTypes | None, list[x509.Certificate]]:
    """(private key, certificates, the key's own first) of a PKCS#12, JKS or JCEKS store, whatever its stated
    type (Java's own loader recognises the format, too)."""
    path = Path(location).expanduser()
    data = _read(location, f"{option}.location")
    if password is None:
        raise StoreError(f"{option}.password", f"'properties.{option}.location' needs 'properties.{option}.password'")
    stamp = path.stat().st_mtime_ns
    if data[:4] in _JAVA_MAGIC:
        return _java_store(str(path.resolve()), stamp, password, key_password, option)
    return _pkcs12(data, password, option)


def _pkcs12(
    data: bytes, password: str, option: str
) -> tuple[PrivateKeyTypes | None, list[x509.Certificate]]:
    try:
        store = pkcs12.load_pkcs12(data, password.encode())
    except ValueError as error:
        raise StoreError(
            f"{option}.password",
            f"'properties.{option}.location' does not open with 'properties.{option}.password' "
            f"(a wrong password, or not a PKCS12, JKS or JCEKS store): {error}",
        ) from None
    own = [store.cert.certificate] if store.cert is not None else []
    return store.key, own + [extra.certificate for extra in store.additional_certs]


@functools.lru_cache(maxsize=16)
def _java_store(
    path: str, stamp: int, password: str, key_password: str | None, option: str
) -> tuple[PrivateKeyTypes | None, list[x509.Certificate]]:
    """A JKS or JCEKS store read through keytool (cached per file version: planning reads settings often)."""
    del stamp  # part of the cache key only
    converted = secrets.token_hex(16)
    environment = {**os.environ, "KAFKA_SQL_SOURCE_PASS": password, "KAFKA_SQL_TARGET_PASS": converted,
                   "KAFKA_SQL_KEY_PASS": key_password or password}
    with tempfile.TemporaryDirectory(prefix="kafka-sql-store-") as private:  # created 0700
        target = Path(private) / "store.p12"
        source = ["-srckeystore", path, "-srcstorepass:env", "KAFKA_SQL_SOURCE_PASS"]
        if key_password is not None and key_password != password:
            # keytool takes a key password only for one entry: the key store's private key.
            listing = _run_keytool(["-list", "-v", "-keystore", path, "-storepass:env", "KAFKA_SQL_SOURCE_PASS"],
                                   environment, option, path)
            aliases = re.findall(r"Alias name: (.*)\nCreation date: .*\nEntry type: PrivateKeyEntry", listing)
            source += ["-srcalias", aliases[0], "-srckeypass:env", "KAFKA_SQL_KEY_PASS"] if aliases else []
        target_arguments = ["-destkeystore", str(target), "-deststoretype", "PKCS12",
                            "-deststorepass:env", "KAFKA_SQL_TARGET_PASS"]
        _run_keytool(["-importkeystore", "-noprompt", *source, *target_arguments], environment, option, path)
        return _pkcs12(target.read_bytes(), converted, option)


def _run_keytool(arguments: list[str], environment: dict[str, str], option: str, path: str) -> str:
    """keytool's output; a StoreError with keytool's own words when it fails."""
    try:
        done = subprocess.run([_keytool(option), *arguments], env=environment, capture_output=True, text=True,
                              timeout=KEYTOOL_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise StoreError(f"{option}.location", f"keytool did not read {path} within "
                         f"{KEYTOOL_TIMEOUT_SECONDS:.0f} s") from None
    if done.returncode != 0:
        said = next((line.removeprefix("keytool error: ").strip() for line in (done.stdout + done.stderr).splitlines()
                     if line.startswith("keytool error: ")), f"keytool exited with {done.returncode}")
        wrong_key = "cannot recover key" in said.lower()  # the key's own password
        key = "ssl.key.password" if wrong_key else f"{option}.password"
        raise StoreError(key, f"'properties.{option}.location' {path} does not open with 'properties.{key}': {said}")
    return done.stdout


def _keytool(option: str) -> str:
    """The keytool of the Java runtime Spark uses (JAVA_HOME, else the PATH)."""
    home = os.environ.get("JAVA_HOME")
    candidates = [Path(home) / "bin" / "keytool"] if home else []
    found = shutil.which("keytool")
    candidates += [Path(found)] if found else []
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise StoreError(
        f"{option}.location",
        "reading a JKS or JCEKS store needs Java's keytool (set JAVA_HOME to the Java runtime Spark uses), or "
        f"convert the store to PKCS12 and set 'properties.{option}.type' = 'PKCS12'",
    )


def _read(location: str, key: str) -> bytes:
    path = Path(location).expanduser()
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise StoreError(key, f"'properties.{key}' {path} does not exist") from None
    except OSError as error:
        raise StoreError(key, f"'properties.{key}' {path} cannot be read: {error.strerror}") from None


def _pem_certificates(text: bytes, key: str) -> list[x509.Certificate]:
    if b"-----BEGIN CERTIFICATE-----" not in text:
        raise StoreError(key, f"'properties.{key}' holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    try:
        return x509.load_pem_x509_certificates(text)
    except ValueError as error:
        raise StoreError(key, f"'properties.{key}' holds a PEM certificate that does not parse: {error}") from None


def _pem_key(text: bytes, password: str | None, key: str) -> PrivateKeyTypes:
    start = text.find(b"-----BEGIN ")
    while start >= 0 and text.startswith(b"-----BEGIN CERTIFICATE-----", start):
        start = text.find(b"-----BEGIN ", start + 1)
    if start < 0:
        raise StoreError(key, f"'properties.{key}' holds no PEM private key")
    try:
        return serialization.load_pem_private_key(text[start:], password.encode() if password else None)
    except (ValueError, TypeError) as error:
        raise StoreError("ssl.key.password", f"the private key of 'properties.{key}' does not open with "
                                             f"'properties.ssl.key.password': {error}") from None


def _pem(certificates: list[x509.Certificate]) -> str:
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certificates)
