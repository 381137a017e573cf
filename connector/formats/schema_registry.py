"""A Confluent-compatible schema registry, as the `avro-confluent` format's options reach it (Flink's
`avro-confluent.url`, `.basic-auth.*`, `.bearer-auth.*`, `.ssl.*`, `.properties.*`), through confluent-kafka's
SchemaRegistryClient.

Only the driver talks to the registry, when a query is planned: the writer schemas of a subject are fetched then
and handed to Spark's Avro functions, and a sink's schema is registered (or looked up) once. Failures name the
registry and the subject, and say what happened (authentication refused, unreachable, no such subject).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography.hazmat.primitives import serialization

from connector.connectors.kafka import keystores
from connector.connectors.kafka.keystores import StoreError
from connector.errors import KafkaSqlError

_PASSTHROUGH = "properties."
# Flink's option -> the client's (Java and Python clients share these names).
_CLIENT_KEYS = {
    "basic-auth.credentials-source": "basic.auth.credentials.source",
    "basic-auth.user-info": "basic.auth.user.info",
    "bearer-auth.credentials-source": "bearer.auth.credentials.source",
    "bearer-auth.token": "bearer.auth.token",
}


class RegistryRequestError(KafkaSqlError, RuntimeError):
    """The registry refused or could not be reached; the message says which and why."""


@dataclass(frozen=True)
class Registered:
    """A schema as the registry holds it."""

    schema_id: int
    schema: dict[str, Any]


def client_config(options: Mapping[str, Any]) -> dict[str, Any]:
    """The SchemaRegistryClient configuration of a format's typed options ('url', 'basic-auth.user-info',
    'properties.*', ...)."""
    config: dict[str, Any] = {
        k[len(_PASSTHROUGH) :]: v for k, v in options.items() if k.startswith(_PASSTHROUGH) and v is not None
    }
    config["url"] = options["url"]
    for flink_key, client_key in _CLIENT_KEYS.items():
        if options.get(flink_key) is not None:
            config[client_key] = options[flink_key]
    if config.get("basic.auth.user.info") and "basic.auth.credentials.source" not in config:
        config["basic.auth.credentials.source"] = "USER_INFO"
    if config.get("bearer.auth.token"):
        config.setdefault("bearer.auth.credentials.source", "STATIC_TOKEN")
        config.setdefault("bearer.auth.logical.cluster", "")  # required by the Python client, unused elsewhere
    return config


def _client(options: Mapping[str, Any]) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    stores = {key: str(value) for key, value in options.items() if key in SSL_STORE_KEYS and value is not None}
    try:
        if not stores:
            return SchemaRegistryClient(client_config(options))
        with _pem_files(stores) as files:  # read into the client's TLS context when it is made, then removed
            return SchemaRegistryClient({**client_config(options), **files})
    except StoreError as err:
        raise RegistryRequestError(f"schema registry option '{err.key}': {err}") from None
    except (ValueError, OSError) as err:
        raise RegistryRequestError(f"schema registry options: {err}") from None


# Flink's 'avro-confluent.ssl.*' options: Java stores (JKS or PKCS12), as Confluent's Java client reads them.
SSL_STORE_KEYS = (
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.keystore.location",
    "ssl.keystore.password",
)


@contextlib.contextmanager
def _pem_files(stores: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """The client's 'ssl.*.location' files for the Java stores, in a private directory removed on exit; the
    private key written encrypted under a random password (`connector.connectors.kafka.keystores` reads stores)."""
    pem = keystores.pem_properties(stores)
    with tempfile.TemporaryDirectory(prefix="kafka-sql-registry-tls-") as private:  # created 0700
        files: dict[str, str] = {}
        if "ssl.ca.pem" in pem:
            files["ssl.ca.location"] = _write(Path(private) / "ca.pem", pem["ssl.ca.pem"])
        if "ssl.certificate.pem" in pem:
            password = secrets.token_hex(16)
            key = serialization.load_pem_private_key(pem["ssl.key.pem"].encode(), None)
            encrypted = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(password.encode()),
            )
            files["ssl.certificate.location"] = _write(Path(private) / "certificate.pem", pem["ssl.certificate.pem"])
            files["ssl.key.location"] = _write(Path(private) / "key.pem", encrypted.decode())
            files["ssl.key.password"] = password
        yield files


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


def shown_url(url: str) -> str:
    """The registry URL for messages: credentials written into it are masked."""
    parts = urlsplit(url.split(",")[0])
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    return urlunsplit(parts._replace(netloc=f"***@{host}{f':{parts.port}' if parts.port else ''}"))


def _failure(options: Mapping[str, Any], action: str, err: Exception) -> RegistryRequestError:
    from confluent_kafka.schema_registry.error import SchemaRegistryError as ClientError

    where = shown_url(str(options["url"]))
    if isinstance(err, ClientError):
        status = err.http_status_code
        if status in (401, 403):
            what = "authentication failed" if status == 401 else "access denied"
            detail = f"{what} (HTTP {status}: {err.error_message})"
            return RegistryRequestError(f"schema registry {where}: {action}: {detail}")
        return RegistryRequestError(f"schema registry {where}: {action}: {err.error_message} (HTTP {status})")
    return RegistryRequestError(f"schema registry {where} is not reachable: {action}: {type(err).__name__}: {err}")


def subject_schemas(options: Mapping[str, Any], subject: str) -> list[Registered]:
    """Every version of `subject` (none when the subject does not exist)."""
    from confluent_kafka.schema_registry.error import SchemaRegistryError as ClientError

    client = _client(options)
    try:
        versions = client.get_versions(subject)
        found = [client.get_version(subject, v) for v in versions]
    except ClientError as err:
        if err.http_status_code == 404:
            return []
        raise _failure(options, f"reading subject '{subject}'", err) from None
    except Exception as err:  # httpx's transport errors: the registry is down or the URL is wrong
        raise _failure(options, f"reading subject '{subject}'", err) from None
    return [Registered(v.schema_id, json.loads(v.schema.schema_str)) for v in found]


def registered_id(options: Mapping[str, Any], subject: str, schema: Mapping[str, Any], register: bool) -> int:
    """The id of `schema` under `subject`: registered if need be (`register`, Flink's 'auto.register.schemas'),
    else looked up, failing when the registry does not hold it."""
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.error import SchemaRegistryError as ClientError

    client = _client(options)
    text = json.dumps(schema)
    action = f"{'registering' if register else 'looking up'} the schema of subject '{subject}'"
    try:
        if register:
            return int(client.register_schema(subject, Schema(text, "AVRO")))
        return int(client.lookup_schema(subject, Schema(text, "AVRO")).schema_id)
    except Exception as err:  # the client's SchemaRegistryError or transport errors
        if isinstance(err, ClientError) and err.http_status_code == 404 and not register:
            raise RegistryRequestError(
                f"subject '{subject}' of schema registry {shown_url(str(options['url']))} does not hold the table's "
                "schema, and 'auto.register.schemas' is false: register it first"
            ) from None
        raise _failure(options, action, err) from None
