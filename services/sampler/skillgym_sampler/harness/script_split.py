"""Split a shell script into the commands an agent would type, without running it.

A script is cut into *sections* (separated by blank or comment lines) made of complete
statements (quotes, heredocs, brackets, compound commands and line continuations are closed).
Shell state does not survive between separately executed commands, so leading sections that
only set state (``set -e``, ``cd``, ``export``, assignments, functions) become a preamble
repeated before every command; a state change mixed into later work makes splitting unsafe and
the whole script becomes a single command."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_OPENERS = {"if": "fi", "case": "esac", "for": "done", "while": "done", "until": "done", "select": "done"}
_CLOSERS = {"fi", "esac", "done"}
_COMMAND_START = set(";&|({!`") | {"then", "do", "else", "elif", "&&", "||"}
_STATE_WORDS = {
    "cd", "pushd", "popd", "export", "set", "shopt", "source", ".", "alias", "trap", "umask",
    "unset", "declare", "local", "readonly", "typeset",
}
_ASSIGNMENTS_ONLY = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=(?:\"[^\"]*\"|'[^']*'|\S*)\s*)+$")
_FUNCTION_DEF = re.compile(r"^(?:function\s+[A-Za-z_][\w-]*|[A-Za-z_][\w-]*\s*\(\s*\))")
_CASE = re.compile(r"(?:^|[;&|(]|\bthen|\bdo)\s*case\s", re.M)
_ERREXIT = re.compile(r"(?:^|\s)set\s+(?:-[a-zA-Z]*e|-o\s+errexit)")


@dataclass
class ScriptCommand:
    comment: str
    command: str


@dataclass
class SplitScript:
    preamble: str
    commands: list[ScriptCommand] = field(default_factory=list)
    split: bool = True
    errexit: bool = False

    def full_command(self, command: ScriptCommand) -> str:
        return f"{self.preamble}\n{command.command}" if self.preamble else command.command


class _Scanner:
    """Tracks whether the lines fed so far form complete shell statements."""

    def __init__(self) -> None:
        self.quote: str | None = None
        self.heredocs: list[tuple[str, bool]] = []
        self.in_heredoc: tuple[str, bool] | None = None
        self.depth = 0
        self.continued = False

    @property
    def complete(self) -> bool:
        return (
            self.quote is None and not self.heredocs and self.in_heredoc is None
            and self.depth <= 0 and not self.continued
        )

    def feed(self, line: str) -> None:
        if self.in_heredoc is not None:
            delimiter, strip_tabs = self.in_heredoc
            if (line.lstrip("\t") if strip_tabs else line).rstrip("\n") == delimiter:
                self.in_heredoc = self.heredocs.pop(0) if self.heredocs else None
            return
        self.continued = False
        self._scan(line)
        if self.quote is None and line.rstrip("\n").endswith("\\") and not line.rstrip("\n").endswith("\\\\"):
            self.continued = True
        if self.heredocs and self.quote is None:
            self.in_heredoc = self.heredocs.pop(0)

    def _scan(self, line: str) -> None:
        word = ""
        previous = ";"
        index = 0
        while index < len(line):
            char = line[index]
            if self.quote == "'":
                if char == "'":
                    self.quote = None
            elif self.quote == '"':
                if char == "\\":
                    index += 1
                elif char == '"':
                    self.quote = None
            elif char == "\\":
                index += 1
            elif char == "<" and line.startswith("<<", index) and not line.startswith("<<<", index):
                match = _HEREDOC.match(line, index)
                if match:
                    self.heredocs.append((match.group(3), match.group(1) == "-"))
                    index = match.end()
                    continue
            elif char in "'\"":
                self.quote = char
            elif char == "#" and not word:
                break
            elif char.isspace() or char in ";&|(){}`":
                previous = self._word(word, previous)
                word = ""
                if char in "({":
                    self.depth += 1
                elif char in ")}":
                    self.depth -= 1
                if not char.isspace():
                    previous = char
            else:
                word += char
            index += 1
        self._word(word, previous)

    def _word(self, word: str, previous: str) -> str:
        if not word:
            return previous
        if previous in _COMMAND_START:
            if word in _OPENERS:
                self.depth += 1
            elif word in _CLOSERS:
                self.depth -= 1
        return word


def _is_state_line(line: str) -> bool:
    stripped = line.strip()
    first = stripped.split(maxsplit=1)[0] if stripped else ""
    return first in _STATE_WORDS or bool(_ASSIGNMENTS_ONLY.match(stripped)) or bool(_FUNCTION_DEF.match(stripped))


def _statements(lines: list[str]) -> list[tuple[str, list[str]]] | None:
    """Group lines into (kind, lines) where kind is 'stmt', 'comment' or 'blank'; None if unbalanced."""
    items: list[tuple[str, list[str]]] = []
    scanner = _Scanner()
    current: list[str] = []
    for line in lines:
        if not current:
            stripped = line.strip()
            if not stripped:
                items.append(("blank", [line]))
                continue
            if stripped.startswith("#"):
                items.append(("comment", [line]))
                continue
        current.append(line)
        scanner.feed(line)
        if scanner.complete:
            items.append(("stmt", current))
            current = []
    return None if current else items


def split_script(text: str) -> SplitScript:
    lines = text.splitlines()
    if lines and lines[0].startswith("#!"):
        shebang, lines = lines[0], lines[1:]
    else:
        shebang = ""
    errexit = bool(re.search(r"\s-[a-zA-Z]*e", shebang))
    whole = SplitScript(preamble="", commands=[ScriptCommand("", "\n".join(lines).strip())], split=False)
    if _CASE.search(text):
        return whole  # case patterns close parentheses they never opened; not worth the risk
    items = _statements(lines)
    if items is None:
        return whole
    sections: list[tuple[str, list[list[str]]]] = []
    comment: list[str] = []
    statements: list[list[str]] = []
    for kind, chunk in items:
        if kind == "stmt":
            statements.append(chunk)
            continue
        if statements:
            sections.append(("\n".join(comment), statements))
            comment, statements = [], []
        if kind == "comment":
            comment.append(chunk[0].strip().lstrip("#").strip())
    if statements:
        sections.append(("\n".join(comment), statements))

    preamble: list[str] = []
    commands: list[ScriptCommand] = []
    for section_comment, section in sections:
        state = [_is_state_line(stmt[0]) for stmt in section]
        if all(state) and not commands:
            preamble.extend("\n".join(stmt) for stmt in section)
            continue
        if any(state):
            whole.errexit = errexit or any(_ERREXIT.search(stmt[0]) for stmt in section)
            return whole
        commands.append(ScriptCommand(section_comment, "\n".join("\n".join(stmt) for stmt in section)))
    preamble_text = "\n".join(preamble)
    errexit = errexit or bool(_ERREXIT.search(preamble_text))
    if not commands:
        return whole
    return SplitScript(preamble=preamble_text, commands=commands, split=True, errexit=errexit)


def split_statements(text: str) -> SplitScript | None:
    """One command per top-level statement, each with the comment block written above it.

    Leading state statements form the preamble; a state change after the first command would be
    lost between separately run commands, so such a script (or one that cannot be parsed safely)
    gives None."""
    lines = text.splitlines()
    shebang = lines[0] if lines and lines[0].startswith("#!") else ""
    if shebang:
        lines = lines[1:]
    if _CASE.search(text):
        return None
    items = _statements(lines)
    if items is None:
        return None
    preamble: list[str] = []
    commands: list[ScriptCommand] = []
    comment: list[str] = []
    for kind, chunk in items:
        if kind == "comment":
            comment.append(chunk[0].strip().lstrip("#").strip())
            continue
        if kind == "blank":
            continue
        statement = "\n".join(chunk)
        if _is_state_line(chunk[0]):
            if commands:
                return None
            preamble.append(statement)
        else:
            commands.append(ScriptCommand("\n".join(comment), statement))
        comment = []
    if not commands:
        return None
    preamble_text = "\n".join(preamble)
    errexit = bool(re.search(r"\s-[a-zA-Z]*e", shebang)) or bool(_ERREXIT.search(preamble_text))
    return SplitScript(preamble=preamble_text, commands=commands, split=True, errexit=errexit)
