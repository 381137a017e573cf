"""Secret masking: option values, SQL text and log lines never show passwords, keys or tokens.

Which options are secret is decided by name (`is_secret_key`), so it works for Kafka client properties
(`properties.sasl.jaas.config`, `properties.ssl.key.password`, ...), format options
(`avro-confluent.basic-auth.user-info`, ...) and anything a user invents (`my.api.key`) alike.
A JAAS configuration is the exception: only its secret fragments (`password="..."`) are masked, so the
login module and user name stay visible for debugging.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

MASK = "******"

# A word of the key containing one of these makes it secret ("clientsecret", "ssl.key.password").
_SECRET_WORDS = ("password", "passwd", "secret", "token", "credential", "apikey", "privatekey", "accesskey")
# Consecutive words that make a key secret although no single word does.
_SECRET_PHRASES = (
    ("sasl", "jaas", "config"),
    ("ssl", "key"),
    ("ssl", "keystore", "key"),
    ("user", "info"),
    ("api", "key"),
    ("access", "key"),
    ("private", "key"),
)
# One word of each phrase above, the least common: text without any of them holds none of the phrases.
_PHRASE_WORDS = ("jaas", "ssl", "info", "api", "access", "private")
# A key ending in one of these names where or how to get a secret, not the secret itself
# (`basic-auth.credentials-source`, `sasl.oauthbearer.token.endpoint.url`, `token.expiry.ms`).
_NOT_SECRET_LAST_WORDS = frozenset(
    {
        "source",
        "url",
        "uri",
        "endpoint",
        "location",
        "path",
        "file",
        "type",
        "class",
        "mechanism",
        "algorithm",
        "provider",
        "ms",
        "enabled",
        "enable",
    }
)
_JAAS_KEY = ("sasl", "jaas", "config")
# One `name=value` option of a JAAS login module: value double-quoted (with \-escapes) or bare.
_JAAS_OPTION = re.compile(r'([A-Za-z_][\w.\-]*)(\s*=\s*)("(?:[^"\\]|\\.)*"|[^\s;"]+)')
# Fallback for SQL the tokenizer rejects (an unterminated string): 'key' = 'value' pairs, the value
# possibly running to the end of the text.
_SQL_PAIR = re.compile(r"'((?:[^']|'')*)'(\s*=\s*)'((?:[^']|'')*)('|$)")


def _words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1.\2", key).lower()
    return [w for w in re.split(r"[^a-z0-9]+", spaced) if w]


def _contains(words: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(words[i : i + n]) == phrase for i in range(len(words) - n + 1))


def is_secret_key(key: str) -> bool:
    """True when an option, property or variable named `key` holds a secret (case-insensitive)."""
    words = _words(key)
    if not words or words[-1] in _NOT_SECRET_LAST_WORDS:
        return False
    if any(secret in word for word in words for secret in _SECRET_WORDS):
        return True
    return any(_contains(words, phrase) for phrase in _SECRET_PHRASES)


def _is_jaas_key(key: str) -> bool:
    return _contains(_words(key), _JAAS_KEY)


def _mask_jaas(config: str) -> str:
    """Masks the secret options of a JAAS configuration; all of it when it has no `name=value` options."""
    if not _JAAS_OPTION.search(config):
        return MASK

    def mask(match: re.Match[str]) -> str:
        name, equals, value = match.groups()
        if not is_secret_key(name):
            return match.group(0)
        return f'{name}{equals}"{MASK}"' if value.startswith('"') else f"{name}{equals}{MASK}"

    return _JAAS_OPTION.sub(mask, config)


def mask_value(key: str, value: str) -> str:
    """`value` as it may be shown for option `key`."""
    if not is_secret_key(key):
        return value
    return _mask_jaas(value) if _is_jaas_key(key) else MASK


def mask_options(options: Mapping[str, str]) -> dict[str, str]:
    """A copy of `options` with every secret value masked."""
    return {key: mask_value(key, value) for key, value in options.items()}


_TOKENIZER = Tokenizer()
# Every key `is_secret_key` accepts holds one of these: a secret word, or the rarest word of a secret phrase.
_SECRET_HINT = re.compile("|".join((*_SECRET_WORDS, *_PHRASE_WORDS)), re.IGNORECASE)


def _mask_literal(sql: str, key: str, value: Token) -> str:
    """The source text of string literal `value` (quotes included), masked for option `key`."""
    raw = sql[value.start : value.end + 1]
    if len(raw) < 2 or raw[0] != "'" or raw[-1] != "'":
        return f"'{MASK}'"
    return f"'{mask_value(key, raw[1:-1])}'"


def _mask_comments(gap: str) -> str:
    """Masks the comments in `gap`, text between two tokens that holds only whitespace and comments
    (a `/*+ OPTIONS(...) */` hint is a comment to the tokenizer)."""
    out: list[str] = []
    i = 0
    while i < len(gap):
        if gap.startswith("--", i):
            end = gap.find("\n", i)
            end = len(gap) if end < 0 else end
            out += ["--", mask_sql(gap[i + 2 : end])]
            i = end
        elif gap.startswith("/*", i):
            end = gap.find("*/", i + 2)
            end = len(gap) if end < 0 else end
            out += ["/*", mask_sql(gap[i + 2 : end])]
            i = end
            if gap.startswith("*/", i):
                out.append("*/")
                i += 2
        else:
            out.append(gap[i])
            i += 1
    return "".join(out)


def mask_sql(sql: str) -> str:
    """`sql` with the value of every secret `'key' = 'value'` pair masked (WITH clauses, SET statements,
    OPTIONS hints, comments), everything else byte-identical.

    String literals are found with sqlglot's tokenizer, so quotes inside literals and comments cannot
    confuse it; SQL the tokenizer rejects (an unterminated string) falls back to a pattern that masks
    a secret value even when its closing quote is missing. Text in which no key could be secret is
    returned as it is, untokenized: `render` of a large file would otherwise tokenize all of it.
    """
    if not _SECRET_HINT.search(sql):
        return sql
    try:
        tokens = _TOKENIZER.tokenize(sql)
    except TokenError:
        return _SQL_PAIR.sub(_mask_pair_match, sql)
    out: list[str] = []
    cursor = 0
    for i, token in enumerate(tokens):
        if token.start > cursor:
            out.append(_mask_comments(sql[cursor : token.start]))
        key = tokens[i - 2] if i >= 2 else None
        if (
            token.token_type == TokenType.STRING
            and key is not None
            and key.token_type == TokenType.STRING
            and tokens[i - 1].token_type == TokenType.EQ
            and is_secret_key(key.text)
        ):
            out.append(_mask_literal(sql, key.text, token))
        else:
            out.append(sql[token.start : token.end + 1])
        cursor = token.end + 1
    out.append(_mask_comments(sql[cursor:]))
    return "".join(out)


def _mask_pair_match(match: re.Match[str]) -> str:
    key, equals, value, close = match.groups()
    if not is_secret_key(key.replace("''", "'")):
        return match.group(0)
    return f"'{key}'{equals}'{mask_value(key, value)}{close}"


def _secret_pattern(secrets: Iterable[str]) -> re.Pattern[str] | None:
    # Longest first, so a secret containing another one is masked whole.
    unique = sorted({s for s in secrets if s}, key=len, reverse=True)
    return re.compile("|".join(re.escape(s) for s in unique)) if unique else None


def mask_text(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of every (non-empty) secret value replaced by the mask."""
    pattern = _secret_pattern(secrets)
    return pattern.sub(MASK, text) if pattern else text


class SecretMaskingFilter(logging.Filter):
    """Masks registered secret values in every log record it sees: message, exception and stack text.

    Install it on handlers (`handler.addFilter(...)`): a filter on a logger does not see records that
    propagate from its child loggers. The record is changed in place, so every later handler gets the
    masked text too.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._secrets: frozenset[str] = frozenset()
        self._pattern: re.Pattern[str] | None = None
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        """Registers more secret values (empty strings are ignored)."""
        with self._lock:
            self._secrets = self._secrets | {s for s in secrets if s}
            self._pattern = _secret_pattern(self._secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        pattern = self._pattern
        if pattern is None:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: logging reports it later, with the masked text
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = pattern.sub(MASK, message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = pattern.sub(MASK, record.exc_text)
        if record.stack_info:
            record.stack_info = pattern.sub(MASK, record.stack_info)
        return True
