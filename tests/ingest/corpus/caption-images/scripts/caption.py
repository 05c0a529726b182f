"""Batch image captioning (BLIP). Output: CSV with caption and alt text per image."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import torch
from PIL import Image
from transformers import BlipForConditionalGeneration, BlipProcessor

MODEL_ID = "Salesforce/blip-image-captioning-base"
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".bmp"}


# Prefer CUDA, then Apple MPS, then CPU.
def pick_device(requested: str) -> torch.device:
    if requested != "auto":
        return torch.device(requested)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def load(device: torch.device) -> tuple[BlipProcessor, BlipForConditionalGeneration]:
    processor = BlipProcessor.from_pretrained(MODEL_ID)
    # Half precision only pays off on CUDA.
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = BlipForConditionalGeneration.from_pretrained(MODEL_ID, torch_dtype=dtype).to(device)
    model.eval()
    return processor, model


def images_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


@torch.inference_mode()
def caption(paths: list[Path], processor: BlipProcessor, model: BlipForConditionalGeneration,
            device: torch.device, batch_size: int, prompt: str | None) -> list[str]:
    captions: list[str] = []
    for start in range(0, len(paths), batch_size):
        batch = [Image.open(p).convert("RGB") for p in paths[start : start + batch_size]]
        texts = [prompt] * len(batch) if prompt else None
        inputs = processor(images=batch, text=texts, return_tensors="pt").to(device, model.dtype)
        output = model.generate(**inputs, max_new_tokens=40)
        captions.extend(processor.batch_decode(output, skip_special_tokens=True))
    return [text.strip().capitalize() for text in captions]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=Path("captions.csv"))
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda", "mps"])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--prompt", help="conditional captioning prefix, e.g. 'a photograph of'")
    args = parser.parse_args()

    paths = images_in(args.folder)
    if not paths:
        print(f"no images in {args.folder}", file=sys.stderr)
        return 1
    device = pick_device(args.device)
    processor, model = load(device)
    captions = caption(paths, processor, model, device, args.batch_size, args.prompt)
    with args.output.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "caption", "alt_text"])
        for path, text in zip(paths, captions, strict=True):
            writer.writerow([path.name, text, text.rstrip(".")[:125]])
    print(f"captioned {len(paths)} images on {device.type}; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
