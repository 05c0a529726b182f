"""Render images from a text prompt with Stable Diffusion XL (base + refiner) on a CUDA GPU."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from diffusers import DiffusionPipeline

BASE = "stabilityai/stable-diffusion-xl-base-1.0"
REFINER = "stabilityai/stable-diffusion-xl-refiner-1.0"


def pipelines(use_refiner: bool) -> tuple[DiffusionPipeline, DiffusionPipeline | None]:
    base = DiffusionPipeline.from_pretrained(BASE, torch_dtype=torch.float16, variant="fp16", use_safetensors=True)
    base.to("cuda")
    base.enable_xformers_memory_efficient_attention()
    if not use_refiner:
        return base, None
    refiner = DiffusionPipeline.from_pretrained(
        REFINER, text_encoder_2=base.text_encoder_2, vae=base.vae, torch_dtype=torch.float16, variant="fp16",
    )
    refiner.to("cuda")
    return base, refiner


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("prompt")
    parser.add_argument("--negative", default="blurry, low quality, watermark")
    parser.add_argument("--count", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--no-refiner", action="store_true")
    parser.add_argument("--out-dir", type=Path, default=Path("renders"))
    args = parser.parse_args()

    base, refiner = pipelines(not args.no_refiner)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator("cuda").manual_seed(args.seed)
    for index in range(args.count):
        latent = base(prompt=args.prompt, negative_prompt=args.negative, num_inference_steps=args.steps,
                      height=args.size, width=args.size, denoising_end=0.8 if refiner else 1.0,
                      output_type="latent" if refiner else "pil", generator=generator).images
        image = refiner(prompt=args.prompt, image=latent, denoising_start=0.8).images[0] if refiner else latent[0]
        target = args.out_dir / f"render_{args.seed}_{index}.png"
        image.save(target)
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
