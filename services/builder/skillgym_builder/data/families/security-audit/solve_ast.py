# --- auditing the repository: Python through its syntax tree, JS/TS and config files by pattern ---
import ast
import json
import re
import sys

from audit_rules import SECRET_NAME, config_findings, repository_files, scope, write_report

TASK = json.loads(sys.argv[1])
RULES = scope(TASK)
WEAK_HASHES = {"md5", "sha1"}
SENSITIVE = re.compile(r"password|token|secret", re.I)


def call_name(node):
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def env_read(node):
    """The variable name when ``node`` reads the environment with a fallback: (name, fallback node)."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and isinstance(node.values[0], ast.Call):
        name = env_read(node.values[0])
        if name and name[1] is None:
            return name[0], node.values[-1]
    if isinstance(node, ast.Call) and call_name(node) in ("getenv", "get") and node.args:
        first = node.args[0]
        target = node.func.value if isinstance(node.func, ast.Attribute) else None
        from_env = call_name(node) == "getenv" or (isinstance(target, ast.Name) and target.id == "environ") or (
            isinstance(target, ast.Attribute) and target.attr == "environ")
        if from_env and isinstance(first, ast.Constant) and isinstance(first.value, str):
            default = node.args[1] if len(node.args) > 1 else None
            return first.value, default
    return None


class Modules:
    """Module-level string constants and functions of every parsed module, for tracing fallbacks."""

    def __init__(self, trees):
        self.constants, self.functions = {}, {}
        for tree in trees.values():
            for node in tree.body:
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self.constants[target.id] = node.value.value
                elif isinstance(node, ast.FunctionDef):
                    self.functions[node.name] = node

    def yields_value(self, node):
        if isinstance(node, ast.Constant):
            return node.value not in (None, "")
        if isinstance(node, ast.Name):
            return self.constants.get(node.id) not in (None, "")
        if isinstance(node, ast.Call):
            function = self.functions.get(call_name(node))
            if function is None:
                return True
            return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(function))
        return True


def falsy_flag(node):
    return isinstance(node, ast.Constant) and str(node.value).lower() in ("false", "0", "no", "off")


def python_findings(path, tree, modules):
    out = []
    for node in ast.walk(tree):
        read = env_read(node) if isinstance(node, (ast.Call, ast.BoolOp)) else None
        if read and read[1] is not None:
            name, default = read
            if SECRET_NAME.search(name) and modules.yields_value(default):
                out.append((path, node.lineno, "fallback-secret", name))
            elif re.search(r"auth|verify|csrf", name, re.I) and falsy_flag(default):
                out.append((path, node.lineno, "permissive-default", ""))
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value and any(
                    SECRET_NAME.search(n) for n in names):
                out.append((path, node.lineno, "hardcoded-credential", ""))
            if any(n.upper() == "DEBUG" for n in names) and isinstance(value, ast.Constant) and value.value is True:
                out.append((path, node.lineno, "permissive-default", ""))
            if any(re.search(r"origins|hosts", n, re.I) for n in names) and isinstance(value, ast.List) and any(
                    isinstance(e, ast.Constant) and e.value == "*" for e in value.elts):
                out.append((path, node.lineno, "permissive-default", ""))
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and SECRET_NAME.search(key.value) \
                        and isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value:
                    out.append((path, value.lineno, "hardcoded-credential", ""))
        if isinstance(node, ast.Call):
            out += crypto_call(path, node)
    return out


def crypto_call(path, node):
    name = call_name(node)
    text = ast.unparse(node)
    weak_hash = name in WEAK_HASHES or (name == "new" and node.args and isinstance(node.args[0], ast.Constant)
                                        and str(node.args[0].value).lower() in WEAK_HASHES)
    if weak_hash and SENSITIVE.search(ast.unparse(node.args[-1]) if node.args else ""):
        return [(path, node.lineno, "weak-crypto", "")]
    if name == "new" and "MODE_ECB" in text:
        return [(path, node.lineno, "weak-crypto", "")]
    if name == "new" and "MODE_CBC" in text:
        ivs = node.args[2:] + [k.value for k in node.keywords if k.arg == "iv"]
        if any(not isinstance(iv, ast.Name) for iv in ivs):
            return [(path, node.lineno, "weak-crypto", "")]
    if name == "chmod" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value == 0o777:
        return [(path, node.lineno, "permissive-default", "")]
    return []


JS_FALLBACK = re.compile(r"process\.env(?:\.([A-Z0-9_]+)|\[['\"]([A-Z0-9_]+)['\"]\])\s*(?:\|\||\?\?)\s*['\"`]")
JS_HASH = re.compile(r"createHash\(\s*['\"](md5|sha1)['\"]\s*\)\.update\(([^)]*)\)", re.I)
JS_CREDENTIAL = re.compile(r"^\s*(?:(?:const|let|var)\s+)?([A-Za-z_$][\w$]*)\s*[:=]\s*(['\"])([^'\"]+)\2\s*[,;]?\s*$")


def js_findings(path, text):
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        fallback = JS_FALLBACK.search(line)
        if fallback and SECRET_NAME.search(fallback.group(1) or fallback.group(2)):
            out.append((path, number, "fallback-secret", fallback.group(1) or fallback.group(2)))
        credential = JS_CREDENTIAL.match(line)
        if credential and SECRET_NAME.search(credential.group(1)):
            out.append((path, number, "hardcoded-credential", ""))
        weak_hash = JS_HASH.search(line)
        if weak_hash and SENSITIVE.search(weak_hash.group(2)):
            out.append((path, number, "weak-crypto", ""))
        if re.search(r"createCipheriv\(\s*['\"][\w-]*-ecb['\"]", line, re.I) or re.search(
                r"createCipheriv\([^)]*,\s*Buffer\.(alloc|from)\(", line):
            out.append((path, number, "weak-crypto", ""))
        if re.search(r"origin:\s*['\"]\*['\"]", line) or re.search(r"chmod(Sync)?\([^)]*0o?777", line):
            out.append((path, number, "permissive-default", ""))
    return out


texts, skipped, trees = {}, [], {}
for path in repository_files(RULES):
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        texts[path] = data.decode("utf-8")
    except UnicodeDecodeError:
        skipped.append(path)
        continue
    if path.endswith(".py"):
        try:
            trees[path] = ast.parse(texts[path])
        except SyntaxError:
            skipped.append(path)
modules = Modules(trees)
found = []
for path, text in texts.items():
    if path.endswith(".py"):
        if path in trees:
            found += python_findings(path, trees[path], modules)
    elif path.endswith((".js", ".ts")):
        found += js_findings(path, text)
    else:
        found += config_findings(path, text)
write_report(found, skipped)
