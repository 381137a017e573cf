"""Java Kafka client properties, as Flink users write them (`'properties.sasl.jaas.config'` ...), in librdkafka's
terms. librdkafka's own spellings pass unchanged, so either works.

A JAAS configuration names a login module and its options; librdkafka has the three a Kafka cluster offers:
PLAIN and SCRAM-SHA-256/512 (a user name and password) and OAUTHBEARER (here the OIDC client-credentials flow).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

JAAS = "sasl.jaas.config"
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
    """`properties` (the table's 'properties.*' without the prefix) with Java names and the JAAS text translated;
    ValueError for a JAAS module or option librdkafka cannot use."""
    translated: dict[str, str] = {}
    for key, value in properties.items():
        if key == JAAS:
            translated.update(_from_jaas(value))
        elif key == "ssl.endpoint.identification.algorithm":
            translated[key] = value.strip() or "none"  # Java disables the host name check with ''
        elif key not in _IMPLIED:
            translated[_RENAMED.get(key, key)] = value
    return translated


def _from_jaas(text: str) -> dict[str, str]:
    module, options = parse_jaas(text)
    kind = _MODULES.get(module)
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
