"""The code the test-repair family plants bugs in: small functions, each with a correct
implementation, a different but equally correct one, bugs as (correct, buggy) line pairs,
visible pytest cases that expose every bug, and a generator of fresh hidden cases."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bug:
    id: str
    correct: str  # a line (or part of one) of ``source`` ...
    buggy: str  # ... and what it becomes

    def plant(self, source: str) -> str:
        if source.count(self.correct) != 1:
            raise ValueError(f"bug {self.id}: {self.correct!r} must occur exactly once")
        return source.replace(self.correct, self.buggy)


@dataclass(frozen=True)
class Kata:
    module: str
    function: str
    source: str
    alternative: str
    bugs: tuple[Bug, ...]
    visible_tests: str  # pytest body; ``{pkg}`` is the package name
    generator: str  # ``def cases(rng):`` returning a list of argument lists


KATAS: tuple[Kata, ...] = (
    Kata(
        module="durations", function="parse_duration",
        source='''import re

UNITS = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """Seconds in a duration like "1h30m" or "45s"; ValueError for anything else."""
    text = text.strip().lower()
    if not re.fullmatch(r"(\\d+[hms])+", text):
        raise ValueError(f"bad duration: {text!r}")
    return sum(int(amount) * UNITS[unit] for amount, unit in re.findall(r"(\\d+)([hms])", text))
''',
        alternative='''def parse_duration(text):
    """Seconds in a duration like "1h30m" or "45s"; ValueError for anything else."""
    total, digits = 0, ""
    cleaned = text.strip().lower()
    if not cleaned:
        raise ValueError("bad duration: empty")
    for char in cleaned:
        if char.isdigit():
            digits += char
        elif char in "hms" and digits:
            total += int(digits) * {"h": 3600, "m": 60, "s": 1}[char]
            digits = ""
        else:
            raise ValueError(f"bad duration: {text!r}")
    if digits:
        raise ValueError(f"bad duration: {text!r}")
    return total
''',
        bugs=(Bug("seconds-unit", '"s": 1}', '"s": 60}'), Bug("no-strip", "text = text.strip().lower()", "text = text.lower()")),
        visible_tests='''import pytest

from {pkg}.durations import parse_duration


def test_hours_and_minutes():
    assert parse_duration("1h30m") == 5400


def test_seconds():
    assert parse_duration("45s") == 45


def test_surrounding_spaces_are_ignored():
    assert parse_duration(" 2m ") == 120


@pytest.mark.parametrize("bad", ["", "10", "5x", "m5"])
def test_rejects_garbage(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)
''',
        generator='''def cases(rng):
    out = []
    for _ in range(40):
        parts = [f"{rng.randint(1, 99)}{u}" for u in "hms" if rng.random() < 0.6] or ["7s"]
        text = "".join(parts)
        out.append([(" " * rng.randint(0, 2)) + text.upper() if rng.random() < 0.3 else text])
    return out + [["12"], ["h3"], ["3d"], [" "]]
''',
    ),
    Kata(
        module="stats", function="median",
        source='''def median(values):
    """The median of a non-empty sequence of numbers; ValueError when empty."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of an empty sequence")
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
''',
        alternative='''import statistics


def median(values):
    """The median of a non-empty sequence of numbers; ValueError when empty."""
    values = list(values)
    if not values:
        raise ValueError("median of an empty sequence")
    return statistics.median(values)
''',
        bugs=(Bug("even-length", "return (ordered[middle - 1] + ordered[middle]) / 2", "return ordered[middle]"),
              Bug("unsorted", "ordered = sorted(values)", "ordered = list(values)")),
        visible_tests='''import pytest

from {pkg}.stats import median


def test_odd_length():
    assert median([7, 1, 3]) == 3


def test_even_length_averages_the_middle_pair():
    assert median([4, 1, 3, 2]) == 2.5


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        median([])
''',
        generator='''def cases(rng):
    out = [[[rng.randint(-50, 50) for _ in range(rng.randint(1, 12))]] for _ in range(40)]
    return out + [[[]], [[5]]]
''',
    ),
    Kata(
        module="batching", function="chunk",
        source='''def chunk(items, size):
    """``items`` split into lists of ``size`` (the last may be shorter); ValueError if size < 1."""
    if size < 1:
        raise ValueError("size must be at least 1")
    items = list(items)
    return [items[start:start + size] for start in range(0, len(items), size)]
''',
        alternative='''def chunk(items, size):
    """``items`` split into lists of ``size`` (the last may be shorter); ValueError if size < 1."""
    if size < 1:
        raise ValueError("size must be at least 1")
    out, current = [], []
    for item in items:
        current.append(item)
        if len(current) == size:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out
''',
        bugs=(Bug("drops-tail", "range(0, len(items), size)", "range(0, len(items) - size + 1, size)"),
              Bug("no-list", "    items = list(items)\n", "")),
        visible_tests='''import pytest

from {pkg}.batching import chunk


def test_even_split():
    assert chunk([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


def test_last_chunk_may_be_short():
    assert chunk("abcde", 2) == [["a", "b"], ["c", "d"], ["e"]]


@pytest.mark.parametrize("size", [0, -3])
def test_size_must_be_positive(size):
    with pytest.raises(ValueError):
        chunk([1], size)
''',
        generator='''def cases(rng):
    out = [[list(range(rng.randint(0, 15))), rng.randint(1, 5)] for _ in range(30)]
    out += [["abcdefghijkl"[: rng.randint(0, 12)], rng.randint(1, 4)] for _ in range(10)]
    return out + [[[1, 2], 0], [[], 3]]
''',
    ),
    Kata(
        module="slugs", function="slugify",
        source='''import re


def slugify(text):
    """Lower-case words of ``text`` joined by single hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
''',
        alternative='''def slugify(text):
    """Lower-case words of ``text`` joined by single hyphens."""
    words, current = [], ""
    for char in text.lower():
        if char.isascii() and char.isalnum():
            current += char
        elif current:
            words.append(current)
            current = ""
    if current:
        words.append(current)
    return "-".join(words)
''',
        bugs=(Bug("no-collapse", 'r"[^a-z0-9]+"', 'r"[^a-z0-9]"'), Bug("no-strip", '.strip("-")', "")),
        visible_tests='''from {pkg}.slugs import slugify


def test_words_joined_by_hyphens():
    assert slugify("Hello World") == "hello-world"


def test_runs_of_punctuation_collapse():
    assert slugify("Q3 -- Results!!") == "q3-results"


def test_no_leading_or_trailing_hyphen():
    assert slugify("  (draft) ") == "draft"
''',
        generator='''def cases(rng):
    words = ["Alpha", "beta", "GAMMA", "q4", "2025", "x"]
    seps = [" ", "--", " & ", "_", "!!", "/ "]
    out = []
    for _ in range(40):
        parts = [rng.choice(words) for _ in range(rng.randint(1, 4))]
        text = rng.choice(["", " ", "(", "-"]) + rng.choice(seps).join(parts) + rng.choice(["", "!", " ", "-"])
        out.append([text])
    return out + [[""], ["---"]]
''',
    ),
    Kata(
        module="intervals", function="merge_intervals",
        source='''def merge_intervals(intervals):
    """Sorted, merged ``[start, end]`` pairs; intervals that touch or overlap become one."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged
''',
        alternative='''def merge_intervals(intervals):
    """Sorted, merged ``[start, end]`` pairs; intervals that touch or overlap become one."""
    ordered = sorted((list(pair) for pair in intervals), key=lambda pair: (pair[0], pair[1]))
    if not ordered:
        return []
    out = [ordered[0]]
    for start, end in ordered[1:]:
        last = out[-1]
        if start > last[1]:
            out.append([start, end])
        elif end > last[1]:
            last[1] = end
    return out
''',
        bugs=(Bug("touching", "start <= merged[-1][1]", "start < merged[-1][1]"),
              Bug("shrinks", "max(merged[-1][1], end)", "end")),
        visible_tests='''from {pkg}.intervals import merge_intervals


def test_overlapping_merge():
    assert merge_intervals([[1, 3], [2, 6], [8, 10]]) == [[1, 6], [8, 10]]


def test_touching_merge():
    assert merge_intervals([[5, 7], [1, 5]]) == [[1, 7]]


def test_contained_interval_keeps_the_outer_end():
    assert merge_intervals([[1, 10], [2, 3]]) == [[1, 10]]
''',
        generator='''def cases(rng):
    out = []
    for _ in range(40):
        pairs = []
        for _ in range(rng.randint(0, 6)):
            start = rng.randint(0, 30)
            pairs.append([start, start + rng.randint(0, 8)])
        out.append([pairs])
    return out
''',
    ),
    Kata(
        module="cards", function="luhn_valid",
        source='''def luhn_valid(number):
    """Whether a digit string (spaces allowed) passes the Luhn checksum."""
    digits = number.replace(" ", "")
    if not digits.isdigit() or len(digits) < 2:
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0
''',
        alternative='''def luhn_valid(number):
    """Whether a digit string (spaces allowed) passes the Luhn checksum."""
    digits = [int(c) for c in number if c != " "] if all(c.isdigit() or c == " " for c in number) else []
    if len(digits) < 2:
        return False
    odd = digits[-1::-2]
    even = [sum(divmod(2 * d, 10)) for d in digits[-2::-2]]
    return (sum(odd) + sum(even)) % 10 == 0
''',
        bugs=(Bug("wrong-end", "enumerate(reversed(digits))", "enumerate(digits)"),
              Bug("no-spaces", 'number.replace(" ", "")', "number")),
        visible_tests='''from {pkg}.cards import luhn_valid


def test_valid_number():
    assert luhn_valid("4539 3195 0343 6467")


def test_odd_length_valid_number():
    assert luhn_valid("79927398713")


def test_invalid_number():
    assert not luhn_valid("8273 1232 7352 0569")


def test_non_digits_are_invalid():
    assert not luhn_valid("0a")
''',
        generator='''def cases(rng):
    out = []
    for _ in range(40):
        digits = "".join(str(rng.randint(0, 9)) for _ in range(rng.randint(2, 17)))
        total = 0
        for position, char in enumerate(reversed(digits + "0")):
            value = int(char)
            if position % 2 == 1:
                value = value * 2 - 9 if value > 4 else value * 2
            total += value
        chosen = digits + str((10 - total % 10) % 10) if rng.random() < 0.5 else digits
        if rng.random() < 0.4:
            chosen = " ".join(chosen[i:i + 4] for i in range(0, len(chosen), 4))
        out.append([chosen])
    return out + [["0"], ["12 a4"]]
''',
    ),
    Kata(
        module="roman", function="roman_to_int",
        source='''VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_to_int(text):
    """The value of a Roman numeral (subtractive notation included); ValueError for other text."""
    text = text.strip().upper()
    if not text or any(char not in VALUES for char in text):
        raise ValueError(f"not a Roman numeral: {text!r}")
    total = 0
    for char, following in zip(text, text[1:] + " "):
        value = VALUES[char]
        total += -value if following in VALUES and VALUES[following] > value else value
    return total
''',
        alternative='''PAIRS = [("CM", 900), ("CD", 400), ("XC", 90), ("XL", 40), ("IX", 9), ("IV", 4),
         ("M", 1000), ("D", 500), ("C", 100), ("L", 50), ("X", 10), ("V", 5), ("I", 1)]


def roman_to_int(text):
    """The value of a Roman numeral (subtractive notation included); ValueError for other text."""
    rest = text.strip().upper()
    if not rest or any(char not in "IVXLCDM" for char in rest):
        raise ValueError(f"not a Roman numeral: {text!r}")
    total = 0
    while rest:
        for symbol, value in PAIRS:
            if rest.startswith(symbol):
                total += value
                rest = rest[len(symbol):]
                break
    return total
''',
        bugs=(Bug("no-subtractive", "-value if following in VALUES and VALUES[following] > value else value", "value"),
              Bug("case", "text = text.strip().upper()", "text = text.strip()")),
        visible_tests='''import pytest

from {pkg}.roman import roman_to_int


def test_additive():
    assert roman_to_int("XVII") == 17


def test_subtractive():
    assert roman_to_int("MCMXCIV") == 1994


def test_lower_case():
    assert roman_to_int("xl") == 40


def test_rejects_other_text():
    with pytest.raises(ValueError):
        roman_to_int("12")
''',
        generator='''def cases(rng):
    pairs = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
             (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = []
    for _ in range(40):
        number, text = rng.randint(1, 3999), ""
        for value, symbol in pairs:
            while number >= value:
                text, number = text + symbol, number - value
        out.append([text.lower() if rng.random() < 0.3 else text])
    return out + [["ABC"], [""]]
''',
    ),
    Kata(
        module="changes", function="percent_change",
        source='''def percent_change(old, new):
    """The change from ``old`` to ``new`` in percent of ``old``, rounded to 2 decimals."""
    if old == 0:
        raise ValueError("percent change from zero is undefined")
    return round((new - old) / abs(old) * 100, 2)
''',
        alternative='''def percent_change(old, new):
    """The change from ``old`` to ``new`` in percent of ``old``, rounded to 2 decimals."""
    if not old:
        raise ValueError("percent change from zero is undefined")
    ratio = (new - old) / old
    return round(ratio * 100 if old > 0 else -ratio * 100, 2)
''',
        bugs=(Bug("wrong-base", "/ abs(old) * 100", "/ abs(new) * 100"), Bug("rounding", ", 2)", ", 1)")),
        visible_tests='''import pytest

from {pkg}.changes import percent_change


def test_increase():
    assert percent_change(80, 100) == 25.0


def test_decrease_from_a_negative_base():
    assert percent_change(-50, -75) == -50.0


def test_two_decimals():
    assert percent_change(3, 4) == 33.33


def test_zero_base():
    with pytest.raises(ValueError):
        percent_change(0, 5)
''',
        generator='''def cases(rng):
    out = [[rng.choice([-1, 1]) * rng.randint(1, 500), rng.randint(-500, 500)] for _ in range(40)]
    return out + [[0, 3]]
''',
    ),
)
