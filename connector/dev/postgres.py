"""A PostgreSQL server for development and tests, from the machine's own PostgreSQL (Debian's `postgresql`
package): `initdb` into a fresh directory, `pg_ctl start` on loopback, `pg_ctl stop`.

PostgreSQL refuses to run as root, so when this process is root the server runs as the `postgres` user the
package creates, in a directory of its own under the system's temporary directory (a root-owned pytest folder
is not readable by that user). Clients log in as `kafka_sql` with a password (scram-sha-256), as they would on a
real server.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from connector.dev import local
from connector.errors import KafkaSqlError

USER = "kafka_sql"
DATABASE = "postgres"
_SERVICE_USER = "postgres"
_TIMEOUT_SECONDS = 60


class PostgresError(KafkaSqlError, RuntimeError):
    """PostgreSQL is missing, or its server did not start."""


@dataclass(frozen=True)
class PostgresInfo:
    port: int
    data_dir: Path
    password: str

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{DATABASE}"


def _bin_dir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb is None:
        raise PostgresError("PostgreSQL is not installed: install Debian's package (`apt-get install postgresql`)")
    return Path(initdb).resolve().parent


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", _SERVICE_USER, "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(_as_server_user(command), capture_output=True, text=True, timeout=_TIMEOUT_SECONDS)
    if done.returncode != 0:
        raise PostgresError(f"{what} failed: {(done.stderr or done.stdout).strip()[-2000:]}")


def start() -> PostgresInfo:
    """A new server on a free loopback port, its data in a new directory (removed by `stop`)."""
    bin_dir = _bin_dir()
    data_dir = Path(tempfile.mkdtemp(prefix="kafka-sql-postgres-"))
    password = secrets.token_urlsafe(16)
    password_file = data_dir / "password"
    password_file.write_text(password)
    if os.geteuid() == 0:
        owner = pwd.getpwnam(_SERVICE_USER)
        os.chown(data_dir, owner.pw_uid, owner.pw_gid)
        os.chown(password_file, owner.pw_uid, owner.pw_gid)
    cluster = data_dir / "data"
    _run(
        [str(bin_dir / "initdb"), "-D", str(cluster), "-U", USER, f"--pwfile={password_file}",
         "--auth=scram-sha-256", "--encoding=UTF8", "--no-sync"],
        "initdb",
    )  # fmt: skip
    port = local.free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {data_dir} -c fsync=off"
    _run(
        [str(bin_dir / "pg_ctl"), "-D", str(cluster), "-l", str(data_dir / "server.log"), "-o", options, "-w",
         "start"],
        f"starting PostgreSQL (log {data_dir / 'server.log'})",
    )  # fmt: skip
    return PostgresInfo(port, data_dir, password)


def stop(info: PostgresInfo) -> None:
    """Stop the server and remove its directory."""
    try:
        _run([str(_bin_dir() / "pg_ctl"), "-D", str(info.data_dir / "data"), "-m", "fast", "-w", "stop"], "pg_ctl stop")
    finally:
        shutil.rmtree(info.data_dir, ignore_errors=True)


_NULL = "\\N"


def query(info: PostgresInfo, statement: str) -> list[list[str | None]]:
    """The rows `statement` returns, run by psql as the client user; values as psql prints them, NULL as None."""
    done = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-p", str(info.port), "-U", USER, "-d", DATABASE, "-At", "-F", "|",
         "-v", "ON_ERROR_STOP=1", "-P", f"null={_NULL}", "-c", statement],
        capture_output=True, text=True, env={**os.environ, "PGPASSWORD": info.password}, timeout=_TIMEOUT_SECONDS,
    )  # fmt: skip
    if done.returncode != 0:
        raise PostgresError(f"psql: {done.stderr.strip()}")
    return [[None if v == _NULL else v for v in line.split("|")] for line in done.stdout.splitlines() if line]
