"""Remote services a skill may talk to, by the names people write in prose.

A name alone is not a need ("see our GitHub", "faster than OpenAI Whisper"); :mod:`network`
counts it only with an API-like word after it or a verb of remote work in the same sentence."""

from __future__ import annotations

import re

SERVICE_NAMES = (
    "airtable", "alpha vantage", "anthropic", "arxiv", "asana", "azure", "bigquery", "binance", "bitbucket",
    "brave search", "cloudflare", "coingecko", "confluence", "crossref", "datadog", "discord", "docker hub",
    "dropbox", "figma", "firebase", "gemini", "github", "gitlab", "gmail", "google calendar", "google cloud",
    "google docs", "google drive", "google maps", "google search", "google sheets", "hacker news",
    "hugging face", "huggingface", "hubspot", "jira", "kaggle", "mailchimp", "mapbox", "netlify", "ncbi",
    "nominatim", "notion", "npm registry", "onedrive", "open-meteo", "openalex", "openai", "openrouter",
    "openstreetmap", "openweathermap", "pagerduty", "perplexity", "pinecone", "pubmed", "pypi", "reddit",
    "salesforce", "semantic scholar", "sendgrid", "sentry", "serpapi", "sharepoint", "shopify", "slack",
    "snowflake", "spotify", "stripe", "supabase", "tavily", "telegram", "trello", "twilio", "twitter",
    "vercel", "whatsapp", "wikidata", "wikipedia", "wolfram alpha", "yahoo finance", "youtube", "zendesk",
    "zotero",
)
SERVICE_PATTERN = (
    r"\b(?:" + "|".join(re.escape(name).replace(r"\ ", r"\s+") for name in sorted(SERVICE_NAMES, key=len, reverse=True))
    + r")\b"
)
API_SUFFIX = re.compile(
    r"^[\s'\u2019s]*(?:REST\s+|GraphQL\s+|export\s+|public\s+)?(?:API|MCP|SDK|webhooks?|endpoints?|hub|"
    r"registry|workspace|database|E-utilities)\b",
    re.IGNORECASE,
)
# Verbs of remote work; one in the same sentence as a service name makes the name a need.
REMOTE_VERB = re.compile(
    r"\b(?:quer(?:y|ies|ied|ying)|fetch(?:es|ed|ing)?|download(?:s|ed|ing)?|pull(?:s|ed|ing)?|push(?:es|ed|ing)?|"
    r"upload(?:s|ed|ing)?|post(?:s|ed|ing)?|send(?:s|ing)?|sent|sync(?:s|ed|ing)?|call(?:s|ed|ing)?|"
    r"look(?:s|ed|ing)?\s+up|search(?:es|ed|ing)?|retriev(?:e|es|ed|ing)|scrap(?:e|es|ed|ing)|crawl(?:s|ed|ing)?|"
    r"publish(?:es|ed|ing)?|get|gets|getting|read(?:s|ing)?\s+from|writ(?:e|es|ing)\s+(?:to|into)|"
    r"creat(?:e|es|ing)|captur(?:e|es|ing)|fil(?:e|es|ing)\s+(?:it\s+|them\s+)?(?:in|into)|connect(?:s|ed|ing)?\s+to|"
    r"interact(?:s|ing)?\s+with|subscrib(?:e|es|ing)|stream(?:s|ing)?|log(?:s|ging)?\s+in|sign(?:s|ing)?\s+in|"
    r"import(?:s|ing)?\s+from|export(?:s|ing)?\s+to|via|through)\b(?!-)",
    re.IGNORECASE,
)
