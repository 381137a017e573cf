"""Flink's parsing of date-time text, as Spark SQL: TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP and CAST of text to DATE,
TIMESTAMP and TIMESTAMP_LTZ, each giving what Flink 2.3 gives (DateTimeUtils in flink-table-common).

- CAST(text AS TIMESTAMP(p)) and TO_TIMESTAMP(text) (p = 3): DateTimeUtils.parseTimestampData, a strict
  DateTimeFormatter 'yyyy-[MM][M]-[dd][d][ [HH][H]:[mm][m]:[ss][s][.fraction]]' over the whole text, resolved
  SMART: a day past the month's end is its last day (2023-02-29 -> 2023-02-28), 24:00:00 the next midnight.
- CAST(text AS DATE) and TO_DATE(text): DateTimeUtils.parseDate, 'y[-m[-d]]' before the first space, each part
  trimmed, the date valid as written.
- TO_TIMESTAMP(text, pattern): DateTimeFormatter.ofPattern (strict, SMART); if that fails, the trimmed text as
  java.sql.Timestamp.valueOf reads it (with a space) or java.sql.Date.valueOf (without), both lenient: 2023-02-29
  is 2023-03-01.
- UNIX_TIMESTAMP(text [, pattern]) and TO_DATE(text, pattern): a lenient SimpleDateFormat over a prefix of the
  text (13 months is a year and a month), before 1582-10-15 in the Julian calendar as java.util.GregorianCalendar;
  Long.MIN_VALUE (UNIX_TIMESTAMP) or the date Flink makes of it (TO_DATE) when it does not parse.

Each parser matches a Java regular expression (patterns: `connector.sql.rewrite.functions.time_patterns`) and builds
the value from
the groups with integer arithmetic. Lambdas (`bind`) hold the text, the groups and the fields, so that each is
computed once and the SQL stays as long as its parts.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from connector.sql.rewrite.nodes import fn, from_template, struct_field

_TRIM = r"^[\x00-\x20]+|[\x00-\x20]+\z"  # java.lang.String.trim
# DateTimeUtils.DEFAULT_TIMESTAMP_FORMATTER: each [XX][X] field is one run of digits, checked in `_paired`.
_DEFAULT = r"^(\d{4}|\+\d{5,19})-(\d++)-(\d++)(?: (\d++):(\d++):(\d++)(?:\.(\d{0,9}))?)?\z"
# java.sql.Timestamp.valueOf and java.sql.Date.valueOf of trimmed text (Integer.parseInt of each part)
_TIMESTAMP_VALUE_OF = (
    r"^(\d{4}|\+\d{3})-(\d{1,2}|\+\d)-(\d{1,2}|\+\d) ([+-]?\d+):([+-]?\d+):([+-]?\d+)(?:\.(\d{1,9}))?\z"
)
_DATE_VALUE_OF = r"^(\d{4}|\+\d{3})-(\d{1,2}|\+\d)-(\d{1,2}|\+\d)\z"
# DateTimeUtils.parseDate of the text before its first space
_PARSE_DATE = r"^[\x00-\x20]*(\d+)[\x00-\x20]*(?:-[\x00-\x20]*(\d+)[\x00-\x20]*(?:-[\x00-\x20]*(\d+)[\x00-\x20]*)?)?\z"
_MICROS_PER_DAY = 86_400_000_000
LAST_YEAR = 294_247  # the last year of Spark's TIMESTAMP (Flink's reaches 292 million)
_UTC_1900 = -2_208_988_800_000  # 1900-01-01 00:00:00 UTC in milliseconds: java.util.TimeZone's first transition
_STANDARD_PROBES = (1_894_665_600_000, 1_910_304_000_000)  # 2030-01-15 and 2030-07-15 00:00:00 UTC, in milliseconds
_GREGORIAN_START = -141_427  # 1582-10-15, GregorianCalendar's default cutover, in days since 1970-01-01


def sql(template: str, **args: exp.Expr) -> exp.Expr:
    """`rewriting.from_template`, each argument an operand however it binds: a placeholder takes a whole tree, and
    sqlglot writes `a - (b + c)` built as a tree without the parentheses."""
    wrapped = {k: exp.paren(v) if isinstance(v, (exp.Binary, exp.Unary, exp.Between)) else v for k, v in args.items()}
    return from_template(template, **wrapped)


def bind(value: exp.Expr, name: str, body: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    """`body` of a variable holding `value`, so that `value` is computed once however often `body` reads it. The
    lambda is transform_values', which Spark evaluates without generating code for it: generated code for these
    parsers would pass the JVM's 64 KB per method with a few of them in one projection."""
    variable = exp.column(name)
    arguments = [exp.to_identifier(f"{name}_key"), exp.to_identifier(name)]
    lambda_ = exp.Lambda(this=body(variable), expressions=arguments)
    bound = fn("map", exp.Literal.number(0), value)
    return fn("element_at", fn("transform_values", bound, lambda_), exp.Literal.number(0))


Groups = Callable[[int], exp.Expr]  # the text of a regex group, by number


def matched(text: exp.Expr, regex: str, groups: int, body: Callable[[Groups], exp.Expr]) -> exp.Expr:
    """`body` of the groups of `regex` in `text` ('' for a group that took no part), NULL when it does not match."""
    pattern = exp.Literal.string(regex)

    def found(t: exp.Expr) -> exp.Expr:
        extracted = [
            fn("regexp_extract", t.copy(), pattern.copy(), exp.Literal.number(i)) for i in range(1, groups + 1)
        ]
        struct = fn(
            "named_struct", *[part for i, v in enumerate(extracted, 1) for part in (exp.Literal.string(f"g{i}"), v)]
        )
        matches = exp.RegexpLike(this=t.copy(), expression=pattern.copy())
        return bind(
            exp.Case(ifs=[exp.If(this=matches, true=struct)]),
            "__groups",
            lambda g: body(lambda i: struct_field(g, f"g{i}")),
        )

    return bind(text, "__matched", found)


def with_fields(
    values: dict[str, exp.Expr], body: Callable[[Callable[[str], exp.Expr]], exp.Expr], name: str = "__fields"
) -> exp.Expr:
    """`body` of named values computed once (a struct bound to variable `name`, which must differ from the names
    `body` reads of enclosing bindings): `body` reads each value by its name."""
    struct = fn("named_struct", *[part for k, v in values.items() for part in (exp.Literal.string(k), v)])
    return bind(struct, name, lambda f: body(lambda field: struct_field(f, field)))


def as_int(value: exp.Expr) -> exp.Expr:
    """A group's number; NULL for '' or one past BIGINT (where Java's Integer.parseInt fails)."""
    return exp.TryCast(this=value, to=exp.DataType.build("BIGINT"), safe=True)


def epoch_day(year: exp.Expr, month: exp.Expr, day: exp.Expr, julian: bool = False) -> exp.Expr:
    """Days since 1970-01-01 of a date (month 1 to 12) in the proleptic Gregorian calendar, with Java's integer
    division as DateTimeUtils.ymdToJulian, or in the Julian calendar."""
    centuries = "" if julian else " - (:y + 4800 - (14 - :m) DIV 12) DIV 100 + (:y + 4800 - (14 - :m) DIV 12) DIV 400"
    return sql(
        "(:d + (153 * (:m + 12 * ((14 - :m) DIV 12) - 3) + 2) DIV 5 + 365 * (:y + 4800 - (14 - :m) DIV 12)"
        f" + (:y + 4800 - (14 - :m) DIV 12) DIV 4{centuries} - {32083 if julian else 32045} - 2440588)",
        y=year,
        m=month,
        d=day,
    )


def month_days(year: exp.Expr, month: exp.Expr) -> exp.Expr:
    """The days of a month (1 to 12) of the proleptic Gregorian calendar, which java.time's dates follow."""
    return sql(
        "CASE WHEN :m = 2 THEN CASE WHEN :y % 4 = 0 AND (:y % 100 != 0 OR :y % 400 = 0) THEN 29 ELSE 28 END"
        " ELSE 30 + (:m + :m DIV 8) % 2 END",
        y=year,
        m=month,
    )


def lenient_day(year: exp.Expr, month: exp.Expr, day: exp.Expr) -> exp.Expr:
    """Days since 1970-01-01 of year-month-day as a lenient java.util.GregorianCalendar counts them: a month and a
    day out of range carried over (month 13 is January of the next year, day 0 the last day of the month before),
    in the Julian calendar before 1582-10-15."""

    def counted(f: Callable[[str], exp.Expr]) -> exp.Expr:
        carried = sql("(:y + floor((:m - 1) / 12))", y=f("y"), m=f("m"))
        month_of_year = sql("(pmod(:m - 1, 12) + 1)", m=f("m"))
        gregorian, julian = (
            sql("(:first + :d - 1)", first=epoch_day(carried, month_of_year, exp.Literal.number(1), j), d=f("d"))
            for j in (False, True)
        )
        return exp.If(
            this=exp.GTE(this=gregorian, expression=exp.Literal.number(_GREGORIAN_START)),
            true=gregorian.copy(),
            false=julian,
        )

    return with_fields({"y": year, "m": month, "d": day}, counted)


def session_instant(local_millis: exp.Expr) -> exp.Expr:
    """Milliseconds since the epoch of a local date-time (`local_millis` since 1970-01-01 00:00:00) in the session
    time zone as GregorianCalendar resolves it with java.util.TimeZone: a time a clock set back passes twice is
    the later instant (Spark's to_utc_timestamp takes the earlier), a time a clock set forward skips is read in
    the offset before, and before 1900 the zone's standard offset of today holds (TimeZone keeps no transitions
    before 1900, such as the end of local mean time; its standard offset is taken as the lesser of January's and
    July's)."""

    def resolved(local: exp.Expr) -> exp.Expr:
        def later(f: Callable[[str], exp.Expr]) -> exp.Expr:
            standard = fn("least", *(_offset_millis(exp.Literal.number(at)) for at in _STANDARD_PROBES))
            return sql(
                "CASE WHEN :early < :y1900 THEN :local - :standard"
                " WHEN :late > :early AND unix_millis(from_utc_timestamp(timestamp_millis(:late),"
                " current_timezone())) = :local THEN :late ELSE :early END",
                early=f("early"),
                late=f("late"),
                local=local,
                y1900=exp.Literal.number(_UTC_1900),
                standard=standard,
            )

        early = sql("unix_millis(to_utc_timestamp(timestamp_millis(:l), current_timezone()))", l=local)
        # the offset in force three hours on, past a clock set back
        late = sql(":l - :offset", l=local, offset=_offset_millis(sql(":e + 10800000", e=early)))
        return with_fields({"early": early, "late": late}, later)

    return bind(local_millis, "__local", resolved)


def _offset_millis(instant: exp.Expr) -> exp.Expr:
    """The session time zone's offset from UTC at an instant (milliseconds since the epoch), in milliseconds."""
    return sql("(unix_millis(from_utc_timestamp(timestamp_millis(:i), current_timezone())) - :i)", i=instant)


def _calendar_timestamp(micros: exp.Expr) -> exp.Expr:
    """The TIMESTAMP of a java.util.Date's fields (Timestamp.toLocalDateTime) at `micros` since 1970-01-01 in
    GregorianCalendar's reckoning: before 1582-10-15 the Julian year, month and day, which must be a valid ISO date
    (1500-02-29 is not), a year before 1 counted back from 1 (year 0 is 1 BC, read as 1)."""

    def fields(us: exp.Expr) -> exp.Expr:
        day = sql("floor(:us / :per_day)", us=us, per_day=exp.Literal.number(_MICROS_PER_DAY))
        julian = {
            "c": sql("(:day + 2440588 + 32082)", day=day),
            "us": sql(
                ":us - :day * :per_day", us=us.copy(), day=day.copy(), per_day=exp.Literal.number(_MICROS_PER_DAY)
            ),
            "day": day.copy(),
        }
        return with_fields(julian, lambda f: _julian_date(f, us))

    return bind(micros, "__micros", fields)


def _julian_date(f: Callable[[str], exp.Expr], micros: exp.Expr) -> exp.Expr:
    """`micros` as a TIMESTAMP of its fields: the Gregorian ones from 1582-10-15, the Julian ones before (the
    calendar date of the Julian day number)."""
    c = f("c")
    d = sql("(4 * :c + 3) DIV 1461", c=c)
    e = sql("(:c - 1461 * :d DIV 4)", c=c, d=d)
    m = sql("((5 * :e + 2) DIV 153)", e=e)
    day = sql(":e - (153 * :m + 2) DIV 5 + 1", e=e, m=m)
    month = sql(":m + 3 - 12 * (:m DIV 10)", m=m)
    year = sql(":d - 4800 + :m DIV 10", d=d, m=m)

    def iso(j: Callable[[str], exp.Expr]) -> exp.Expr:
        y = sql("CASE WHEN :y < 1 THEN 1 - :y ELSE :y END", y=j("y"))
        valid = exp.LTE(this=j("d"), expression=month_days(y, j("m")))
        moved = ntz(
            sql(
                ":day * :per_day + :us",
                day=epoch_day(y, j("m"), j("d")),
                per_day=exp.Literal.number(_MICROS_PER_DAY),
                us=f("us"),
            )
        )
        return exp.Case(ifs=[exp.If(this=valid, true=moved)])

    gregorian = exp.GTE(this=f("day"), expression=exp.Literal.number(_GREGORIAN_START))
    return exp.If(
        this=gregorian, true=ntz(micros.copy()), false=with_fields({"y": year, "m": month, "d": day}, iso, "__julian")
    )


def ntz(micros: exp.Expr) -> exp.Expr:
    """The TIMESTAMP_NTZ `micros` microseconds after 1970-01-01 00:00:00 (Spark's TIMESTAMP holds microseconds)."""
    return fn("timestampadd", exp.var("MICROSECOND"), micros, sql("TIMESTAMP_NTZ '1970-01-01 00:00:00'"))


def at(day: exp.Expr, hour: exp.Expr, minute: exp.Expr, second: exp.Expr, micros: exp.Expr) -> exp.Expr:
    """Microseconds since 1970-01-01 00:00:00 of a day and a time of day (its fields may be out of range)."""
    return sql(
        "(:day * :per_day + ((:h * 60 + :mi) * 60 + :s) * 1000000 + :us)",
        day=day,
        per_day=exp.Literal.number(_MICROS_PER_DAY),
        h=hour,
        mi=minute,
        s=second,
        us=micros,
    )


def fraction_micros(digits: exp.Expr, kept: int) -> exp.Expr:
    """Microseconds of fraction digits ('5' is 500000), cut to `kept` digits (Flink floors to the precision)."""
    if kept == 0:
        return exp.Literal.number(0)
    kept_digits = fn("substr", digits, exp.Literal.number(1), exp.Literal.number(min(kept, 6)))
    return as_int(fn("rpad", kept_digits, exp.Literal.number(6), exp.Literal.string("0")))


def _paired(run: exp.Expr) -> exp.Expr:
    """The value of a DateTimeFormatter '[XX][X]' field from its run of digits, NULL where Java fails: one digit
    is [X]; more are [XX] then [X] reading the rest (up to 19 digits), which must be the same value ('011' is 1,
    '012' fails)."""
    return sql(
        "CASE WHEN length(:r) <= 2 OR (length(:r) <= 21 AND TRY_CAST(substr(:r, 3) AS DECIMAL(20, 0))"
        " = TRY_CAST(substr(:r, 1, 2) AS BIGINT)) THEN TRY_CAST(substr(:r, 1, 2) AS BIGINT) END",
        r=run,
    )


def between(value: exp.Expr, low: int, high: int) -> exp.Expr:
    """`value` BETWEEN `low` AND `high`: NULL, so failing the check, when `value` is."""
    return exp.Between(this=value, low=exp.Literal.number(low), high=exp.Literal.number(high))


def flink_timestamp(text: exp.Expr, precision: int) -> exp.Expr:
    """TIMESTAMP of text as DateTimeUtils.parseTimestampData(text, precision) reads it; NULL where Flink fails."""

    def fields(group: Groups) -> exp.Expr:
        timed = exp.NEQ(this=group(4), expression=exp.Literal.string(""))  # else the time of day is 00:00:00

        def clock(i: int) -> exp.Expr:
            return exp.Case(ifs=[exp.If(this=timed.copy(), true=_paired(group(i)))], default=exp.Literal.number(0))

        values = {
            "y": as_int(group(1)),
            "m": _paired(group(2)),
            "d": _paired(group(3)),
            "h": clock(4),
            "mi": clock(5),
            "s": clock(6),
            "zero": exp.RegexpLike(this=group(7), expression=exp.Literal.string("^0*$")),
            "us": fraction_micros(group(7), precision),
        }
        return with_fields(values, resolved)

    def resolved(f: Callable[[str], exp.Expr]) -> exp.Expr:
        y, m, d, h, mi, s = (f(k) for k in ("y", "m", "d", "h", "mi", "s"))
        day = epoch_day(y, m, fn("least", d, month_days(y, m)))
        midnight = exp.and_(
            exp.EQ(this=h.copy(), expression=exp.Literal.number(24)),
            exp.EQ(this=mi.copy(), expression=exp.Literal.number(0)),
            exp.EQ(this=s.copy(), expression=exp.Literal.number(0)),
            f("zero"),
        )
        valid = exp.and_(
            between(y.copy(), 1, LAST_YEAR),
            between(m.copy(), 1, 12),
            between(d.copy(), 1, 31),
            exp.or_(between(h.copy(), 0, 23), midnight),
            between(mi.copy(), 0, 59),
            between(s.copy(), 0, 59),
        )
        # 24:00:00 is 24 hours after the day's start: the next midnight
        micros = at(day, h, mi, s, f("us"))
        return exp.Case(ifs=[exp.If(this=valid, true=ntz(micros))])

    return matched(text, _DEFAULT, 7, fields)


def flink_date(text: exp.Expr) -> exp.Expr:
    """DATE of text as DateTimeUtils.parseDate(text) reads it, NULL where Flink's is (also for a number past INT,
    where Flink's Integer.parseInt fails the query)."""
    before_space = sql("CASE WHEN instr(:t, ' ') > 1 THEN substring_index(:t, ' ', 1) ELSE :t END", t=text)

    def date(group: Groups) -> exp.Expr:
        y, m, d = (sql("CASE WHEN :g = '' THEN 1 ELSE TRY_CAST(:g AS INT) END", g=group(i)) for i in (1, 2, 3))
        valid = exp.and_(between(y, 0, 9999), between(m, 1, 12), between(d, 1, 31))
        fits = exp.LTE(this=d.copy(), expression=month_days(y, m))
        day = fn("date_from_unix_date", epoch_day(y, m, d))
        return exp.Case(ifs=[exp.If(this=exp.and_(valid, fits), true=day)])

    return bind(before_space, "__date", lambda t: matched(t, _PARSE_DATE, 3, date))


def value_of(text: exp.Expr) -> exp.Expr:
    """java.sql.Timestamp.valueOf (text with a space) or java.sql.Date.valueOf (without) of trimmed text, the
    value's fields carried over as the deprecated java.util.Date constructor does; nanoseconds kept to
    microseconds. DateTimeUtils.parseTimestampData(text, format) falls back to these."""

    def timestamp(group: Groups) -> exp.Expr:
        y, m, d, h, mi, s = (as_int(group(i)) for i in range(1, 7))
        valid = exp.and_(between(m, 1, 12), between(d, 1, 31))
        micros = at(lenient_day(y, m, d), h, mi, s, fraction_micros(group(7), 6))
        return exp.Case(ifs=[exp.If(this=valid, true=_calendar_timestamp(micros))])

    def date(group: Groups) -> exp.Expr:
        y, m, d = (as_int(group(i)) for i in (1, 2, 3))
        valid = exp.and_(between(m, 1, 12), between(d, 1, 31))
        micros = at(lenient_day(y, m, d), *(exp.Literal.number(0) for _ in range(4)))
        return exp.Case(ifs=[exp.If(this=valid, true=_calendar_timestamp(micros))])

    def parsed(t: exp.Expr) -> exp.Expr:
        spaced = exp.GT(this=fn("instr", t, exp.Literal.string(" ")), expression=exp.Literal.number(0))
        return exp.If(
            this=spaced, true=matched(t, _TIMESTAMP_VALUE_OF, 7, timestamp), false=matched(t, _DATE_VALUE_OF, 3, date)
        )

    trimmed = fn("regexp_replace", text, exp.Literal.string(_TRIM), exp.Literal.string(""))
    return bind(trimmed, "__trimmed", parsed)
