"""Nexmark's event generator (github.com/nexmark/nexmark, nexmark-flink), ported rule for rule to Python.

Given the same seeds and settings it emits the events of Java's NexmarkGenerator, as Nexmark's Flink source runs
it (NexmarkTableSourceFactory: GeneratorConfig(conf, baseTime, firstEventId 1, events.num, stop, firstEventNumber
1), split over `numEventGenerators` sub-generators). Java's peculiarities are kept on purpose: a bid's bidder adds
FIRST_PERSON_ID twice, Math.abs(Integer.reverse(1)) stays negative in channel 1's url, extras are slices of one
random 1 MiB string. Java's unseeded randoms come from `DefaultGen(seed)` (see there), the one difference.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from connector.dev.nexmark.splittable_random import DefaultGen, SplittableRandom

Event = dict[str, Any]

# GeneratorConfig: ids start there so that queries find matches even in small data sets.
FIRST_AUCTION_ID = 1000
FIRST_PERSON_ID = 1000
FIRST_CATEGORY_ID = 10

_INT_MAX = (1 << 31) - 1
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_US_STATES = ("AZ", "CA", "ID", "OR", "WA", "WY")
_US_CITIES = (
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"
)
_FIRST_NAMES = ("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter")
_LAST_NAMES = ("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris")
_HOT_CHANNELS = ("Google", "Facebook", "Baidu", "Apple")
_PERSON_ID_LEAD = 10  # PersonGenerator
_NUM_CATEGORIES = 5  # AuctionGenerator
_AUCTION_ID_LEAD = 10
_HOT_SELLER_RATIO = 100
_HOT_AUCTION_RATIO = 100  # BidGenerator
_HOT_BIDDER_RATIO = 100
_HOT_CHANNELS_RATIO = 2
_CHANNELS_NUMBER = 10_000
_MIN_STRING_LENGTH = 3  # StringsGenerator
_REUSABLE_EXTRA_LENGTH = 1024 * 1024


@dataclass(frozen=True)
class NexmarkConfig:
    """NexmarkConfiguration's settings that shape the events, with its defaults, plus what Java takes from the
    clock: `base_time_ms` (event time of event number 0) and `seed` (of Java's unseeded randoms; its low 64 bits).

    `first_event_id` and `first_event_number` are GeneratorConfig's, 1 and 1 as Nexmark's Flink source passes them.
    Rate shape, next rate and delay settings of NexmarkConfiguration change no generated value, so are not here.
    """

    first_event_rate: int = 10_000
    num_event_generators: int = 1
    person_proportion: int = 1
    auction_proportion: int = 3
    bid_proportion: int = 46
    avg_person_byte_size: int = 200
    avg_auction_byte_size: int = 500
    avg_bid_byte_size: int = 100
    hot_auction_ratio: int = 2
    hot_sellers_ratio: int = 4
    hot_bidders_ratio: int = 4
    num_in_flight_auctions: int = 100
    num_active_people: int = 1000
    out_of_order_group_size: int = 1
    first_event_id: int = 1
    first_event_number: int = 1
    base_time_ms: int = 1_700_000_000_000
    seed: int = 0

    def __post_init__(self) -> None:
        """Refuse up front what Java fails on mid-stream (a non-positive bound of nextInt, a division by zero)."""
        positive = ("first_event_rate", "num_event_generators", "out_of_order_group_size", "hot_auction_ratio",
                    "hot_sellers_ratio", "hot_bidders_ratio")
        not_negative = ("person_proportion", "auction_proportion", "bid_proportion", "avg_person_byte_size",
                        "avg_auction_byte_size", "avg_bid_byte_size", "num_in_flight_auctions", "num_active_people",
                        "first_event_id", "first_event_number", "base_time_ms")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"NexmarkConfig.{name} must be at least 1, got {getattr(self, name)}")
        for name in not_negative:
            if getattr(self, name) < 0:
                raise ValueError(f"NexmarkConfig.{name} must not be negative, got {getattr(self, name)}")
        if self.person_proportion + self.auction_proportion + self.bid_proportion == 0:
            raise ValueError("NexmarkConfig: the person, auction and bid proportions are all 0")


def _div(a: int, b: int) -> int:
    """Java's integer division, which truncates towards zero (Python's // floors)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _java_round(x: float) -> int:
    """Math.round(double): the closest integer, ties towards positive infinity."""
    floor = int(x // 1)
    return floor + 1 if x - floor >= 0.5 else floor


class _Timeline:
    """GeneratorConfig of one (sub-)generator: its id range and the event time of each event number."""

    __slots__ = ("config", "first_event_id", "inter_event_delay_us", "max_events", "total")

    def __init__(self, config: NexmarkConfig, first_event_id: int, max_events: int) -> None:
        self.config, self.first_event_id, self.max_events = config, first_event_id, max_events
        self.total = config.person_proportion + config.auction_proportion + config.bid_proportion
        self.inter_event_delay_us = 1000000.0 / config.first_event_rate * config.num_event_generators

    def split(self, n: int) -> list[_Timeline]:
        """GeneratorConfig.split: n sub-generators with consecutive id ranges, the last taking the remainder."""
        if n == 1:
            return [self]
        subs, sub_max, sub_first = [], self.max_events // n, self.first_event_id
        for i in range(n):
            if i == n - 1:
                sub_max = self.max_events - sub_max * (n - 1)
            subs.append(_Timeline(self.config, sub_first, sub_max))
            sub_first += sub_max
        return subs

    def next_adjusted_event_number(self, events_so_far: int) -> int:
        """GeneratorConfig.nextAdjustedEventNumber: a fixed shuffle within groups of outOfOrderGroupSize."""
        n = self.config.out_of_order_group_size
        event_number = self.config.first_event_number + events_so_far
        return (event_number // n) * n + (event_number * 953) % n

    def timestamp_for_event(self, event_number: int) -> int:
        """GeneratorConfig.timestampForEvent: baseTime + (long)(eventNumber * interEventDelayUs) / 1000."""
        return self.config.base_time_ms + int(event_number * self.inter_event_delay_us) // 1000


def _last_base0_person_id(t: _Timeline, event_id: int) -> int:
    """PersonGenerator.lastBase0PersonId: the newest person id (base 0) at `event_id`."""
    epoch, offset = divmod(event_id, t.total)
    if offset >= t.config.person_proportion:
        offset = t.config.person_proportion - 1
    return epoch * t.config.person_proportion + offset


def _last_base0_auction_id(t: _Timeline, event_id: int) -> int:
    """AuctionGenerator.lastBase0AuctionId: the newest auction id (base 0) at `event_id`."""
    c = t.config
    epoch, offset = divmod(event_id, t.total)
    if offset < c.person_proportion:
        epoch -= 1
        offset = c.auction_proportion - 1
    elif offset >= c.person_proportion + c.auction_proportion:
        offset = c.auction_proportion - 1
    else:
        offset -= c.person_proportion
    return epoch * c.auction_proportion + offset


def _next_long(random: SplittableRandom, n: int) -> int:
    """LongGenerator.nextLong: [0, n), through nextInt below Integer.MAX_VALUE (Java's skewed % above it)."""
    if n < _INT_MAX:
        return random.next_int_below(n)
    value = random.next_long()
    return abs(value) % n


def _next_base0_person_id(t: _Timeline, event_id: int, random: SplittableRandom) -> int:
    """PersonGenerator.nextBase0PersonId: one of the active people, or a few ids ahead."""
    num_people = _last_base0_person_id(t, event_id) + 1
    active = min(num_people, t.config.num_active_people)
    return num_people - active + _next_long(random, active + _PERSON_ID_LEAD)


def _next_base0_auction_id(t: _Timeline, event_id: int, random: SplittableRandom) -> int:
    """AuctionGenerator.nextBase0AuctionId: one of the auctions likely in flight, or a few ids ahead."""
    max_auction = _last_base0_auction_id(t, event_id)
    min_auction = max(max_auction - t.config.num_in_flight_auctions, 0)
    return min_auction + _next_long(random, max_auction - min_auction + 1 + _AUCTION_ID_LEAD)


def _next_price(random: SplittableRandom) -> int:
    """PriceGenerator.nextPrice: Math.round(10^(6 * nextDouble()) * 100), cents from $1 to $1M."""
    return _java_round(10.0 ** (random.next_double() * 6.0) * 100.0)


def _timestamp_text(ms: int) -> str:
    """A TIMESTAMP(3) as Flink's json format writes it (SQL_TIMESTAMP_FORMAT of the UTC wall clock):
    'yyyy-MM-dd HH:mm:ss', then the fraction without its trailing zeros, if any."""
    seconds, millis = divmod(ms, 1000)
    days, second_of_day = divmod(seconds, 86_400)
    text = f"{_date_text(days)} {second_of_day // 3600:02d}:{second_of_day // 60 % 60:02d}:{second_of_day % 60:02d}"
    return text if millis == 0 else f"{text}.{millis:03d}".rstrip("0")


def _date_text(days: int) -> str:
    """ISO_LOCAL_DATE of a day number since 1970-01-01 (Howard Hinnant's civil_from_days)."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return f"{yoe + era * 400 + (month <= 2):04d}-{month:02d}-{day:02d}"


class _Strings:
    """StringsGenerator, with its REUSABLE_EXTRA_STRING (1 MiB, from an unseeded random when the class loads)."""

    def __init__(self, random: SplittableRandom) -> None:
        self._reusable = ""
        self._reusable = self.next_exact_string(random, _REUSABLE_EXTRA_LENGTH)

    @staticmethod
    def next_string(random: SplittableRandom, max_length: int, special: str = " ") -> str:
        """StringsGenerator.nextString: 3 to max_length - 1 letters, 1 in 13 `special`, then String.trim()."""
        length = _MIN_STRING_LENGTH + random.next_int_below(max_length - _MIN_STRING_LENGTH)
        chars = [special if random.next_int_below(13) == 0 else _LETTERS[random.next_int_below(26)]
                 for _ in range(length)]
        return "".join(chars).strip(" ")

    def next_exact_string(self, random: SplittableRandom, length: int) -> str:
        """StringsGenerator.nextExactString: a slice of the reusable string, or 6 characters per nextInt()
        (Java's `'a' + rnd % 26` of a negative rnd gives 'H' to '`' too)."""
        if self._reusable and length < len(self._reusable) // 2:
            offset = random.next_int_below(len(self._reusable) - length)
            return self._reusable[offset : offset + length]
        chars: list[str] = []
        while len(chars) < length:
            rnd = random.next_int()
            sign, rnd = (1, rnd) if rnd >= 0 else (-1, -rnd)
            for _ in range(min(6, length - len(chars))):
                rnd, digit = divmod(rnd, 26)
                chars.append(chr(97 + sign * digit))
        return "".join(chars)

    def next_extra(self, random: SplittableRandom, current_size: int, desired_average_size: int) -> str:
        """StringsGenerator.nextExtra: padding so that the event's size averages `desired_average_size`."""
        if current_size > desired_average_size:
            return ""
        desired_average_size -= current_size
        delta = _java_round(desired_average_size * 0.2)
        min_size = desired_average_size - delta
        return self.next_exact_string(random, min_size + (0 if delta == 0 else random.next_int_below(2 * delta)))


class _Statics:
    """The generator classes' static state, initialised on first use as the JVM initialises classes, so that each
    draws from `DefaultGen` in Java's order (StringsGenerator's at its first call, BidGenerator's at the first bid,
    which calls nextString and so may load StringsGenerator itself)."""

    def __init__(self, default_gen: DefaultGen) -> None:
        self._default_gen = default_gen
        self._strings: _Strings | None = None
        self._hot_urls: list[str] = []
        self._channel_urls: list[tuple[str, str]] = []

    @property
    def strings(self) -> _Strings:
        """StringsGenerator, loaded (its REUSABLE_EXTRA_STRING drawn) on first use."""
        if self._strings is None:
            self._strings = _Strings(self._default_gen.new_random())
        return self._strings

    def channels(self) -> tuple[list[str], list[tuple[str, str]]]:
        """BidGenerator's HOT_URLS and CHANNEL_URL_CACHE (createChannelUrlCache), from its unseeded random."""
        if not self._hot_urls:
            random = self._default_gen.new_random()
            self._hot_urls = [self._base_url(random) for _ in _HOT_CHANNELS]
            for i in range(_CHANNELS_NUMBER):
                url = self._base_url(random)
                if random.next_int_below(10) > 0:
                    url += f"&channel_id={_abs_int(_reverse_int(i))}"
                self._channel_urls.append((f"channel-{i}", url))
        return self._hot_urls, self._channel_urls

    def _base_url(self, random: SplittableRandom) -> str:
        """BidGenerator.getBaseUrl."""
        parts = [self.strings.next_string(random, 5, "_") for _ in range(3)]
        return f"https://www.nexmark.com/{parts[0]}/{parts[1]}/{parts[2]}/item.htm?query=1"


def _reverse_int(i: int) -> int:
    """Integer.reverse: the 32 bits of `i` in reverse order, as a signed int."""
    bits = int(f"{i & 0xFFFFFFFF:032b}"[::-1], 2)
    return bits - (1 << 32) if bits > _INT_MAX else bits


def _abs_int(i: int) -> int:
    """Math.abs(int), which leaves Integer.MIN_VALUE negative."""
    return i if i == -(1 << 31) else abs(i)


def _person(t: _Timeline, s: _Statics, event_id: int, random: SplittableRandom, timestamp: int) -> Event:
    """PersonGenerator.nextPerson."""
    strings = s.strings
    first_name = _FIRST_NAMES[random.next_int_below(len(_FIRST_NAMES))]
    name = first_name + " " + _LAST_NAMES[random.next_int_below(len(_LAST_NAMES))]
    email = strings.next_string(random, 7) + "@" + strings.next_string(random, 5) + ".com"
    credit_card = " ".join(f"{random.next_int_below(10_000):04d}" for _ in range(4))
    city = _US_CITIES[random.next_int_below(len(_US_CITIES))]
    state = _US_STATES[random.next_int_below(len(_US_STATES))]
    size = 8 + len(name) + len(email) + len(credit_card) + len(city) + len(state)
    extra = strings.next_extra(random, size, t.config.avg_person_byte_size)
    return {"id": _last_base0_person_id(t, event_id) + FIRST_PERSON_ID, "name": name, "emailAddress": email,
            "creditCard": credit_card, "city": city, "state": state, "dateTime": _timestamp_text(timestamp),
            "extra": extra}


def _auction(t: _Timeline, s: _Statics, count: int, event_id: int, random: SplittableRandom, timestamp: int) -> Event:
    """AuctionGenerator.nextAuction (with nextAuctionLengthMs: on average as long as numInFlightAuctions take)."""
    c = t.config
    if random.next_int_below(c.hot_sellers_ratio) > 0:  # the first of the latest HOT_SELLER_RATIO people
        seller = _div(_last_base0_person_id(t, event_id), _HOT_SELLER_RATIO) * _HOT_SELLER_RATIO
    else:
        seller = _next_base0_person_id(t, event_id, random)
    category = FIRST_CATEGORY_ID + random.next_int_below(_NUM_CATEGORIES)
    initial_bid = _next_price(random)
    events_for_auctions = c.num_in_flight_auctions * t.total // c.auction_proportion
    horizon_ms = t.timestamp_for_event(t.next_adjusted_event_number(count) + events_for_auctions) - timestamp
    expires = timestamp + 1 + _next_long(random, max(horizon_ms * 2, 1))
    strings = s.strings
    name = strings.next_string(random, 20)
    description = strings.next_string(random, 100)
    reserve = initial_bid + _next_price(random)
    extra = strings.next_extra(random, 8 + len(name) + len(description) + 40, c.avg_auction_byte_size)
    return {"id": _last_base0_auction_id(t, event_id) + FIRST_AUCTION_ID, "itemName": name,
            "description": description, "initialBid": initial_bid, "reserve": reserve,
            "dateTime": _timestamp_text(timestamp), "expires": _timestamp_text(expires),
            "seller": seller + FIRST_PERSON_ID, "category": category, "extra": extra}


def _bid(t: _Timeline, s: _Statics, event_id: int, random: SplittableRandom, timestamp: int) -> Event:
    """BidGenerator.nextBid."""
    hot_urls, channel_urls = s.channels()  # BidGenerator's class initialisation
    c = t.config
    if random.next_int_below(c.hot_auction_ratio) > 0:  # the first of the latest HOT_AUCTION_RATIO auctions
        auction = _div(_last_base0_auction_id(t, event_id), _HOT_AUCTION_RATIO) * _HOT_AUCTION_RATIO
    else:
        auction = _next_base0_auction_id(t, event_id, random)
    if random.next_int_below(c.hot_bidders_ratio) > 0:  # the second (not a hot seller) of the latest 100 people
        bidder = _div(_last_base0_person_id(t, event_id), _HOT_BIDDER_RATIO) * _HOT_BIDDER_RATIO + 1
    else:
        bidder = _next_base0_person_id(t, event_id, random)
    price = _next_price(random)
    if random.next_int_below(_HOT_CHANNELS_RATIO) > 0:
        i = random.next_int_below(len(_HOT_CHANNELS))
        channel, url = _HOT_CHANNELS[i], hot_urls[i]
    else:
        channel, url = channel_urls[random.next_int_below(_CHANNELS_NUMBER)]
    extra = s.strings.next_extra(random, 32, c.avg_bid_byte_size)
    return {"auction": auction + FIRST_AUCTION_ID, "bidder": bidder + 2 * FIRST_PERSON_ID, "price": price,
            "channel": channel, "url": url, "dateTime": _timestamp_text(timestamp), "extra": extra}


class _Generator:
    """NexmarkGenerator: one timeline's events, from the `new SplittableRandom()` it is constructed with."""

    def __init__(self, timeline: _Timeline, statics: _Statics, random: SplittableRandom) -> None:
        self.timeline, self._statics, self._random = timeline, statics, random
        self.count = 0

    def next_event(self) -> Event:
        """NexmarkGenerator.nextEvent: the event id (and so its kind) and time of the adjusted event number."""
        t = self.timeline
        number = t.next_adjusted_event_number(self.count)
        timestamp = t.timestamp_for_event(number)
        event_id = t.first_event_id + number
        rem = event_id % t.total
        person = auction = bid = None
        if rem < t.config.person_proportion:
            kind, person = 0, _person(t, self._statics, event_id, self._random, timestamp)
        elif rem < t.config.person_proportion + t.config.auction_proportion:
            kind, auction = 1, _auction(t, self._statics, self.count, event_id, self._random, timestamp)
        else:
            kind, bid = 2, _bid(t, self._statics, event_id, self._random, timestamp)
        self.count += 1
        return {"event_type": kind, "person": person, "auction": auction, "bid": bid}


def events(count: int, config: NexmarkConfig) -> Iterator[Event]:
    """The first `count` events of Nexmark's Flink source with `events.num` = count, as the JSON objects of
    ddl_kafka.sql's row (event_type; person, auction and bid ROWs, all but one null; TIMESTAMP(3) as text).

    With numEventGenerators = n the source runs GeneratorConfig.split(n) generators side by side (one per Flink
    subtask); here they take turns, one event each, which keeps the stream near event-time order.
    """
    if count < 0:
        raise ValueError(f"count must not be negative, got {count}")
    default_gen = DefaultGen(config.seed)
    statics = _Statics(default_gen)
    timelines = _Timeline(config, config.first_event_id, count).split(config.num_event_generators)
    generators = [_Generator(t, statics, default_gen.new_random()) for t in timelines]
    for turn in range(max(t.max_events for t in timelines)):
        for generator in generators:
            if turn < generator.timeline.max_events:
                yield generator.next_event()
