"""A SASL_PLAINTEXT listener for the development broker: users for PLAIN and SCRAM-SHA-512, as production clusters
authenticate Flink's (Java) clients. Tests of secured clients start a broker with one (`broker.start(sasl=...)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

MECHANISMS = ("PLAIN", "SCRAM-SHA-512")


@dataclass(frozen=True)
class SaslListener:
    """Listener `port` on the broker's host; `users` maps user names to passwords, for every mechanism."""

    port: int
    users: Mapping[str, str] = field(default_factory=dict)

    def settings(self, host: str) -> dict[str, str]:
        """server.properties entries to add: the listener, its protocol, its mechanisms and the PLAIN users."""
        plain_users = " ".join(f'user_{name}="{password}"' for name, password in self.users.items())
        return {
            "sasl.enabled.mechanisms": ",".join(MECHANISMS),
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
                f"org.apache.kafka.common.security.plain.PlainLoginModule required {plain_users};"
            ),
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            "listener": f"SASL_PLAINTEXT://{host}:{self.port}",
        }

    def format_arguments(self) -> list[str]:
        """kafka-storage format arguments that store the SCRAM credentials in the cluster's metadata."""
        arguments = []
        for name, password in self.users.items():
            arguments += ["--add-scram", f"SCRAM-SHA-512=[name={name},password={password}]"]
        return arguments
