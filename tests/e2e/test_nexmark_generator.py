"""The Python port of Nexmark's generator (connector/dev/nexmark) against Java's: SplittableRandom's numbers, then
whole events, compiled at test time from Nexmark's own sources (../shared/nexmark) and Flink's json format."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from connector.dev.nexmark import NexmarkConfig, events, produce, to_json
from connector.dev.nexmark.splittable_random import DefaultGen, SplittableRandom
from connector.dev.produce import ProduceError

REPO = Path(__file__).resolve().parents[2]
NEXMARK = REPO.parent / "shared" / "nexmark"
JAVA_TIMEOUT_SECONDS = 120

BOUNDS = (1, 2, 13, 26, 100, 10_000, 1 << 30, (1 << 30) + 1, (1 << 31) - 2)
SEEDS = (0, 42, -1, -(1 << 63), (1 << 63) - 1, 1_700_000_000_000)

RANDOM_PROGRAM = """
import java.lang.reflect.Field;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/** SplittableRandom's numbers: a line per seed, then one of unseeded randoms from `defaultGen` = the last arg. */
public class RandomNumbers {
    public static void main(String[] args) throws Exception {
        int[] bounds = {%(bounds)s};
        StringBuilder out = new StringBuilder();
        for (int s = 0; s < args.length - 1; s++) {
            SplittableRandom random = new SplittableRandom(Long.parseLong(args[s]));
            for (int i = 0; i < 50; i++) out.append(random.nextInt()).append(' ');
            for (int bound : bounds) for (int i = 0; i < 20; i++) out.append(random.nextInt(bound)).append(' ');
            for (int i = 0; i < 50; i++) out.append(random.nextLong()).append(' ');
            for (int i = 0; i < 50; i++) out.append(Double.doubleToRawLongBits(random.nextDouble())).append(' ');
            out.append('\\n');
        }
        Field defaultGen = SplittableRandom.class.getDeclaredField("defaultGen");
        defaultGen.setAccessible(true);
        ((AtomicLong) defaultGen.get(null)).set(Long.parseLong(args[args.length - 1]));
        for (int i = 0; i < 2000; i++) {
            SplittableRandom random = new SplittableRandom();
            out.append(random.nextLong()).append(' ').append(random.nextInt(1000)).append(' ');
        }
        System.out.println(out);
    }
}
"""

# Nexmark's NexmarkUtils is neither among the generator's sources nor published on Maven Central: the members
# that NexmarkConfiguration and GeneratorConfig use, as Nexmark has them (stepLengthSec changes no event).
NEXMARK_UTILS = """
package com.github.nexmark.flink.utils;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

public class NexmarkUtils {
    public static final ObjectMapper MAPPER = new ObjectMapper();

    public enum RateUnit { PER_SECOND, PER_MINUTE }

    public enum RateShape {
        SQUARE, SINE;

        public int stepLengthSec(int ratePeriodSec) {
            int n = this == SQUARE ? 2 : 10;
            return (ratePeriodSec + n - 1) / n;
        }
    }
}
"""

EVENTS_PROGRAM = """
import com.github.nexmark.flink.NexmarkConfiguration;
import com.github.nexmark.flink.generator.GeneratorConfig;
import com.github.nexmark.flink.generator.NexmarkGenerator;
import com.github.nexmark.flink.model.Event;
import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.formats.common.TimestampFormat;
import org.apache.flink.formats.json.JsonFormatOptions;
import org.apache.flink.formats.json.JsonRowDataSerializationSchema;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;

/**
 * Nexmark's generator as its Flink source runs it, the subtasks' generators taking turns; each event as Flink's
 * json format (its defaults) writes it as a row of the given type.
 * Args: defaultGen, count, baseTime, firstEventId, firstEventNumber, row type, NexmarkConfiguration field=value...
 */
public class NexmarkEvents {
    public static void main(String[] args) throws Exception {
        Field defaultGen = SplittableRandom.class.getDeclaredField("defaultGen");
        defaultGen.setAccessible(true);
        ((AtomicLong) defaultGen.get(null)).set(Long.parseLong(args[0]));
        NexmarkConfiguration conf = new NexmarkConfiguration();
        for (int i = 6; i < args.length; i++) {
            String[] setting = args[i].split("=", 2);
            Field field = NexmarkConfiguration.class.getField(setting[0]);
            if (field.getType() == int.class) {
                field.setInt(conf, Integer.parseInt(setting[1]));
            } else {
                field.setLong(conf, Long.parseLong(setting[1]));
            }
        }
        // NexmarkTableSourceFactory's config, split by NexmarkSource.getSplits, reconfigured by NexmarkSourceReader.
        GeneratorConfig config = new GeneratorConfig(conf, Long.parseLong(args[2]), Long.parseLong(args[3]),
            Long.parseLong(args[1]), conf.stopAtEvent, Long.parseLong(args[4]));
        List<NexmarkGenerator> generators = new ArrayList<>();
        for (GeneratorConfig split : config.split(conf.numEventGenerators)) {
            generators.add(new NexmarkGenerator(split.reconfigure(config, config.isSourceIgnoreStop())));
        }
        List<Event> events = new ArrayList<>();
        for (boolean more = true; more; ) {
            more = false;
            for (NexmarkGenerator generator : generators) {
                if (generator.hasNext()) {
                    events.add(generator.next().event);
                    more = true;
                }
            }
        }
        // Flink's classes load only now, so that nothing but Nexmark's draws from defaultGen.
        RowType type = (RowType) LogicalTypeParser.parse(args[5], NexmarkEvents.class.getClassLoader());
        JsonRowDataSerializationSchema json = new JsonRowDataSerializationSchema(
            type, TimestampFormat.SQL, JsonFormatOptions.MapNullKeyMode.FAIL, "null", false, false);
        json.open(null);
        OutputStream out = new BufferedOutputStream(System.out);
        for (Event event : events) {
            out.write(json.serialize(row(event, type)));
            out.write('\\n');
        }
        out.flush();
    }

    /** RowDataEventDeserializer's conversion, by the row type's field names. */
    private static RowData row(Event event, RowType type) throws ReflectiveOperationException {
        GenericRowData row = new GenericRowData(type.getFieldCount());
        for (int i = 0; i < type.getFieldCount(); i++) {
            String name = type.getFieldNames().get(i);
            Object model = name.equals("person") ? event.newPerson
                : name.equals("auction") ? event.newAuction : name.equals("bid") ? event.bid : null;
            if (name.equals("event_type")) {
                row.setField(i, event.type.value);
            } else if (model != null) {
                row.setField(i, fields(model, (RowType) type.getTypeAt(i)));
            }
        }
        return row;
    }

    private static RowData fields(Object model, RowType type) throws ReflectiveOperationException {
        GenericRowData row = new GenericRowData(type.getFieldCount());
        for (int i = 0; i < type.getFieldCount(); i++) {
            Object value = model.getClass().getField(type.getFieldNames().get(i)).get(model);
            row.setField(i, value instanceof String ? StringData.fromString((String) value)
                : value instanceof Instant ? TimestampData.fromInstant((Instant) value) : value);
        }
        return row;
    }
}
"""


def _java_tools() -> tuple[str, str]:
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("needs a JDK (javac and java on PATH) to run Java's SplittableRandom and Nexmark's generator")
    return javac, java


def _run(command: Sequence[str], what: str) -> str:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=JAVA_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, f"{what} failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
    return done.stdout


def _compile(javac: str, sources: Sequence[Path], classes: Path, classpath: Sequence[Path] = ()) -> None:
    command = [javac, "-nowarn", "-encoding", "UTF-8", "-d", str(classes)]
    if classpath:
        command += ["-cp", ":".join(map(str, classpath))]
    _run([*command, *map(str, sources)], "javac")


def test_splittable_random_draws_javas_numbers(tmp_path: Path) -> None:
    """Seeded and unseeded (defaultGen) randoms give Java 17's nextInt, nextInt(bound), nextLong, nextDouble."""
    javac, java = _java_tools()
    source = tmp_path / "RandomNumbers.java"
    source.write_text(RANDOM_PROGRAM % {"bounds": ", ".join(map(str, BOUNDS))}, encoding="utf-8")
    _compile(javac, [source], tmp_path)
    default_gen_start = 0x1234_5678_9ABC_DEF0
    args = [*map(str, SEEDS), str(default_gen_start)]
    lines = _run([java, "--add-opens", "java.base/java.util=ALL-UNNAMED", "-cp", str(tmp_path), "RandomNumbers", *args],
                 "RandomNumbers").splitlines()

    assert len(lines) == len(SEEDS) + 1
    for seed, line in zip(SEEDS, lines, strict=False):  # the last line: the unseeded randoms
        random = SplittableRandom(seed)
        ours = [random.next_int() for _ in range(50)]
        ours += [random.next_int_below(bound) for bound in BOUNDS for _ in range(20)]
        ours += [random.next_long() for _ in range(50)]
        ours += [struct.unpack("<q", struct.pack("<d", random.next_double()))[0] for _ in range(50)]
        assert ours == [int(word) for word in line.split()], f"seed {seed}"
    default_gen = DefaultGen(default_gen_start)
    unseeded = []
    for _ in range(2000):
        random = default_gen.new_random()
        unseeded += [random.next_long(), random.next_int_below(1000)]
    assert unseeded == [int(word) for word in lines[len(SEEDS)].split()]
    with pytest.raises(ValueError, match="bound"):
        SplittableRandom(1).next_int_below(0)  # Java: IllegalArgumentException


@pytest.fixture(scope="module")
def nexmark_java(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int, NexmarkConfig], list[bytes]]:
    """`run(count, config)`: the lines of Nexmark's own generator, compiled once from ../shared/nexmark."""
    javac, java = _java_tools()
    generator_sources = sorted((NEXMARK / "generator").rglob("*.java"))
    if not generator_sources or not (NEXMARK / "queries" / "ddl_kafka.sql").is_file():
        pytest.skip(f"needs Nexmark's generator sources and queries at {NEXMARK} (the shared reference material)")
    libs = sorted(REPO.glob(".flink-venv/lib/python3*/site-packages/pyflink/lib"))
    jars = [jar for lib in libs[:1] for pattern in ("flink-dist-*", "flink-json-*", "flink-table-api-java-uber-*")
            for jar in lib.glob(f"{pattern}.jar")]
    if len(jars) != 3:
        pytest.skip(f"needs PyFlink's jars (flink-dist, flink-json, table API), `make .flink-venv/.installed`: "
                    f"not found under {REPO / '.flink-venv'}")
    work = tmp_path_factory.mktemp("nexmark-java")
    utils = work / "src" / "com" / "github" / "nexmark" / "flink" / "utils" / "NexmarkUtils.java"
    utils.parent.mkdir(parents=True)
    utils.write_text(NEXMARK_UTILS, encoding="utf-8")
    program = work / "src" / "NexmarkEvents.java"
    program.write_text(EVENTS_PROGRAM, encoding="utf-8")
    classes = work / "classes"
    _compile(javac, [*generator_sources, utils, program], classes, jars)
    classpath = ":".join(map(str, [classes, *jars]))
    row_type = _ddl_row_type()

    def run(count: int, config: NexmarkConfig) -> list[bytes]:
        values = asdict(config)
        settings = [f"{_camel(f.name)}={values[f.name]}" for f in fields(config)
                    if f.name not in ("seed", "base_time_ms", "first_event_id", "first_event_number")]
        args = [config.seed, count, config.base_time_ms, config.first_event_id, config.first_event_number, row_type]
        command = [java, "--add-opens", "java.base/java.util=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-cp",
                   classpath, "NexmarkEvents", *map(str, args), *settings]
        done = subprocess.run(command, capture_output=True, timeout=JAVA_TIMEOUT_SECONDS, check=False)
        assert done.returncode == 0, f"Nexmark's generator failed:\n{done.stderr.decode()[-3000:]}"
        return done.stdout.splitlines()

    return run


def _ddl_row_type() -> str:
    """ddl_kafka.sql's physical columns as one ROW type (its bare VARCHAR is STRING, as Flink's DDL reads it)."""
    ddl = (NEXMARK / "queries" / "ddl_kafka.sql").read_text(encoding="utf-8")
    found = re.search(r"CREATE TABLE kafka \((.*?),\s*`dateTime` AS", ddl, re.S)
    assert found is not None, "ddl_kafka.sql: no physical columns before the computed `dateTime`"
    return "ROW<" + re.sub(r"\bVARCHAR\b(?!\s*\()", "STRING", found.group(1)) + ">"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


JAVA_CASES = {
    "defaults": (20_000, NexmarkConfig(seed=42)),
    # 3 generators in turn, out-of-order groups, never hot (ratio 1), few active people, persons without extra
    "split-shuffled": (
        6_000,
        NexmarkConfig(
            seed=-7, first_event_rate=1_000, num_event_generators=3, person_proportion=2, auction_proportion=5,
            bid_proportion=13, avg_person_byte_size=30, avg_auction_byte_size=300, avg_bid_byte_size=40,
            hot_auction_ratio=1, hot_sellers_ratio=1, hot_bidders_ratio=1, num_in_flight_auctions=7,
            num_active_people=50, out_of_order_group_size=7, first_event_id=0, first_event_number=0, base_time_ms=0,
        ),
    ),
    # bids first (BidGenerator's statics before StringsGenerator's), ids from Java's truncating division of -1
    "bids-only": (3_000, NexmarkConfig(seed=(1 << 63) - 1, person_proportion=0, auction_proportion=0)),
    # extras longer than half the reusable string: characters from the event's own random
    "long-extras": (12, NexmarkConfig(seed=5, person_proportion=1, auction_proportion=1, bid_proportion=1,
                                      avg_person_byte_size=700_000, avg_auction_byte_size=600_000)),
}


@pytest.mark.parametrize("case", list(JAVA_CASES))
def test_events_equal_nexmarks_java_generator_as_flinks_json_writes_them(
    case: str, nexmark_java: Callable[[int, NexmarkConfig], list[bytes]]
) -> None:
    """Byte for byte: event types, ids, times, strings, prices, urls, extras, and Flink's json text of them."""
    count, config = JAVA_CASES[case]
    java = nexmark_java(count, config)
    ours = [to_json(event) for event in events(count, config)]
    assert len(java) == count
    mismatch = next((i for i, (a, b) in enumerate(zip(ours, java, strict=True)) if a != b), None)
    assert mismatch is None, f"event {mismatch}:\nPython {ours[mismatch][:600]!r}\nJava   {java[mismatch][:600]!r}"


def test_the_same_seed_gives_the_same_events_another_seed_others() -> None:
    first = list(events(3_000, NexmarkConfig(seed=1)))
    assert first == list(events(3_000, NexmarkConfig(seed=1)))
    other = list(events(3_000, NexmarkConfig(seed=2)))
    assert other != first
    assert [e["event_type"] for e in other] == [e["event_type"] for e in first]  # kinds and ids are arithmetic


def test_proportions_ids_and_times_follow_nexmarks_rules() -> None:
    """1:3:46 exactly per 50 ids; consecutive person and auction ids; event n at base + n / rate.

    Ids start at 1001, not FIRST_PERSON_ID (1000): Flink's source starts at event id 1 + event number 1.
    """
    config = NexmarkConfig()
    stream = list(events(50_000, config))
    assert Counter(e["event_type"] for e in stream) == {0: 1_000, 1: 3_000, 2: 46_000}
    assert [e["person"]["id"] for e in stream if e["person"]] == list(range(1001, 2001))
    assert [e["auction"]["id"] for e in stream if e["auction"]] == list(range(1001, 4001))
    rows = [[e[kind] for kind in ("person", "auction", "bid") if e[kind] is not None] for e in stream]
    assert all(len(row) == 1 for row in rows)
    base = datetime.fromtimestamp(config.base_time_ms / 1000, tz=timezone.utc)
    last = rows[-1][0]["dateTime"]  # event number 50,000 at 10,000 events/s
    assert last == (base + timedelta(seconds=5)).strftime("%Y-%m-%d %H:%M:%S") == "2023-11-14 22:13:25"


def test_timestamps_are_written_as_flinks_json_format_does() -> None:
    """'yyyy-MM-dd HH:mm:ss' and the milliseconds without trailing zeros (Flink's SQL_TIMESTAMP_FORMAT)."""
    times = [e["bid"]["dateTime"] for e in events(200, NexmarkConfig(first_event_rate=1_000, person_proportion=0,
                                                                     auction_proportion=0))]
    assert times[:2] == ["2023-11-14 22:13:20.001", "2023-11-14 22:13:20.002"]
    assert (times[9], times[99], times[199]) == ("2023-11-14 22:13:20.01", "2023-11-14 22:13:20.1",
                                                 "2023-11-14 22:13:20.2")


@pytest.mark.slow
def test_produce_writes_the_events_round_robin(kafka_bootstrap: str, topic_factory: Callable[..., str]) -> None:
    topic = topic_factory(partitions=3)
    config = NexmarkConfig(seed=3)
    progress: list[int] = []
    assert produce(kafka_bootstrap, topic, 3_000, config, partitions=3, on_progress=progress.append) == 3_000
    assert progress == [3_000]

    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": f"reader-{topic}",
                         "enable.auto.commit": False})
    received: dict[int, list[tuple[int, bytes | None, bytes | None]]] = {0: [], 1: [], 2: []}
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in received])
        deadline = time.monotonic() + 30
        while sum(map(len, received.values())) < 3_000 and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                partition, offset = message.partition(), message.offset()
                assert partition is not None and offset is not None
                received[partition].append((offset, message.key(), message.value()))
    finally:
        consumer.close()

    expected = [to_json(event) for event in events(3_000, config)]
    for partition, records in received.items():
        assert all(key is None for _, key, _ in records)
        assert [value for _, _, value in sorted(records)] == expected[partition::3], f"partition {partition}"
    assert json.loads(expected[0])["auction"]["id"] == 1001


@pytest.mark.slow
def test_produce_names_the_topic_it_cannot_write(kafka_bootstrap: str, topic_factory: Callable[..., str]) -> None:
    with pytest.raises(ProduceError, match="'no-such-nexmark-topic'"):
        produce(kafka_bootstrap, "no-such-nexmark-topic", 10, NexmarkConfig())
    topic = topic_factory(partitions=1)
    with pytest.raises(ProduceError, match=f"'{topic}' has 1 partition"):
        produce(kafka_bootstrap, topic, 10, NexmarkConfig(), partitions=2)
