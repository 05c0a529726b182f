"""Network need: code that calls out, remote CLIs and tools, and what SKILL.md says in prose.

Code and commands count as written. Prose counts when it is stated plainly: "queries the arXiv
API" does, "see the docs on GitHub" (a reference), "no API key needed" (denied) and "you can
optionally upload it" (optional) do not. A plain "works offline" cancels the prose signals,
never a call found in code."""

from __future__ import annotations

import re

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.qualifiers import (
    Outline,
    Stance,
    distinct,
    gap,
    in_table_row,
    is_prose,
    sentence_around,
    stance,
)
from skillgym_ingest.annotate.rules import Hit, rule
from skillgym_ingest.annotate.services import API_SUFFIX, REMOTE_VERB, SERVICE_NAMES, SERVICE_PATTERN

# the thing downloaded follows its verb within a few words ("downloads the pretrained model"), not
# in a later clause ("fetch a URL and add it to the corpus")
_OBJECT_WORDS = r"(?:\s+(?!(?:and|then|or|to|into|no|not|without)\b)[\w'./-]+){0,4}?\s+"
NOT_LOCAL = r"(?!localhost|127\.|0\.0\.0\.0|\[::1\]|example\.(?:com|org))"
_URL = r"https?://" + NOT_LOCAL + r"[^\s`'\")<>]+"

CODE_RULES = [
    rule("runtime.network.python_http", r"\b(?:requests|httpx|aiohttp|urllib3)\.(?:get|post|put|patch|delete|request|"
         r"Session|Client|AsyncClient|ClientSession|PoolManager)\b|\burllib\.request\.urlopen|\burlopen\(",
         ["requests.", "httpx.", "aiohttp.", "urllib", "urlopen"], "code", human_docs=False),
    rule("runtime.network.js_http", r"\bfetch\(\s*[`'\"]https?://" + NOT_LOCAL + r"|\baxios\.(?:get|post|create)\b|"
         r"\bhttps?\.get\(", ["fetch(", "axios.", ".get("], "code", human_docs=False,
         anchors=["fetch(", "axios.", "http"]),
    rule("runtime.network.js_fetch_call", r"\bawait\s+fetch\(", ["await"], "scripts", human_docs=False,
         anchors=["await"]),
    rule("runtime.network.client_library",
         r"(?:^|\n)\s*(?:import|from)\s+(?:imaplib|poplib|ftplib|paramiko|pysftp|boto3|botocore|googleapiclient|"
         r"slack_sdk|tweepy|praw|twilio|sendgrid|edge_tts|gtts|openai|anthropic|google\.generativeai|yfinance|wikipedia|"
         r"curl_cffi|serpapi|tavily|firecrawl|notion_client|github|jira|atlassian)\b|\brequire\(\s*[\"'](?:nodemailer|imap-simple|imapflow|"
         r"ssh2|@aws-sdk/[\w-]+|googleapis|@slack/web-api|twilio)[\"']|"
         r"\bfrom\s+[\"'](?:nodemailer|imap-simple|imapflow|ssh2|@aws-sdk/[\w-]+|googleapis|@slack/web-api)[\"']",
         ["import", "from", "require"], "scripts", human_docs=False),
    rule("runtime.network.download_call",
         r"\b\w*download\w*\(\s*(?:[\w.]+\s*=\s*)?[\"']https?://" + NOT_LOCAL, ["download"], "scripts",
         human_docs=False),
    rule("runtime.network.download_command", r"\b(?:curl|wget)\b[^\n|]*?https?://" + NOT_LOCAL,
         ["curl", "wget"], human_docs=False),
    # flags may come first, and the address may sit in a variable named for it ("$repo_url")
    rule("runtime.network.git_clone", r"\bgit\s+clone\s+(?:--?[\w-]+(?:=\S+)?\s+)*[\"']?(?:https?://|git@|"
         r"\$\{?\w*(?:url|repo|remote|upstream)\w*\}?[\"']?(?:\s|$))", ["git clone"], human_docs=False),
    rule("runtime.network.web_tool", r"\b(?:WebFetch|WebSearch|web[_ ](?:search|fetch)|browse the web|search the web|"
         r"internet access|requires? (?:an? )?(?:internet|network) connection)\b",
         ["webfetch", "websearch", "web search", "web_search", "web_fetch", "web fetch", "browse the web",
          "search the web", "internet", "network connection"], "instructions", human_docs=False),
    rule("runtime.network.api_endpoint", r"https?://(?:api\.|[\w.-]*\.googleapis\.com|hooks\.slack\.com|"
         r"[\w.-]*\.amazonaws\.com|graph\.microsoft\.com)[\w./-]*", ["http"], "scripts"),
    # A Unix-domain socket or a connection to this machine (a local server a test starts) is no network need.
    rule("runtime.network.socket", r"\bsocket\.create_connection\((?!\s*\(?\s*[\"'](?:localhost|127\.0\.0\.1|::1)[\"'])|"
         r"\bsocket\.socket\((?!\s*(?:socket\.)?AF_UNIX)|\bnew WebSocket\(|\bwebsockets?\.connect\(|"
         r"\bsmtplib\.SMTP(?:_SSL)?\(", ["socket", "smtplib"], "scripts"),
    rule("runtime.network.remote_cli", r"\b(?:gh\s+(?:pr|run|api|auth|repo|issue|release|workflow)|"
         r"gcloud\s+[a-z]|aws\s+(?:s3|ec2|lambda|iam|sts|configure|cloudformation|ecr|eks)\b|"
         r"az\s+(?:login|account|group|vm|storage|aks)|git\s+(?:push|pull|fetch)|"
         r"docker\s+(?:pull|push|login)|(?:terraform|tofu)\s+(?:init|plan|apply|destroy|import|refresh)|"
         r"kubectl\s+(?:apply|get|describe|drain|cordon|uncordon|rollout|delete|exec|logs|scale|top|patch)|"
         r"helm\s+(?:install|upgrade|repo\s+add|pull)|ssh\s+(?:-\S+\s+)*[\w.$-]+@[\w.${}-]+|scp\s)\b",
         ["gh ", "gcloud ", "aws ", "az ", "git push", "git pull", "git fetch", "docker pull", "docker push",
          "docker login", "terraform ", "tofu ", "kubectl ", "helm ", "ssh ", "scp "], "instructions",
         flags=0, human_docs=False),  # commands are written in lower case; "AWS S3" in a heading is a topic
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
         # "pull" is left out here: "pull the right values into the model" is spreadsheet work
         r"\b(?:download(?:s|ed|ing)?|fetch(?:es|ed|ing)?)\b" + _OBJECT_WORDS + r"\b(?:models?|weights|"
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
    rule("runtime.network.account",
         r"\b(?:requires?|needs?)\b" + gap(40) + r"\b(?:logged[- ]in|signed[- ]in)?\s*(?:[\w'\u2019-]+\s+){0,3}"
         r"(?:account|membership|subscription)\b",
         ["require", "need"], "skill_md"),
    rule("runtime.network.connectivity",
         r"\b(?:check|verify|test|probe|confirm)(?:s|ing)?\b" + gap(40) + r"\b(?:connectivity|reachability|"
         r"external DNS|DNS (?:records?|resolution)|(?:the )?(?:remote|external) (?:host|endpoint|service|entry point))\b",
         ["check", "verif", "test", "probe", "confirm"], "skill_md"),
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
         r"never (?:downloads?|uploads?|fetch(?:es)?|calls? out|contacts?)\b|"
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

_PROSE_RULE_NAMES = frozenset(r.rule for r in PROSE_RULES)
# Signals an "offline" statement overrides: what prose claims and model-hub loaders (which read a
# local cache when told to), never an HTTP call in code.
_OVERRIDABLE = frozenset(r.rule for r in PROSE_RULES) | {"runtime.network.model_hub"}
# Words that make "works offline" a statement about later runs only ("after the first download").
_LATER_ONLY = ("after", "once", "later", "subsequent", "first run", "first use", "first time", "cached")


# "the pushes", "force pushes", "direct-terminal pushes": the word is a noun there, not remote work
_NOUN_BEFORE = re.compile(r"\b(?:the|a|an|its|their|your|our|any|force|\w+-\w+)\s+$", re.IGNORECASE)


def _names_a_service(hit: Hit) -> bool:
    text, start, end = hit.in_context()
    if API_SUFFIX.match(text[end:]):
        return True
    sentence = sentence_around(text, start, end)
    return any(not _NOUN_BEFORE.search(sentence[: verb.start()]) for verb in REMOTE_VERB.finditer(sentence))


def _credential_signals(hits: list[Hit]) -> set[str]:
    return {"api_key" if h.rule.startswith("runtime.env.") else "credentials" for h in hits}


def is_offline_statement(hit: Hit) -> bool:
    sentence = sentence_around(*hit.in_context()).lower()
    return not any(word in sentence for word in _LATER_ONLY)


# Fenced blocks in these languages are files the skill writes (CI workflows, manifests, Dockerfiles):
# a command inside one runs wherever that file is used, not when the skill is followed.
_WRITTEN_FILE_FENCES = frozenset({"yaml", "yml", "json", "toml", "hcl", "terraform", "dockerfile", "ini", "xml"})
_OFFLINE_SWITCH = re.compile(r"HF_HUB_OFFLINE|TRANSFORMERS_OFFLINE|local_files_only\s*=\s*True", re.IGNORECASE)
_COMMENT_LINE = re.compile(r"\s*(?:#(?!!)|//|/\*|\*|--\s)")
_PIPED_INSTALLER = re.compile(r"\|\s*(?:sudo\s+)?(?:ba|z)?sh\b")
# an MCP server may run locally over stdio: naming one is not a network need by itself
_NOT_BY_ITSELF = frozenset({"runtime.network.mcp"})
# git's remotes may be local paths (a bare repository beside the work tree): pushing is no network need by itself
_LOCAL_ABLE = re.compile(r"\bgit\s+(?:push|pull|fetch)\b")
# secrets an application keeps for itself (it signs sessions with them): not keys to a remote service
_OWN_SECRET = re.compile(r"\b(?:JWT|SESSION|COOKIE|CSRF|APP|DJANGO|FLASK|SIGNING|ENCRYPTION)_SECRET(?:_KEY)?\b|"
                         r"\b(?:DJANGO_|FLASK_|APP_)?SECRET_KEY\b")


def _speaks_for_the_skill(hit: Hit) -> bool:
    """An offline statement in prose, or an offline switch in code; a code comment that one module
    never fetches says nothing of what the skill's procedure does."""
    return is_prose(hit.file) or bool(_OFFLINE_SWITCH.search(hit.excerpt))


def _in_a_comment(hit: Hit) -> bool:
    """A hit on a comment line of a script: what a comment names is not run."""
    return not is_prose(hit.file) and _COMMENT_LINE.match(hit.excerpt) is not None


def _prose_rule_in_code(hit: Hit, shape: Outline) -> bool:
    """A rule written for prose that matched inside a fenced block of SKILL.md (a query string, a
    sample log) or in a table row: the code rules judge what code does."""
    if hit.rule not in _PROSE_RULE_NAMES or hit.file != shape.path:
        return False
    # a table row lists things (features, token kinds, supported tools); the procedure is in sentences
    language = shape.fence_language(hit.line)
    if language == "" and _DIAGRAM_STEP.match(hit.excerpt):
        return False  # an untagged block of arrows and words is a flow diagram of the procedure
    return language is not None or in_table_row(hit)


_DIAGRAM_STEP = re.compile(r"^\s*(?:\u2192|->|=>|[\u2502\u251c\u2514\u2500 ]+)\s*[A-Za-z][\w ,'\u2019/()-]{8,}[.:]?\s*$")


def _is_written_file(hit: Hit, shape: Outline) -> bool:
    return hit.file == shape.path and shape.fence_language(hit.line) in _WRITTEN_FILE_FENCES


# an address in markup a script writes (a report's stylesheet or font) is fetched by whoever opens
# the page, not by the skill
_MARKUP_ADDRESS = re.compile(r"<(?:link|script|img|source|iframe|a)\b[^>]*\b(?:href|src)\s*=\s*[\"']?https?://", re.I)


def _in_markup(hit: Hit) -> bool:
    return hit.rule == "runtime.network.api_endpoint" and bool(_MARKUP_ADDRESS.search(hit.excerpt))


def _is_installer(hit: Hit) -> bool:
    return hit.rule == "runtime.network.download_command" and bool(_PIPED_INSTALLER.search(hit.excerpt[hit.column:]))


def network_annotation(
    hits: list[Hit], shape: Outline, *, network_tools: list[str], credential_hits: list[Hit],
    data_builders: frozenset[str] = frozenset(),
) -> Annotation:
    """``hits`` are the ``runtime.network.*`` hits; ``credential_hits`` the credentials the skill
    needs (see :mod:`credentials`): a secret is for a remote service; ``data_builders`` the scripts
    that rebuild the skill's bundled data, which the procedure never runs. The value: ``required``,
    ``optional`` (only optional or conditional network use), ``install_time`` (package installs)
    and ``signals`` (which kinds of evidence counted)."""
    counted: list[Hit] = []
    discounted: list[tuple[Hit, Stance]] = []
    offline = [h for h in hits if h.rule == "runtime.network.offline" and stance(h, shape, negatable=False)
               is Stance.STATED and is_offline_statement(h) and _speaks_for_the_skill(h)]
    installers: list[Hit] = []
    for hit in hits:
        if hit.rule in {"runtime.network.offline", "runtime.network.install_time"}:
            continue
        if hit.rule == "runtime.network.service" and not _names_a_service(hit):
            continue
        if _is_installer(hit):
            installers.append(hit)
            continue
        if _in_a_comment(hit):
            continue
        if (hit.rule in _NOT_BY_ITSELF or _is_written_file(hit, shape) or _prose_rule_in_code(hit, shape)
                or _in_markup(hit)
                or hit.file in data_builders
                or (hit.rule == "runtime.network.remote_cli" and _LOCAL_ABLE.match(hit.excerpt[hit.column:]))):
            discounted.append((hit, Stance.OPTIONAL))
            continue
        worded = stance(hit, shape)
        if worded is Stance.STATED and offline and hit.rule in _OVERRIDABLE:
            worded = Stance.NEGATED
        if worded is Stance.STATED:
            counted.append(hit)
        else:
            discounted.append((hit, worded))
    credential_hits = [h for h in credential_hits if not _OWN_SECRET.fullmatch(h.excerpt[h.column:h.end])]
    # allowed-tools grants web access; it is a need when the skill's text also reaches for the network
    # (not when the only addresses are in a reference section or a template of the reader's own docs)
    tools_used = bool(network_tools) and bool(counted or [h for h, s in discounted if s is not Stance.REFERENCE])
    required = bool(counted or tools_used or credential_hits)
    value = {
        "required": required,
        "install_time": bool(installers) or any(h.rule == "runtime.network.install_time" for h in hits),
        "optional": not required and any(worded is Stance.OPTIONAL for _, worded in discounted),
        "signals": sorted({h.rule.rsplit(".", 1)[1] for h in counted}
                          | ({"allowed_tools"} if tools_used else set()) | _credential_signals(credential_hits)),
    }
    evidence = [h.evidence() for h in counted + credential_hits]
    evidence += [Evidence(rule="runtime.network.allowed_tools", excerpt=", ".join(network_tools))] if network_tools else []
    evidence += [h.evidence() for h in offline]
    evidence += [Evidence(rule=f"{h.rule}:{s.value}", file=h.file, line=h.line, excerpt=h.excerpt) for h, s in discounted]
    return Annotation(value=value, evidence=distinct(evidence) or [Evidence(rule="runtime.network.none_found")])
