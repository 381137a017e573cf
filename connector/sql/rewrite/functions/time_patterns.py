"""Flink's date-time patterns compiled into Java regular expressions, which Spark's regexp functions run.

Flink parses TO_TIMESTAMP(text, pattern) with java.time's DateTimeFormatter.ofPattern (strict parsing, SMART
resolution: DateTimeUtils.parseTimestampData) and UNIX_TIMESTAMP / TO_DATE(text, pattern) with a lenient
java.text.SimpleDateFormat (DateTimeUtils.internalParseTimestampMillis). Spark's own parsers follow neither, so a
literal pattern becomes a regular expression with one group per field, written to take exactly the text the Java
parser takes: possessive quantifiers where Java reads greedily and never gives back, atomic groups for optional
sections, and DateTimeFormatterBuilder's adjacent value parsing ('yyyyMMdd'). Patterns with fields outside the
numeric ones (month names, AM/PM, week fields, zone names, ...) are not compiled (None).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from connector.sql.rewrite.functions.time_parsing import (
    LAST_YEAR,
    Groups,
    as_int,
    at,
    between,
    epoch_day,
    fraction_micros,
    lenient_day,
    matched,
    month_days,
    ntz,
    sql,
    with_fields,
)
from connector.sql.rewrite.nodes import fn

# DateTimeFormatter letters compiled, and the field each sets.
_JAVA_TIME_FIELDS = {
    "y": "year_of_era",
    "u": "year",
    "M": "month",
    "L": "month",
    "d": "day",
    "H": "hour",
    "m": "minute",
    "s": "second",
    "S": "fraction",
    "X": "offset",
    "x": "offset",
    "Z": "offset",
}
# SimpleDateFormat letters compiled (all numeric), and the Calendar field each sets.
_SIMPLE_FIELDS = {"y": "year", "M": "month", "d": "day", "H": "hour", "m": "minute", "s": "second", "S": "millis"}
_REGEX_SPECIAL = set("\\.[]{}()*+?^$|")


@dataclass(frozen=True)
class Compiled:
    """A pattern as a regular expression over the whole text (java.time) or a prefix of it (SimpleDateFormat):
    `groups` maps each field to its group (1-based); a field left out by an optional section has an empty group."""

    regex: str
    groups: dict[str, int]
    group_count: int
    fraction_digits: int = 0  # java.time 'S...S': the fixed number of fraction digits
    two_digit_year: bool = False  # java.time 'yy'/'uu': 2000 + the two digits


@dataclass
class _Number:
    """A numeric DateTimeFormatterBuilder printer-parser (NumberPrinterParser or its fraction / reduced kinds)."""

    field: str
    low: int
    high: int
    fixed: bool  # fixed width and NOT_NEGATIVE: it can follow an adjacent value parser
    exceeds_pad: bool = False  # SignStyle.EXCEEDS_PAD ('yyyy'): more than `low` digits only after a '+'
    subsequent: int = 0  # the widths of the fixed parsers that follow adjacently; -1 once made fixed width
    last_follower: bool = False  # ends a run of adjacent values whose variable-width leader reserved their widths
    group: int = 0


@dataclass
class _Offset:
    """An OffsetIdPrinterParser: parsed and checked, but Flink's result keeps the local date-time written."""

    regex: str
    field: str = "offset"
    group: int = 0


@dataclass
class _Builder:
    """One DateTimeFormatterBuilder level (the pattern, or an optional section) and its active value parser."""

    parts: list[_Number | _Offset | str | _Builder] = field(default_factory=list)
    leader: _Number | None = None
    followers: list[_Number] = field(default_factory=list)

    def close_run(self) -> None:
        if self.leader is not None and self.leader.subsequent > 0 and not self.leader.fixed and self.followers:
            self.followers[-1].last_follower = True
        self.leader, self.followers = None, []

    def number(self, number: _Number) -> None:
        """DateTimeFormatterBuilder.appendValue: a fixed-width value after another value is parsed adjacently,
        reserving its width in the leader; a variable-width one makes the leader fixed width instead."""
        if self.leader is not None and number.fixed:
            self.leader.subsequent += number.high
            self.followers.append(number)
        else:
            if self.leader is not None:
                self.followers = []  # the reservation is dropped along with the leader's adjacency
                self.leader.subsequent = -1
            self.leader = number
        self.parts.append(number)

    def other(self, part: _Offset | str | _Builder) -> None:
        self.close_run()
        self.parts.append(part)


def _literal(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def _tokens(pattern: str, sections: bool) -> list[tuple[str, str, int]] | None:
    """(kind, text, count) tokens: ('field', letter, count), ('literal', text, 0), ('[' or ']', '', 0). None for
    an unclosed quote, or (`sections`: DateTimeFormatter's) a reserved character."""
    tokens: list[tuple[str, str, int]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = i + 1
            text = ""
            while True:
                close = pattern.find("'", end)
                if close < 0:
                    return None
                text += pattern[end:close]
                if pattern.startswith("''", close):
                    text += "'"
                    end = close + 2
                    continue
                break
            tokens.append(("literal", text or "'", 0))
            i = close + 1
        elif c.isascii() and c.isalpha():
            count = len(pattern) - i - len(pattern[i:].lstrip(c))
            tokens.append(("field", c, count))
            i += count
        elif sections and c in "[]":
            tokens.append((c, "", 0))
            i += 1
        elif sections and c in "#{}":
            return None  # reserved: DateTimeFormatter.ofPattern refuses the pattern
        else:
            tokens.append(("literal", c, 0))
            i += 1
    return tokens


def _java_time_part(letter: str, count: int) -> _Number | _Offset | None:
    """The printer-parser DateTimeFormatterBuilder.parsePattern appends for `count` times `letter`."""
    name = _JAVA_TIME_FIELDS.get(letter)
    if name is None:
        return None
    if name in ("year", "year_of_era"):
        if count == 2:
            return _Number(name, 2, 2, fixed=True)  # appendValueReduced(field, 2, 2, 2000)
        return _Number(name, count, 19, fixed=False, exceeds_pad=count >= 4)
    if name == "fraction":
        return _Number(name, count, count, fixed=True) if count <= 9 else None
    if name == "offset":
        return _offset(letter, count)
    if count > 2:
        return None  # a month name ('MMM'), or too many letters (Java refuses the pattern)
    return _Number(name, 2, 2, fixed=True) if count == 2 else _Number(name, 1, 19, fixed=False)


def _offset(letter: str, count: int) -> _Offset | None:
    """OffsetIdPrinterParser as a regex group: the no-offset text first, as Java tries it, then a signed offset;
    atomic, as Java keeps what it parsed."""
    signed = {
        1: r"[+-]\d{2}(?:\d{2})?",
        2: r"[+-]\d{4}",
        3: r"[+-]\d{2}:\d{2}",
        4: r"[+-]\d{4}(?:\d{2})?",
        5: r"[+-]\d{2}:\d{2}(?::\d{2})?",
    }
    if letter == "Z":
        if count == 4:
            return None  # the localized 'GMT+08:00'
        signed[1] = signed[2] = signed[3] = signed[2]
        none = "+0000" if count <= 3 else "Z"
    elif letter == "X":
        none = "Z"
    else:
        none = {1: "+00", 2: "+0000", 3: "+00:00", 4: "+0000", 5: "+00:00"}.get(count, "")
    if count not in signed:
        return None
    return _Offset(f"(?>{_literal(none)}|{signed[count]})")


def java_time(pattern: str) -> Compiled | None:
    """DateTimeFormatter.ofPattern(pattern) as Flink parses with it (the whole text must match), or None."""
    tokens = _tokens(pattern, sections=True)
    if tokens is None:
        return None
    stack = [_Builder()]
    for kind, text, count in tokens:
        if kind == "[":
            stack[-1].close_run()
            stack.append(_Builder())
        elif kind == "]":
            if len(stack) == 1:
                return None
            section = stack.pop()
            section.close_run()
            stack[-1].other(section)
        elif kind == "literal":
            stack[-1].other(_literal(text))
        else:
            part = _java_time_part(text, count)
            if part is None:
                return None
            if isinstance(part, _Offset):
                stack[-1].other(part)
            else:
                stack[-1].number(part)
    if len(stack) != 1:
        return None
    stack[0].close_run()
    fields: list[_Number | _Offset] = []
    regex = _render(stack[0], fields)
    names = [f.field for f in fields]
    if not names or len(set(names)) != len(names) or {"year", "year_of_era"} <= set(names):
        return None  # no field, or one set twice (Java checks the values agree): not compiled
    years = [f for f in fields if isinstance(f, _Number) and f.field in ("year", "year_of_era")]
    return Compiled(
        f"^{regex}\\z",
        {f.field: f.group for f in fields},
        len(fields),
        fraction_digits=next((f.high for f in fields if isinstance(f, _Number) and f.field == "fraction"), 0),
        two_digit_year=bool(years) and years[0].high == 2,
    )


def _render(builder: _Builder, fields: list[_Number | _Offset]) -> str:
    """The regex of a builder's parts, numbering the fields' groups in order of appearance."""
    out = []
    for part in builder.parts:
        if isinstance(part, _Builder):
            out.append(f"(?>(?:{_render(part, fields)})?)")
        elif isinstance(part, str):
            out.append(part)
        else:
            fields.append(part)
            part.group = len(fields)
            out.append(_number(part) if isinstance(part, _Number) else f"({part.regex})")
    return "".join(out)


def _number(n: _Number) -> str:
    """NumberPrinterParser.parse in strict mode: a fixed width takes that many digits; a variable width reads
    greedily, giving back only the widths adjacent fixed-width values reserved (then no digit may follow them)."""
    reserved = n.subsequent > 0 and not n.fixed
    possessive = "" if reserved else "+"
    if n.fixed:
        digits = f"\\d{{{n.high}}}"
    elif n.exceeds_pad:
        exact = f"\\d{{{n.low}}}" if reserved else f"\\d{{{n.low}}}(?!\\d)"
        digits = f"{exact}|\\+\\d{{{n.low + 1},{n.high}}}{possessive}"
    else:
        digits = f"\\d{{{n.low},{n.high}}}{possessive}"
    return f"({digits})" + ("(?!\\d)" if n.last_follower else "")


def _counted_number(count: int) -> str:
    """A number SimpleDateFormat reads when another number follows at once: from the text's first `count`
    characters, the spaces and tabs it skips first among them. The group holds those blanks too."""

    def number(width: int) -> str:
        return r"\d" if width == 1 else f"(?:-\\d{{1,{width - 1}}}+|\\d{{1,{width}}}+)"

    blanks = [f"[ \\t]{{{k}}}(?![ \\t]){number(count - k)}" for k in range(count)]
    return f"((?:{'|'.join(blanks)}))"


def simple_date_format(pattern: str) -> Compiled | None:
    """SimpleDateFormat(pattern).parse as Flink calls it (lenient, from the start of the text, ignoring what
    follows), or None. Before a number it skips spaces and tabs; a number is an optional '-' and digits, at most
    as many characters as the pattern letters when another number follows at once ('yyyyMMdd')."""
    tokens = _tokens(pattern, sections=False)
    if tokens is None:
        return None
    out: list[str] = []
    groups: dict[str, int] = {}
    count_groups = 0
    for index, (kind, text, count) in enumerate(tokens):
        if kind == "literal":
            out.append(_literal(text))
            continue
        name = _SIMPLE_FIELDS.get(text)
        if name is None or (text == "y" and count <= 2) or (text == "M" and count > 2):
            return None  # text fields, or 'yy' (a two-digit year is put in the century around today)
        adjacent = index + 1 < len(tokens) and tokens[index + 1][0] == "field"
        count_groups += 1
        groups[name] = count_groups  # a field given twice: the last one counts, as Calendar.set
        out.append(_counted_number(count) if adjacent else r"[ \t]*+(-?\d++)")
    return Compiled("^" + "".join(out) + r"[\s\S]*", groups, count_groups) if groups else None


def java_time_timestamp(text: exp.Expr, compiled: Compiled) -> exp.Expr:
    """TIMESTAMP of text as DateTimeFormatter.ofPattern parses it (`java_time`), resolved SMART and completed as
    DateTimeUtils.fromTemporalAccessor does: 1970-01-01 00:00:00 for what the pattern lacks, the offset parsed but
    left out, milliseconds kept. A day past the month's end is its last day and 24:00 the next midnight, where the
    pattern has year, month and day (Parsed.resolveDate); else each field must be valid as written."""
    groups = compiled.groups
    year_field = "year" if "year" in groups else "year_of_era"

    def fields(group: Groups) -> exp.Expr:
        def value(name: str, default: int) -> exp.Expr:
            if name not in groups:
                return exp.Literal.number(default)
            return sql(
                "CASE WHEN :g = '' THEN :d ELSE TRY_CAST(:g AS BIGINT) END",
                g=group(groups[name]),
                d=exp.Literal.number(default),
            )

        def given(*names: str) -> exp.Expr:
            present = [exp.NEQ(this=group(groups[n]), expression=exp.Literal.string("")) for n in names if n in groups]
            return exp.and_(*present) if len(present) == len(names) else exp.false()

        year = value(year_field, 1970)
        fraction = group(groups["fraction"]) if "fraction" in groups else exp.Literal.string("")
        values = {
            "y": sql(":y + 2000", y=year) if compiled.two_digit_year else year,
            "m": value("month", 1),
            "d": value("day", 1),
            "h": value("hour", 0),
            "mi": value("minute", 0),
            "s": value("second", 0),
            "us": fraction_micros(fraction, min(compiled.fraction_digits, 3)),
            "zero": exp.RegexpLike(this=fraction.copy(), expression=exp.Literal.string("^0*$")),
            "dated": given(year_field, "month", "day"),
            "timed": given("hour"),
            "offset": _offset_in_range(group(groups["offset"])) if "offset" in groups else exp.true(),
        }
        return with_fields(values, resolved)

    def resolved(f: Callable[[str], exp.Expr]) -> exp.Expr:
        y, m, d, h, mi, s = (f(k) for k in ("y", "m", "d", "h", "mi", "s"))
        last = month_days(y, m)
        day = exp.If(this=f("dated"), true=fn("least", d, last), false=d.copy())
        midnight = exp.and_(
            f("timed"),
            exp.EQ(this=h.copy(), expression=exp.Literal.number(24)),
            exp.EQ(this=mi.copy(), expression=exp.Literal.number(0)),
            exp.EQ(this=s.copy(), expression=exp.Literal.number(0)),
            f("zero"),
        )
        checks = exp.and_(
            between(y.copy(), 0 if year_field == "year" else 1, LAST_YEAR),
            between(m.copy(), 1, 12),
            between(d.copy(), 1, 31),
            exp.LTE(this=day.copy(), expression=last.copy()),
            exp.or_(between(h.copy(), 0, 23), midnight),
            between(mi.copy(), 0, 59),
            between(s.copy(), 0, 59),
            f("offset"),
        )
        # 24:00 is the next day's midnight where the date resolves; without a date it is 00:00 (no day to carry to)
        undated_midnight = exp.and_(exp.EQ(this=h.copy(), expression=exp.Literal.number(24)), exp.not_(f("dated")))
        clock = exp.If(this=undated_midnight, true=exp.Literal.number(0), false=h)
        micros = at(epoch_day(y, m, day), clock, mi, s, f("us"))
        return exp.Case(ifs=[exp.If(this=checks, true=ntz(micros))])

    return matched(text, compiled.regex, compiled.group_count, fields)


def _offset_in_range(offset: exp.Expr) -> exp.Expr:
    """An offset Java takes: minutes and seconds up to 59 and at most 18:00 in all (ZoneOffset); '' when the
    optional section holding it was left out, 'Z' or '+00' for none."""
    digits = fn("regexp_replace", offset, exp.Literal.string("[^0-9]"), exp.Literal.string(""))
    hours, minutes, seconds = (
        sql("coalesce(TRY_CAST(nullif(substr(:d, :at, 2), '') AS INT), 0)", d=digits, at=exp.Literal.number(at))
        for at in (1, 3, 5)
    )
    return sql("(:m < 60 AND :s < 60 AND :h * 3600 + :m * 60 + :s <= 64800)", h=hours, m=minutes, s=seconds)


def simple_date_format_millis(text: exp.Expr, compiled: Compiled) -> exp.Expr:
    """Milliseconds since 1970-01-01 00:00:00 of the local date-time SimpleDateFormat parses (`simple_date_format`),
    NULL where it fails: java.util.GregorianCalendar's lenient sum of the fields (`time_parsing.lenient_day`;
    January 1970 for what the pattern lacks)."""
    groups = compiled.groups

    def fields(group: Groups) -> exp.Expr:
        defaults = {"year": 1970, "month": 1, "day": 1, "hour": 0, "minute": 0, "second": 0, "millis": 0}
        values = {
            name: as_int(fn("translate", group(groups[name]), exp.Literal.string(" \t"), exp.Literal.string("")))
            if name in groups
            else exp.Literal.number(default)
            for name, default in defaults.items()
        }
        return with_fields(values, local)

    def local(f: Callable[[str], exp.Expr]) -> exp.Expr:
        days = lenient_day(f("year"), f("month"), f("day"))
        micros = at(days, f("hour"), f("minute"), f("second"), exp.Literal.number(0))
        return sql(":us DIV 1000 + :ms", us=micros, ms=f("millis"))

    return matched(text, compiled.regex, compiled.group_count, fields)
