"""Embed text files with a local sentence-transformers model and build a searchable index."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch
from sentence_transformers import SentenceTransformer


def chunks(text: str, size: int, overlap: int) -> list[str]:
    words = text.split()
    step = max(size - overlap, 1)
    return [" ".join(words[i : i + size]) for i in range(0, max(len(words) - overlap, 1), step)]


def build(args: argparse.Namespace) -> int:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SentenceTransformer(str(args.model_dir), device=device)
    records, texts = [], []
    for path in sorted(args.docs.rglob("*.md")) + sorted(args.docs.rglob("*.txt")):
        for number, piece in enumerate(chunks(path.read_text(errors="replace"), args.chunk, args.overlap)):
            records.append({"file": str(path), "chunk": number, "text": piece})
            texts.append(piece)
    vectors = model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    args.index.mkdir(parents=True, exist_ok=True)
    np.save(args.index / "vectors.npy", vectors.astype(np.float32))
    (args.index / "chunks.json").write_text(json.dumps(records))
    print(f"indexed {len(texts)} chunks on {device}")
    return 0


def search(args: argparse.Namespace) -> int:
    model = SentenceTransformer(str(args.model_dir), device="cuda" if torch.cuda.is_available() else "cpu")
    vectors = np.load(args.index / "vectors.npy")
    records = json.loads((args.index / "chunks.json").read_text())
    query = model.encode([args.query], normalize_embeddings=True)[0]
    for position in np.argsort(vectors @ query)[::-1][: args.top]:
        hit = records[position]
        print(f"{hit['file']}#{hit['chunk']}: {hit['text'][:160]}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", type=Path, required=True, help="a sentence-transformers model on disk")
    parser.add_argument("--index", type=Path, default=Path("index"))
    sub = parser.add_subparsers(dest="command", required=True)
    build_cmd = sub.add_parser("build")
    build_cmd.add_argument("docs", type=Path)
    build_cmd.add_argument("--chunk", type=int, default=200)
    build_cmd.add_argument("--overlap", type=int, default=40)
    search_cmd = sub.add_parser("search")
    search_cmd.add_argument("query")
    search_cmd.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    return build(args) if args.command == "build" else search(args)


if __name__ == "__main__":
    sys.exit(main())
