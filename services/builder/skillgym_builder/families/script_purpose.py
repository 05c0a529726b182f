"""What a skill's script is for, in its author's words: the description its argument parser is
given, else its module docstring, else the comment under a shell script's shebang. A task states
this goal so that an agent facing a skill with several scripts knows which result is meant; the
sentences that would give the command away (the script's name, its options, a usage line) are
left out."""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

MAX_CHARS = 240
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])")
# a usage line, a command (interpreters are lower case there, unlike "a Python helper"), an option
_GIVES_COMMAND_AWAY = re.compile(r"\b[Uu]sage\s*:|\b[Ee]xamples?\s*:|(^|\s)(python3?|bash|sh|uv)\s+\S|(^|\s)--?[A-Za-z]|\$ |\.py\b|\.sh\b")


def python_purpose(tree: ast.Module, script: str) -> str:
    """The argparse description when it is a literal, else the module docstring's first paragraph."""
    described = [k.value.value for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) == "ArgumentParser"
                 for k in n.keywords if k.arg == "description" and isinstance(k.value, ast.Constant)
                 and isinstance(k.value.value, str)]
    for text in described:
        if found := stated_goal(text, script):
            return found
    return stated_goal(ast.get_docstring(tree) or "", script)


def shell_purpose(source: str, script: str) -> str:
    """The comment block that opens a shell script, after its shebang."""
    lines: list[str] = []
    for raw in source.splitlines():
        line = raw.strip()
        if line.startswith("#!") and not lines:
            continue
        if not line.startswith("#"):
            if lines or line:
                break
            continue
        lines.append(line.lstrip("#").strip())
    return stated_goal("\n".join(lines), script)


def stated_goal(text: str, script: str) -> str:
    """The first paragraph's sentences that neither name the script nor show how it is run, up to
    :data:`MAX_CHARS`; "" when none is left."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    name, stem = PurePosixPath(script).name, PurePosixPath(script).stem
    kept: list[str] = []
    for sentence in _SENTENCE_END.split(" ".join(paragraph.split())):
        lowered = sentence.lower()
        # a stem such as "sales" is also a plain word; one such as "sales_report" names the script
        named = name.lower() in lowered or (re.search(r"[_-]", stem) and stem.lower() in lowered)
        if named or _GIVES_COMMAND_AWAY.search(sentence):
            continue
        if len(" ".join([*kept, sentence])) > MAX_CHARS:
            break
        kept.append(sentence)
    goal = " ".join(kept).strip()
    return goal if len(goal) >= 12 else ""


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
