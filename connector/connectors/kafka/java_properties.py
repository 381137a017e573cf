"""Java Kafka client properties, as Flink users write them (`'properties.sasl.jaas.config'` ...), in librdkafka's
terms. librdkafka's own spellings pass unchanged, so either works.

A JAAS configuration names a login module and its options; librdkafka has the three a Kafka cluster offers:
PLAIN and SCRAM-SHA-256/512 (a user name and password) and OAUTHBEARER (here the OIDC client-credentials flow).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

JAAS = "sasl.jaas.config"
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")  # librdkafka's, GSSAPI aside
_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": "password",
    "org.apache.kafka.common.security.scram.ScramLoginModule": "password",
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule": "oauthbearer",
}
# Java names of client properties whose librdkafka name differs.
_RENAMED = {
    "max.request.size": "message.max.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "fetch.max.wait.ms": "fetch.wait.max.ms",
    "sasl.oauthbearer.client.credentials.client.id": "sasl.oauthbearer.client.id",  # Kafka 4.1's names
    "sasl.oauthbearer.client.credentials.client.secret": "sasl.oauthbearer.client.secret",
}
# Java-only properties that librdkafka does by itself once the JAAS text is translated.
_IMPLIED = frozenset({"sasl.login.callback.handler.class", "sasl.client.callback.handler.class"})
_ENTRY = re.compile(r"\s*(?P<module>[\w.$]+)\s+(?:required|requisite|sufficient|optional)\b(?P<options>.*?);?\s*", re.S)
_OPTION = re.compile(r'\s*(?P<key>[\w.\-]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s";]+))', re.S)


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """(login module, options) of a one-entry JAAS configuration; ValueError saying what is wrong."""
    entry = _ENTRY.fullmatch(text)
    if entry is None:
        raise ValueError(
            "'properties.sasl.jaas.config' does not parse: expected '<LoginModule class> required key=\"value\" ...;'"
        )
    options: dict[str, str] = {}
    rest = entry.group("options")
    position = 0
    for match in _OPTION.finditer(rest):
        if rest[position : match.start()].strip():
            break
        quoted = match.group("quoted")
        options[match.group("key")] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else match.group("bare")
        position = match.end()
    if rest[position:].strip():
        raise ValueError(f"'properties.sasl.jaas.config' does not parse near '{rest[position:].strip()[:20]}'")
    return entry.group("module"), options


def librdkafka_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """`properties` (the table's 'properties.*' without the prefix) with Java names, the JAAS text and the key and
    trust stores (`keystores`) translated; ValueError for a JAAS module or option librdkafka cannot use, a
    `keystores.StoreError` (naming the property) for a store that cannot be read."""
    translated: dict[str, str] = {}
    for key, value in properties.items():
        if key == JAAS:
            translated.update(_from_jaas(value))
        elif key == "ssl.endpoint.identification.algorithm":
            translated[key] = value.strip() or "none"  # Java disables the host name check with ''
        elif key not in _IMPLIED:
            translated[_RENAMED.get(key, key)] = value
    if any(key.startswith(("ssl.truststore.", "ssl.keystore.")) for key in translated):
        # Imported here: executors get translated settings, and `cryptography` costs each Python process time.
        from connector.connectors.kafka.keystores import pem_properties

        return pem_properties(translated)
    return translated


def _from_jaas(text: str) -> dict[str, str]:
    module, options = parse_jaas(text)
    kind = _MODULES.get(module)
    if kind is None and module.endswith(".IAMLoginModule"):
        raise ValueError(
            "AWS MSK IAM authentication ('software.amazon.msk.auth.iam.IAMLoginModule') signs requests inside a JVM, "
            "which kafka-sql's Kafka client (librdkafka) does not run. Enable SASL/SCRAM on the MSK cluster and use "
            "'properties.sasl.mechanism' = 'SCRAM-SHA-512' with the ScramLoginModule (user and password from AWS "
            "Secrets Manager), or mutual TLS ('properties.security.protocol' = 'SSL' with 'properties.ssl.keystore.*')."
        )
    if kind is None:
        known = ", ".join(sorted(m.rsplit(".", 1)[1] for m in _MODULES))
        raise ValueError(
            f"JAAS login module '{module}' cannot run outside a JVM; librdkafka supports {known} "
            "('properties.sasl.mechanism' PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER)."
        )
    if kind == "password":
        missing = [key for key in ("username", "password") if key not in options]
        if missing:
            name = module.rsplit(".", 1)[1]
            raise ValueError(f"'properties.sasl.jaas.config' of {name} needs {' and '.join(missing)}")
        return {"sasl.username": options["username"], "sasl.password": options["password"]}
    oidc = {"clientId": "sasl.oauthbearer.client.id", "clientSecret": "sasl.oauthbearer.client.secret",
            "scope": "sasl.oauthbearer.scope"}
    found = {oidc[key]: value for key, value in options.items() if key in oidc}
    return {"sasl.oauthbearer.method": "oidc", **found} if found else {}


def client_properties(path: Path | None, pairs: Sequence[str] = ()) -> dict[str, str]:
    """Client properties from a Java .properties file (as Kafka's tools take with --command-config) and then
    KEY=VALUE pairs, which win; ValueError naming what does not read."""
    import javaproperties  # imported here: only the command line and the pytest plugin read such files

    properties: dict[str, str] = {}
    if path is not None:
        try:
            properties.update(javaproperties.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as error:
            raise ValueError(f"cannot read client properties from {path}: {error}") from None
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise ValueError("a client property is not KEY=VALUE (it has no '=' or no key)")
        properties[key.strip()] = value
    return properties


def refused_property(config: Mapping[str, str]) -> tuple[str, str] | None:
    """(property, reason) for a property librdkafka refuses (an unknown name, such as a Java property without a
    librdkafka equivalent, or a bad value) or a SASL mechanism it lacks (which it would see only when it connects);
    None when it takes them all. Checked offline: the client is made without brokers, so it connects nowhere."""
    return _refused(tuple(sorted(config.items())))


@functools.lru_cache(maxsize=256)
def _refused(items: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    """`refused_property`, once per distinct configuration (a file may declare many alike tables)."""
    from confluent_kafka import Consumer, KafkaException

    config = dict(items)
    mechanism = config.get("sasl.mechanism", "GSSAPI")
    if config.get("security.protocol", "").upper().startswith("SASL") and mechanism.upper() not in SASL_MECHANISMS:
        return "sasl.mechanism", (f"'{mechanism}' is not a SASL mechanism kafka-sql's Kafka client offers; use one of "
                                  f"{', '.join(SASL_MECHANISMS)}" + ("" if "sasl.mechanism" in config else
                                                                      " (Kafka's default, GSSAPI, is Kerberos)"))
    try:
        Consumer({**config, "group.id": "kafka-sql-validate", "logger": _Silent()}).close()
    except KafkaException as error:
        text = error.args[0].str() if error.args else str(error)
        text = text.removeprefix("Failed to create consumer: ")  # the offline check's client, not the user's
        named = re.findall(r'["`]([A-Za-z0-9._\-]+)["`]', text)
        named = named[:1] if "is mandatory" in text else named  # "`x` is mandatory when `y` is set": x
        unknown = text.startswith("No such configuration property")
        key = named[-1] if named else next((k for k in config if k in text), "security.protocol")
        if "sasl.username and sasl.password must be set" in text:
            return JAAS, ("the SASL mechanism needs a user name and password: '<LoginModule class> required "
                          'username="..." password="...";\'')
        key = next((java for java, native in _RENAMED.items() if native == key and java in config), key)
        if unknown:
            return key, "librdkafka, the Kafka client kafka-sql runs, has no such property (a Java-only one?)"
        from connector.secrets import is_secret_key

        return key, "librdkafka refuses its value" if is_secret_key(key) else text
    return None


class _Silent:
    """A `logger` for the offline check: its warnings (no brokers set) mean nothing there."""

    def log(self, *args: object, **kwargs: object) -> None:
        del args, kwargs
