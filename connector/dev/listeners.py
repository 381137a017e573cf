"""Secured listeners for the development broker, as production clusters offer them to Flink's (Java) clients:
SASL (PLAIN and SCRAM-SHA-256/512 users, OAUTHBEARER tokens of an OpenID Connect provider) over plain TCP or TLS, and
TLS alone with client certificates (mTLS). Tests of
secured clients start a broker with some (`broker.start(listeners=...)`); the TLS material comes from
`connector.dev.certificates`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@dataclass(frozen=True)
class Tls:
    """The broker's side of TLS, as PEM texts: its certificate chain and unencrypted key, and the CA it trusts for
    client certificates (`client_auth`: clients must present one)."""

    certificate_chain: str
    key: str
    ca: str
    client_auth: bool = False


@dataclass(frozen=True)
class OAuth:
    """OAUTHBEARER: the broker checks JWT access tokens against the provider's keys (`jwks_url`), issuer and
    audience, as Kafka's own validator does."""

    jwks_url: str
    issuer: str
    audience: str


@dataclass(frozen=True)
class Listener:
    """Listener `port` on the broker's host. `users` (names to passwords, for every mechanism) makes it a SASL
    listener, as does `oauth`; `tls` makes it a TLS one; both: SASL_SSL. Its name is its protocol, so a broker has
    one of each kind."""

    port: int
    users: Mapping[str, str] = field(default_factory=dict)
    tls: Tls | None = None
    oauth: OAuth | None = None

    def __post_init__(self) -> None:
        if not self.sasl and self.tls is None:
            raise ValueError("a secured listener needs SASL users, OAuth, TLS, or some of them")

    @property
    def sasl(self) -> bool:
        return bool(self.users) or self.oauth is not None

    @property
    def protocol(self) -> str:
        return ("SASL_" if self.sasl else "") + ("SSL" if self.tls else "PLAINTEXT")

    def jvm_options(self) -> list[str]:
        """Broker JVM options: Kafka 4 fetches only endpoints listed in a system property."""
        return [f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={self.oauth.jwks_url}"] if self.oauth else []

    def settings(self) -> dict[str, str]:
        """server.properties entries of the listener, scoped to its name."""
        prefix = f"listener.name.{self.protocol.lower()}."
        settings: dict[str, str] = {}
        if self.users:
            plain_users = " ".join(f'user_{name}="{password}"' for name, password in self.users.items())
            settings |= {
                f"{prefix}sasl.enabled.mechanisms": ",".join(MECHANISMS),
                f"{prefix}plain.sasl.jaas.config": (
                    f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain_users};"
                ),
                **{
                    f"{prefix}{scram.lower()}.sasl.jaas.config": (
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                    )
                    for scram in MECHANISMS[1:]
                },
            }
        if self.oauth is not None:
            settings |= {
                f"{prefix}sasl.enabled.mechanisms": ",".join([*MECHANISMS, "OAUTHBEARER"] if self.users
                                                               else ["OAUTHBEARER"]),
                f"{prefix}oauthbearer.sasl.jaas.config": (
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
                ),
                f"{prefix}oauthbearer.sasl.server.callback.handler.class": (
                    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
                ),
                "sasl.oauthbearer.jwks.endpoint.url": self.oauth.jwks_url,
                "sasl.oauthbearer.expected.issuer": self.oauth.issuer,
                "sasl.oauthbearer.expected.audience": self.oauth.audience,
            }
        if self.tls is not None:
            settings |= {
                f"{prefix}ssl.keystore.type": "PEM",
                f"{prefix}ssl.keystore.certificate.chain": self.tls.certificate_chain,
                f"{prefix}ssl.keystore.key": self.tls.key,
                f"{prefix}ssl.truststore.type": "PEM",
                f"{prefix}ssl.truststore.certificates": self.tls.ca,
                f"{prefix}ssl.client.auth": "required" if self.tls.client_auth else "none",
            }
        return settings

    def format_arguments(self) -> list[str]:
        """kafka-storage format arguments that store the SCRAM credentials in the cluster's metadata."""
        arguments = []
        for name, password in self.users.items():
            for scram in MECHANISMS[1:]:
                arguments += ["--add-scram", f"{scram}=[name={name},password={password}]"]
        return arguments
