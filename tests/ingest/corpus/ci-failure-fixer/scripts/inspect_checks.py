"""List the failing checks of a pull request and print the tail of each failing job's log."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

FAILED_STATES = {"FAILURE", "TIMED_OUT", "CANCELLED", "ACTION_REQUIRED"}


def gh(*args: str, repo: str) -> str:
    result = subprocess.run(["gh", *args], cwd=repo, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip() or f"gh {' '.join(args)} failed")
    return result.stdout


def failing_checks(pr: str, repo: str) -> list[dict[str, str]]:
    raw = gh("pr", "checks", pr, "--json", "name,state,link,workflow", repo=repo)
    return [check for check in json.loads(raw) if check.get("state") in FAILED_STATES]


def run_id(link: str) -> str | None:
    parts = link.rstrip("/").split("/")
    if "runs" in parts:
        index = parts.index("runs")
        if index + 1 < len(parts):
            return parts[index + 1]
    return None


def log_tail(link: str, repo: str, lines: int) -> list[str]:
    identifier = run_id(link)
    if identifier is None:
        return []
    try:
        log = gh("run", "view", identifier, "--log-failed", repo=repo)
    except RuntimeError as error:
        return [f"(log unavailable: {error})"]
    return log.splitlines()[-lines:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", default=".")
    parser.add_argument("--pr", default="")
    parser.add_argument("--max-lines", type=int, default=80)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    checks = failing_checks(args.pr, args.repo)
    report = []
    for check in checks:
        external = "github.com" not in check.get("link", "")
        report.append({
            "name": check["name"],
            "link": check.get("link", ""),
            "external": external,
            "log": [] if external else log_tail(check.get("link", ""), args.repo, args.max_lines),
        })
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for item in report:
            print(f"== {item['name']} ({item['link']})")
            print("\n".join(item["log"]) or "(external check: see the link)")
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main())
