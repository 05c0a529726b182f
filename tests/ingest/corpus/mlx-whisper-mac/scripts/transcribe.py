"""Transcribe audio on Apple Silicon with mlx-whisper; writes text, SRT or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mlx_whisper

MODELS = {
    "tiny": "mlx-community/whisper-tiny",
    "small": "mlx-community/whisper-small-mlx",
    "large": "mlx-community/whisper-large-v3-turbo",
}


def srt_time(seconds: float) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{int(hours):02d}:{int(minutes):02d}:{int(secs):02d},{int((secs % 1) * 1000):03d}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("audio", type=Path)
    parser.add_argument("--model", default="large", choices=sorted(MODELS))
    parser.add_argument("--format", default="txt", choices=["txt", "srt", "json"])
    parser.add_argument("--language")
    args = parser.parse_args()

    result = mlx_whisper.transcribe(str(args.audio), path_or_hf_repo=MODELS[args.model], language=args.language)
    target = args.audio.with_suffix("." + args.format)
    if args.format == "json":
        target.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    elif args.format == "srt":
        blocks = [f"{n}\n{srt_time(s['start'])} --> {srt_time(s['end'])}\n{s['text'].strip()}\n"
                  for n, s in enumerate(result["segments"], start=1)]
        target.write_text("\n".join(blocks))
    else:
        target.write_text(result["text"].strip() + "\n")
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
