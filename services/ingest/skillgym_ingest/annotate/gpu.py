"""GPU need: whether the skill cannot do its job without an NVIDIA or AMD GPU.

Three strengths of evidence. A plain statement ("requires an NVIDIA GPU", "there is no CPU
mode", "at least 12 GB of VRAM") decides on its own. GPU code and tooling (``.cuda()``,
``nvidia-smi``, vLLM) and NVIDIA/CUDA mentions under a requirements heading decide unless the
skill also shows a CPU path ("falls back to the CPU", ``device="cpu"``, ``accelerator="auto"``).
Apple GPUs (MPS, Metal, MLX) are recorded as a vendor but are not a GPU need."""

from __future__ import annotations

import re

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.qualifiers import Outline, Stance, distinct, gap, sentence_around, stance
from skillgym_ingest.annotate.rules import Hit, rule

STRONG_RULES = [
    rule("runtime.gpu.stated",
         r"\b(?:requires?|required|needs?|must have|depends on|only (?:runs?|works?) (?:on|with))\b" + gap(40)
         + r"\bGPUs?\b|\bGPUs?\s+(?:is\s+|are\s+)?(?:required|needed|mandatory)\b|"
         r"\bCUDA\s+(?:is\s+)?(?:required|needed|mandatory)\b|"
         r"\b(?:works?|runs?|is (?:meant|designed|built))\s+(?:only\s+)?(?:on|for)\s+(?:a |an )?(?:machines?|hosts?|"
         r"systems?|servers?|computers?|workstations?)\s+with\s+(?:an?\s+|one or more\s+)?(?:NVIDIA|AMD|CUDA)\b",
         ["gpu", "cuda"], "instructions"),
    rule("runtime.gpu.vram",
         r"\b(?:at least|minimum(?: of)?|>=?|\u2265|with)\s*\d+(?:\.\d+)?\s*GB\s+(?:of\s+)?(?:VRAM|GPU memory)\b|"
         r"\b\d+(?:\.\d+)?\s*GB\s+(?:of\s+)?(?:VRAM|GPU memory)\s+(?:or more|minimum|required|needed)\b",
         ["vram", "gpu memory"], "instructions"),
]
NO_CPU_RULES = [
    rule("runtime.gpu.no_cpu",
         r"\bno CPU (?:mode|fallback|support|path|version)\b|\bno fallback to (?:the )?CPU\b|"
         r"\b(?:does not|doesn't|do not|don't|cannot|can't|can not|won't|will not)\s+(?:run|work|be (?:run|used)|"
         r"serve|train)\b[^.\n]{0,40}?\bCPUs?(?:-only)?\b|\bCPU(?:-only)? (?:is )?not supported\b|"
         r"\bnot (?:supported|possible) on (?:the )?CPU\b",
         ["cpu"], "instructions"),
]
CODE_RULES = [
    rule("runtime.gpu.cuda_device", r"\.cuda\(\)|\bdevice\s*=\s*['\"]cuda|['\"]cuda:\d['\"]|\bto\(['\"]cuda|"
         r"\btorch\.device\(\s*['\"]cuda|\bGenerator\(\s*['\"]cuda", ["cuda"], "code"),
    rule("runtime.gpu.nvidia_tooling", r"\bnvidia-smi\b|\bCUDA_VISIBLE_DEVICES\b|--gpus\b|\bnvcc\b",
         ["nvidia-smi", "cuda_visible_devices", "--gpus", "nvcc"]),
    rule("runtime.gpu.gpu_library", r"\b(?:vllm|flash_attn|cupy|tensorrt|bitsandbytes|xformers|triton)\b",
         ["vllm", "flash_attn", "cupy", "tensorrt", "bitsandbytes", "xformers", "triton"], "code"),
    rule("runtime.gpu.accelerator", r"\baccelerator\s*=\s*['\"]gpu", ["accelerator"], "code"),
]
MENTION_RULES = [
    rule("runtime.gpu.vendor_mention",
         r"\b(?:NVIDIA|AMD|Radeon|Instinct)\s+GPUs?\b|\bCUDA(?:[- ]capable|[- ]enabled)?\s+(?:GPU|card|device)s?\b|"
         r"\bROCm\b|\bCUDA\s+\d+(?:\.\d+)?\b", ["nvidia", "amd", "radeon", "instinct", "cuda", "rocm"], "instructions"),
]
FALLBACK_RULES = [
    rule("runtime.gpu.fallback",
         r"\bGPU\s+(?:acceleration\s+)?(?:is\s+)?(?:optional|not required|a nice-to-have)\b|"
         r"\bif (?:you have )?an? (?:\w+ )?GPU\b|\bfalls? back to (?:the )?CPU\b|\bCPU[- ]only\b|"
         r"\bruns? (?:fine |well )?on (?:the |a |any )?CPU\b|\b(?:on|uses?|otherwise) the CPU\b|"
         r"\bno GPU (?:is )?(?:needed|required)\b|\bwithout a GPU\b|"
         r"\bCUDA (?:when|if) (?:an? (?:NVIDIA )?GPU is )?(?:available|present)\b|"
         r"\bauto-?detect(?:s|ed)? (?:your |the )?GPU\b",
         ["gpu", "cpu", "cuda"], "docs"),
    rule("runtime.gpu.cpu_path",
         r"['\"]cpu['\"]|--device\s+cpu|\baccelerator\s*=\s*['\"](?:cpu|auto)['\"]|\bdevice_map\s*=\s*['\"]auto['\"]",
         ["cpu'", 'cpu"', "device", "accelerator"]),
]
APPLE_RULES = [
    rule("runtime.gpu.apple", r"\b(?:MPS|Metal|MLX|mlx[_-]\w+|Apple Silicon|Apple GPU|M[1-4](?: Pro| Max| Ultra)?)\b|"
         r"\btorch\.backends\.mps\b|['\"]mps['\"]",
         [" mps", "mps ", "(mps", "'mps", '"mps', ".mps", "metal", "mlx", "apple", "m1", "m2", "m3", "m4"], "all", 0),
]
GPU_RULES = STRONG_RULES + NO_CPU_RULES + CODE_RULES + MENTION_RULES + FALLBACK_RULES + APPLE_RULES

_STRONG = frozenset(r.rule for r in STRONG_RULES + NO_CPU_RULES)
_CODE = frozenset(r.rule for r in CODE_RULES)
_CPU_PATH = frozenset(r.rule for r in FALLBACK_RULES)
_APPLE_WORDS = re.compile(r"\b(?:apple|mps|metal|mlx|m[1-4]|mac(?:s|os|book)?)\b", re.IGNORECASE)
_DISCRETE_WORDS = re.compile(r"\b(?:nvidia|cuda|amd|rocm|radeon)\b", re.IGNORECASE)


def _only_apple(hit: Hit) -> bool:
    """A requirement stated about an Apple GPU ("needs the GPU of an M-series Mac")."""
    sentence = sentence_around(*hit.in_context())
    return bool(_APPLE_WORDS.search(sentence)) and not _DISCRETE_WORDS.search(sentence)


def _vendors(hits: list[Hit]) -> list[str]:
    vendors = set()
    for hit in hits:
        text = hit.excerpt.lower()
        if hit.rule == "runtime.gpu.apple":
            vendors.add("apple")
        if any(word in text for word in ("nvidia", "cuda", "nvcc")):
            vendors.add("nvidia")
        if any(word in text for word in ("rocm", "amd gpu", "radeon", "instinct")):
            vendors.add("amd")
    return sorted(vendors)


def gpu_annotation(hits: list[Hit], shape: Outline) -> Annotation:
    """``hits`` are the ``runtime.gpu.*`` hits. The value: ``required`` (cannot work without an NVIDIA
    or AMD GPU), ``optional`` (GPU use shows up but is not required), ``mentioned`` (any GPU signal)
    and ``vendors`` (the GPU makers named: nvidia, amd, apple)."""
    strong: list[Hit] = []
    medium: list[Hit] = []
    fallback: list[Hit] = []
    discounted: list[tuple[Hit, Stance]] = []
    for hit in hits:
        if hit.rule == "runtime.gpu.apple":
            continue
        worded = stance(hit, shape, negatable=hit.rule != "runtime.gpu.no_cpu")
        if hit.rule in _CPU_PATH:
            if worded is Stance.NEGATED:
                discounted.append((hit, worded))
            else:
                fallback.append(hit)
        elif worded is not Stance.STATED:
            discounted.append((hit, worded))
        elif hit.rule in _STRONG:
            # "There is no CPU mode" is a requirement whatever else the sentence names.
            if hit.rule != "runtime.gpu.no_cpu" and _only_apple(hit):
                discounted.append((hit, Stance.OPTIONAL))
            else:
                strong.append(hit)
        elif hit.rule in _CODE or shape.in_requirement_section(hit):
            medium.append(hit)
    required = bool(strong) or (bool(medium) and not fallback)
    deciding = strong + (medium if required else [])
    value = {
        "required": required,
        "mentioned": bool(hits),
        "optional": not required and bool(medium or fallback or discounted),
        "vendors": _vendors(hits),
    }
    evidence = [h.evidence() for h in deciding]
    evidence += [Evidence(rule=f"{h.rule}:cpu_path", file=h.file, line=h.line, excerpt=h.excerpt) for h in fallback]
    if not required:
        evidence += [Evidence(rule=f"{h.rule}:outweighed", file=h.file, line=h.line, excerpt=h.excerpt) for h in medium]
    evidence += [Evidence(rule=f"{h.rule}:{s.value}", file=h.file, line=h.line, excerpt=h.excerpt) for h, s in discounted]
    evidence += [h.evidence() for h in hits if h.rule == "runtime.gpu.apple"][:3]
    return Annotation(value=value, evidence=distinct(evidence) or [Evidence(rule="runtime.gpu.none_found")])
