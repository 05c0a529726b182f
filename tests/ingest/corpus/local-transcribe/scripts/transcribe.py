"""Transcribe an audio or video file with faster-whisper; prints text or writes SRT."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from faster_whisper import WhisperModel


def pick_device(requested: str) -> tuple[str, str]:
    if requested != "auto":
        return requested, "float16" if requested == "cuda" else "int8"
    try:
        import ctranslate2

        if ctranslate2.get_cuda_device_count() > 0:
            return "cuda", "float16"
    except ImportError:
        pass
    return "cpu", "int8"


def timestamp(seconds: float) -> str:
    millis = round(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("audio")
    parser.add_argument("--model", default="distil-large-v3")
    parser.add_argument("--language")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--compute-type")
    parser.add_argument("--srt", action="store_true")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()

    device, compute_type = pick_device(args.device)
    model = WhisperModel(args.model, device=device, compute_type=args.compute_type or compute_type)
    segments, info = model.transcribe(args.audio, language=args.language, word_timestamps=args.srt)
    print(f"language={info.language} device={device}", file=sys.stderr)

    if args.srt:
        blocks = [
            f"{n}\n{timestamp(s.start)} --> {timestamp(s.end)}\n{s.text.strip()}\n"
            for n, s in enumerate(segments, start=1)
        ]
        text = "\n".join(blocks)
    else:
        text = " ".join(s.text.strip() for s in segments)
    if args.output:
        Path(args.output).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
