# --- auditing the repository line by line with patterns (no syntax trees) ---
import json
import re
import sys

from audit_rules import SECRET_NAME, config_findings, repository_files, scope, write_report

TASK = json.loads(sys.argv[1])
RULES = scope(TASK)
SENSITIVE = re.compile(r"password|token|secret", re.I)
PY_ENV = re.compile(r"""(?:os\.)?(?:getenv|environ\.get)\(\s*['"](\w+)['"]\s*(?:,\s*(.+?))?\s*\)\s*(?:or\s+(.+?))?\s*\)?\s*$""")
PY_LITERAL = re.compile(r"""^\s*(\w+)\s*(?::\s*\w+)?\s*=\s*(['"])([^'"]+)\2\s*$""")
PY_DICT_LITERAL = re.compile(r"""^\s*['"](\w+)['"]\s*:\s*(['"])([^'"]+)\2\s*,?\s*$""")
PY_HASH = re.compile(r"""hashlib\.(?:md5|sha1)\(([^)]*)|hashlib\.new\(\s*['"](?:md5|sha1)['"]\s*,\s*([^)]*)""", re.I)
CONSTANT = re.compile(r"""^([A-Za-z_]\w*)\s*=\s*(['"])(.*)\2\s*$""")
FUNCTION = re.compile(r"^def\s+(\w+)\(")
JS_ENV = re.compile(r"""process\.env(?:\.(\w+)|\[\s*['"](\w+)['"]\s*\])\s*(\|\||\?\?)\s*['"]""")
JS_LITERAL = re.compile(r"""^\s*(?:const\s+|let\s+|var\s+)?(\w+)\s*[:=]\s*['"]([^'"]+)['"]\s*[,;]?\s*$""")


def helper_tables(sources):
    """Module-level string constants and, per function, whether it ever returns a value."""
    constants, returns = {}, {}
    for text in sources.values():
        current = None
        for line in text.split("\n"):
            constant, function = CONSTANT.match(line), FUNCTION.match(line)
            if constant:
                constants[constant.group(1)] = constant.group(3)
            if function:
                current = function.group(1)
                returns[current] = False
            elif current and line.startswith((" ", "\t")):
                returns[current] = returns[current] or bool(re.match(r"\s+return\s+\S", line))
            elif line.strip():
                current = None
    return constants, returns


def yields(expression, constants, returns):
    expression = expression.strip().rstrip(")") if expression.count(")") > expression.count("(") else expression.strip()
    if expression[:1] in "'\"":
        return len(expression.strip("'\"")) > 0
    call = re.match(r"(\w+)\(", expression)
    if call:
        return returns.get(call.group(1), True)
    return bool(constants.get(expression, ""))


def python_lines(path, text, constants, returns):
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        read = PY_ENV.search(line)
        if read:
            name, default = read.group(1), read.group(2) or read.group(3)
            if default and SECRET_NAME.search(name) and yields(default, constants, returns):
                out.append((path, number, "fallback-secret", name))
            elif default and re.search(r"auth|verify|csrf", name, re.I) and re.search(r"['\"](false|0)['\"]", default):
                out.append((path, number, "permissive-default", ""))
        literal = PY_LITERAL.match(line) or PY_DICT_LITERAL.match(line)
        if literal and SECRET_NAME.search(literal.group(1)):
            out.append((path, number, "hardcoded-credential", ""))
        weak = PY_HASH.search(line)
        if weak and SENSITIVE.search(weak.group(1) or weak.group(2) or ""):
            out.append((path, number, "weak-crypto", ""))
        if "MODE_ECB" in line or re.search(r"MODE_CBC\s*,\s*(iv\s*=\s*)?b['\"]", line):
            out.append((path, number, "weak-crypto", ""))
        if re.match(r"\s*DEBUG\s*=\s*True\b", line) or re.search(r"(ORIGINS|HOSTS)\s*=\s*\[\s*['\"]\*['\"]\s*\]", line) \
                or re.search(r"chmod\(.*0o777", line):
            out.append((path, number, "permissive-default", ""))
    return out


def js_lines(path, text):
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        read = JS_ENV.search(line)
        if read and SECRET_NAME.search(read.group(1) or read.group(2)):
            out.append((path, number, "fallback-secret", read.group(1) or read.group(2)))
        literal = JS_LITERAL.match(line)
        if literal and SECRET_NAME.search(literal.group(1)):
            out.append((path, number, "hardcoded-credential", ""))
        weak = re.search(r"createHash\(\s*['\"](?:md5|sha1)['\"]\s*\)\.update\(([^;]*)", line, re.I)
        cipher = re.search(r"createCipheriv\(([^;]*)", line)
        if (weak and SENSITIVE.search(weak.group(1))) or (cipher and re.search(r"-ecb['\"]|Buffer\.(alloc|from)\(",
                                                                                cipher.group(1))):
            out.append((path, number, "weak-crypto", ""))
        if re.search(r"origin\s*:\s*['\"]\*['\"]|chmod(Sync)?\(.*0o777", line):
            out.append((path, number, "permissive-default", ""))
    return out


sources, skipped = {}, []
for path in repository_files(RULES):
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8")
        if path.endswith(".py"):
            compile(text, path, "exec", dont_inherit=True)
    except (UnicodeDecodeError, SyntaxError):
        skipped.append(path)
        continue
    sources[path] = text
python = {p: t for p, t in sources.items() if p.endswith(".py")}
constants, returns = helper_tables(python)
found = []
for path, text in sources.items():
    if path in python:
        found += python_lines(path, text, constants, returns)
    elif path.endswith((".js", ".ts")):
        found += js_lines(path, text)
    else:
        found += config_findings(path, text)
write_report(found, skipped)
