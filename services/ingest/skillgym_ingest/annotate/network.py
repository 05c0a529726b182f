"""Network need: code that calls out, remote CLIs and tools, and what SKILL.md says in prose.

Code and commands count as written. Prose counts when it is stated plainly: "queries the arXiv
API" does, "see the docs on GitHub" (a reference), "no API key needed" (denied) and "you can
optionally upload it" (optional) do not. A plain "works offline" cancels the prose signals,
never a call found in code."""

from __future__ import annotations

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.qualifiers import Outline, Stance, distinct, gap, sentence_around, stance
from skillgym_ingest.annotate.rules import Hit, rule
from skillgym_ingest.annotate.services import API_SUFFIX, REMOTE_VERB, SERVICE_NAMES, SERVICE_PATTERN

NOT_LOCAL = r"(?!localhost|127\.|0\.0\.0\.0|\[::1\]|example\.(?:com|org))"
_URL = r"https?://" + NOT_LOCAL + r"[^\s`'\")<>]+"

CODE_RULES = [
    rule("runtime.network.python_http", r"\b(?:requests|httpx|aiohttp|urllib3)\.(?:get|post|put|patch|delete|request|"
         r"Session|Client|AsyncClient|ClientSession|PoolManager)\b|\burllib\.request\.urlopen|\burlopen\(",
         ["requests.", "httpx.", "aiohttp.", "urllib", "urlopen"], "code", human_docs=False),
    rule("runtime.network.js_http", r"\bfetch\(\s*[`'\"]https?://" + NOT_LOCAL + r"|\baxios\.(?:get|post|create)\b|"
         r"\bhttps?\.get\(", ["fetch(", "axios.", ".get("], "code", human_docs=False,
         anchors=["fetch(", "axios.", "http"]),
    rule("runtime.network.download_command", r"\b(?:curl|wget)\b[^\n|]*?https?://" + NOT_LOCAL,
         ["curl", "wget"], human_docs=False),
    rule("runtime.network.git_clone", r"\bgit\s+clone\s+(?:https?://|git@)", ["git clone"], human_docs=False),
    rule("runtime.network.web_tool", r"\b(?:WebFetch|WebSearch|web[_ ](?:search|fetch)|browse the web|search the web|"
         r"internet access|requires? (?:an? )?(?:internet|network) connection)\b",
         ["webfetch", "websearch", "web search", "web_search", "web_fetch", "web fetch", "browse the web",
          "search the web", "internet", "network connection"], "instructions", human_docs=False),
    rule("runtime.network.api_endpoint", r"https?://(?:api\.|[\w.-]*\.googleapis\.com|hooks\.slack\.com|"
         r"[\w.-]*\.amazonaws\.com|graph\.microsoft\.com)[\w./-]*", ["http"], "scripts"),
    rule("runtime.network.socket", r"\bsocket\.(?:create_connection|socket)\(|\bnew WebSocket\(|\bwebsockets?\.connect\(|"
         r"\bsmtplib\.SMTP(?:_SSL)?\(", ["socket", "smtplib"], "scripts"),
    rule("runtime.network.remote_cli", r"\b(?:gh\s+(?:pr|run|api|auth|repo|issue|release|workflow)|"
         r"gcloud\s+[a-z]|aws\s+(?:s3|ec2|lambda|iam|sts|configure|cloudformation|ecr|eks)\b|"
         r"az\s+(?:login|account|group|vm|storage|aks)|git\s+(?:push|pull|fetch)|"
         r"docker\s+(?:pull|push|login))\b",
         ["gh ", "gcloud ", "aws ", "az ", "git push", "git pull", "git fetch", "docker pull", "docker push",
          "docker login"], "instructions", human_docs=False),
    rule("runtime.network.mcp", r"\bmcp__\w+|\bMCP server\b|`[A-Z][A-Za-z]+:[a-z][a-z0-9]*(?:-[a-z0-9]+)+`",
         ["mcp", "`"], "instructions", human_docs=False, anchors=["mcp", "`"]),
    rule("runtime.network.model_hub", r"\b(?:hf_hub_download|snapshot_download|torch\.hub\.load|nltk\.download|"
         r"spacy\.cli\.download)\s*\(|\bhuggingface-cli\s+download\b|\bhf\s+download\b|"
         r"\b(?:from_pretrained|load_dataset|SentenceTransformer|pipeline)\(\s*(?:[^)\n]*?model\s*=\s*)?"
         r"[\"'][\w.-]+/[\w.-]+[\"']|\bvllm\s+serve\s+[\w.-]+/[\w.-]+|\bollama\s+(?:pull|run)\b",
         ["download", "hub.load", "from_pretrained", "load_dataset", "sentencetransformer", "pipeline(", "vllm",
          "ollama"], "code", human_docs=False),
]
PROSE_RULES = [
    rule("runtime.network.service", SERVICE_PATTERN, sorted({name.split()[0] for name in SERVICE_NAMES}),
         "skill_md", anchors=sorted({name.split()[0] for name in SERVICE_NAMES})),
    rule("runtime.network.model_download",
         r"\b(?:download(?:s|ed|ing)?|fetch(?:es|ed|ing)?|pull(?:s|ed|ing)?)\b" + gap(60) + r"\b(?:models?|weights|"
         r"checkpoints?|datasets?|corpora|corpus|embeddings|tokenizers?|vocabular(?:y|ies))\b|"
         r"\b(?:models?|weights|checkpoints?|datasets?)\b" + gap(50) + r"\b(?:downloaded|fetched|pulled)\b|"
         r"\bmodel downloads?\b", ["download", "fetch", "pull"], "skill_md"),
    rule("runtime.network.web_access",
         r"\b(?:search(?:es|ing)? (?:the )?(?:web|internet)|browse (?:the )?(?:web|internet)|"
         r"(?:from|on|over) the (?:web|internet)|web ?search(?:es)?|online (?:search|lookup|database|service|API)s?|"
         r"scrap(?:e|es|ing) (?:the )?(?:web ?(?:site|page)|site|page)s?|"
         r"(?:live|real[- ]time) (?:data|prices|quotes|rates|scores))\b",
         [" web", "web search", "websearch", "internet", "online ", "scrap", "live data", "live price", "live quote", "live rate", "live score",
          "real-time", "real time"], "skill_md"),
    rule("runtime.network.url_instruction",
         r"(?:\b(?:GET|POST|PUT|PATCH|DELETE)\s+|\b(?:[Qq]uery|[Cc]all|[Rr]equest|[Pp]oll|[Ff]etch|"
         r"[Dd]ownload(?: it| them)? from|[Uu]pload(?: it| them)? to|[Ss]end (?:it |them |a request )?to|"
         r"[Pp]ost (?:it |them )?to|[Cc]onnect to|[Ee]ndpoint:?|[Bb]ase URL:?)\s+`?|--url\s+)" + _URL
         + r"|(?<!\]\()https?://" + NOT_LOCAL + r"[^\s`'\")<>]*(?:\?[\w-]+=|/api/|/v\d+/)",
         ["http"], "skill_md", 0),
]
OFFLINE_RULES = [
    rule("runtime.network.offline",
         r"\b(?:(?:works?|runs?|working|running) (?:fully |completely |entirely )?offline|"
         r"without (?:any )?(?:network|internet)(?: access| connection)?|"
         r"no (?:network|internet)(?: access| connection)? (?:is )?(?:needed|required)|"
         r"never (?:downloads?|uploads?|fetch(?:es)?|calls? out|contacts?)|"
         r"(?:does not|doesn't|do not|don't) (?:need|require|use) (?:the |a |an )?(?:network|internet)|"
         r"HF_HUB_OFFLINE|TRANSFORMERS_OFFLINE|local_files_only\s*=\s*True|offline mode)",
         ["offline", "network", "internet", "never down", "never up", "never fetch", "never call", "never contact",
          "local_files_only"],
         "instructions", human_docs=False),
]
INSTALL_RULES = [
    rule("runtime.network.install_time", r"\b(?:pip3?|uv pip|npm|pnpm|yarn|apt(?:-get)?|brew|cargo|gem|conda)\s+"
         r"(?:install|add|i)\b", ["install", " add", " i "]),
]
NETWORK_RULES = CODE_RULES + PROSE_RULES + OFFLINE_RULES + INSTALL_RULES

# Signals an "offline" statement overrides: what prose claims and model-hub loaders (which read a
# local cache when told to), never an HTTP call in code.
_OVERRIDABLE = frozenset(r.rule for r in PROSE_RULES) | {"runtime.network.model_hub"}
# Words that make "works offline" a statement about later runs only ("after the first download").
_LATER_ONLY = ("after", "once", "later", "subsequent", "first run", "first use", "first time", "cached")


def _names_a_service(hit: Hit) -> bool:
    if API_SUFFIX.match(hit.excerpt[hit.end :]):
        return True
    return bool(REMOTE_VERB.search(sentence_around(hit.excerpt, hit.column, hit.end)))


def _credential_signals(hits: list[Hit]) -> set[str]:
    return {"api_key" if h.rule.startswith("runtime.env.") else "credentials" for h in hits}


def is_offline_statement(hit: Hit) -> bool:
    sentence = sentence_around(hit.excerpt, hit.column, hit.end).lower()
    return not any(word in sentence for word in _LATER_ONLY)


def network_annotation(
    hits: list[Hit], shape: Outline, *, network_tools: list[str], credential_hits: list[Hit]
) -> Annotation:
    """``hits`` are the ``runtime.network.*`` hits; ``credential_hits`` the credentials the skill
    needs (see :mod:`credentials`): a secret is for a remote service. The value: ``required``,
    ``optional`` (only optional or conditional network use), ``install_time`` (package installs)
    and ``signals`` (which kinds of evidence counted)."""
    counted: list[Hit] = []
    discounted: list[tuple[Hit, Stance]] = []
    offline = [h for h in hits if h.rule == "runtime.network.offline" and stance(h, shape, negatable=False)
               is Stance.STATED and is_offline_statement(h)]
    for hit in hits:
        if hit.rule in {"runtime.network.offline", "runtime.network.install_time"}:
            continue
        if hit.rule == "runtime.network.service" and not _names_a_service(hit):
            continue
        worded = stance(hit, shape)
        if worded is Stance.STATED and offline and hit.rule in _OVERRIDABLE:
            worded = Stance.NEGATED
        if worded is Stance.STATED:
            counted.append(hit)
        else:
            discounted.append((hit, worded))
    required = bool(counted or network_tools or credential_hits)
    value = {
        "required": required,
        "install_time": any(h.rule == "runtime.network.install_time" for h in hits),
        "optional": not required and any(worded is Stance.OPTIONAL for _, worded in discounted),
        "signals": sorted({h.rule.rsplit(".", 1)[1] for h in counted}
                          | ({"allowed_tools"} if network_tools else set()) | _credential_signals(credential_hits)),
    }
    evidence = [h.evidence() for h in counted + credential_hits]
    evidence += [Evidence(rule="runtime.network.allowed_tools", excerpt=", ".join(network_tools))] if network_tools else []
    evidence += [h.evidence() for h in offline]
    evidence += [Evidence(rule=f"{h.rule}:{s.value}", file=h.file, line=h.line, excerpt=h.excerpt) for h, s in discounted]
    return Annotation(value=value, evidence=distinct(evidence) or [Evidence(rule="runtime.network.none_found")])
