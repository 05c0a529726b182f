"""Group error lines in application logs into signatures and count them per time bucket."""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

LEVEL = re.compile(r"\b(ERROR|CRITICAL|FATAL|Exception|Traceback|panic)\b")
TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})")
VOLATILE = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b\d+\.\d+\.\d+\.\d+(?::\d+)?\b"), "<ip>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"\b\d+\b"), "<n>"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "<str>"),
]


def open_log(path: Path):  # type: ignore[no-untyped-def]
    return gzip.open(path, "rt", errors="replace") if path.suffix == ".gz" else path.open(errors="replace")


def signature(line: str) -> str:
    text = TIMESTAMP.sub("", line).strip()
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text[:200]


def scan(paths: list[Path], bucket_minutes: int) -> dict[str, object]:
    counts: Counter[str] = Counter()
    first_seen: dict[str, str] = {}
    timeline: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, str] = {}
    for path in paths:
        with open_log(path) as handle:
            for line in handle:
                if not LEVEL.search(line):
                    continue
                key = signature(line)
                counts[key] += 1
                examples.setdefault(key, line.strip()[:300])
                stamp = TIMESTAMP.search(line)
                if stamp:
                    day, hour, minute = stamp.groups()
                    bucket = f"{day} {hour}:{int(minute) // bucket_minutes * bucket_minutes:02d}"
                    first_seen.setdefault(key, bucket)
                    timeline[bucket][key] += 1
    top = counts.most_common(15)
    return {
        "total_error_lines": sum(counts.values()),
        "signatures": [{"signature": k, "count": n, "first_seen": first_seen.get(k), "example": examples[k]}
                       for k, n in top],
        "timeline": {bucket: sum(c.values()) for bucket, c in sorted(timeline.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--bucket-minutes", type=int, default=5)
    parser.add_argument("-o", "--output", type=Path, default=Path("scan.json"))
    args = parser.parse_args()
    result = scan(args.logs, args.bucket_minutes)
    args.output.write_text(json.dumps(result, indent=2))
    print(f"{result['total_error_lines']} error lines, {len(result['signatures'])} signatures -> {args.output}")


if __name__ == "__main__":
    main()
