"""The notes of a notes-vault instance: Markdown files with front matter (titles, tags in flow
or block style, dates), wikilinks (plain, aliased, to headings, by path), inline tags, tasks
with due dates, and planted orphans, broken links, duplicate titles, overdue tasks and, when
asked, a note whose front matter does not parse and decoy folders outside the vault."""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass

TOPICS = ["Alpha launch", "Reading list", "Garden plan", "Budget review", "Hiring loop", "Kitchen remodel",
          "Conference talk", "Team offsite", "Onboarding guide", "Research log", "Vendor shortlist", "Trip to Lisbon",
          "Podcast ideas", "Sleep experiment", "Quarterly goals", "Design system", "Migration notes", "Book club",
          "Marathon training", "Tax documents", "Client Acme", "Client Borealis", "Recipe box", "Home network",
          "Photo archive", "Writing habit", "Piano practice", "Mentoring", "Open source", "Language learning",
          "Incident review", "Product roadmap", "Customer interviews", "Pricing study", "Board meeting",
          "Course notes", "Bike repair", "Volunteer shifts", "Wedding plans", "Car lease", "Newsletter"]
FOLDERS = ["projects", "areas", "journal", "people", "resources"]
TAGS = ["work", "home", "idea", "reading", "health", "finance", "project/alpha", "project/beta", "draft",
        "review", "travel", "learning"]
HEADINGS = ["Summary", "Next steps", "Links", "Decisions", "Log"]
TASKS = ["Email the vendor", "Renew the license", "Book the venue", "Send the draft", "Pay the invoice",
         "Call the bank", "Update the budget", "Order spare parts", "Schedule the review", "Back up the photos"]


@dataclass
class Vault:
    files: dict[str, str]  # path relative to /app -> text
    today: str
    ignored: list[str]  # folders (vault-relative) that are not part of the vault


def _front_matter(rng: random.Random, title: str | None, tags: list[str], created: str, noise: bool) -> list[str]:
    lines = ["---"]
    if title is not None:
        lines.append(f'title: "{title}"' if noise and rng.random() < 0.5 else f"title: {title}")
    if tags:
        if noise and rng.random() < 0.5:
            lines += ["tags:"] + [f'  - "#{t}"' if rng.random() < 0.3 else f"  - {t}" for t in tags]
        else:
            lines.append(f"tags: [{', '.join(tags)}]")
    lines += [f"created: {created}", "---", ""]
    return lines


def _link(rng: random.Random, target: str, folder: str, headings: bool, noise: bool) -> str:
    forms = [target, f"{target}|{rng.choice(['see here', 'this note', target.lower()])}"]
    if headings:
        heading = rng.choice(HEADINGS)
        forms += [f"{target}#{heading}", f"{target}#{heading}|{heading.lower()}", f"{folder}/{target}" if folder else target]
    if noise:
        forms += [target.lower(), f"{target}.md"]
    return f"[[{rng.choice(forms)}]]"


def make_vault(rng: random.Random, *, notes: int, noise: bool, decoys: bool, headings: bool, broken_yaml: bool) -> Vault:
    today = datetime.date(2025, rng.randint(3, 11), rng.randint(1, 28))
    shuffled = rng.sample(TOPICS, len(TOPICS))
    names = [shuffled[i % len(TOPICS)] + (f" {i // len(TOPICS) + 1}" if i >= len(TOPICS) else "") for i in range(notes)]
    folders = {name: rng.choice([*FOLDERS, ""]) for name in names}
    orphans = set(rng.sample(names[1:], max(2, len(names) // 6)))
    linkable = [n for n in names if n not in orphans]
    duplicates = rng.sample(names, 2)
    titles = {name: name for name in names}
    for original in duplicates:  # a second note carries the same title under another file name
        copy = f"{original} (old)"
        names.append(copy)
        folders[copy] = "archive"
        titles[copy] = original
        orphans.add(copy)
    broken = rng.sample(names, 2)
    invalid = rng.choice(names) if broken_yaml else None
    files: dict[str, str] = {}
    for name in names:
        tags = sorted(rng.sample(TAGS, rng.randint(0, 3)))
        created = (today - datetime.timedelta(days=rng.randint(10, 400))).isoformat()
        lines = _front_matter(rng, titles[name] if rng.random() < 0.7 or titles[name] != name else None, tags,
                              created, noise)
        if name == invalid:
            lines = ["---", f"title: {titles[name]}", f"tags: [{', '.join(tags or ['draft'])}", "---", ""]
        lines += [f"# {titles[name]}", "", f"## {rng.choice(HEADINGS)}", ""]
        targets = rng.sample([n for n in linkable if n != name], rng.randint(0, 3))
        if name not in orphans and rng.random() < 0.6:
            targets.append(rng.choice(linkable))
        for target in targets:
            lines.append(f"Related: {_link(rng, target, folders[target], headings, noise)}.")
        if name in broken:
            lines.append(f"See also [[{rng.choice(['Meeting notes 2019', 'Untitled', 'Old plans'])}]].")
        for tag in rng.sample(TAGS, rng.randint(0, 2)):
            lines.append(f"Filed under #{tag} for now.")
        if noise:
            lines += ["", "```", "# not a heading, #not-a-tag, [[Not a link]]", "- [ ] Not a task 📅 2000-01-01", "```",
                      f"Source: https://example.org/page#{rng.choice(HEADINGS).lower()} and `#inline-code`."]
        for _ in range(rng.randint(0, 2)):
            due = today + datetime.timedelta(days=rng.randint(-30, 30))
            done = "x" if rng.random() < 0.3 else " "
            lines.append(f"- [{done}] {rng.choice(TASKS)} 📅 {due.isoformat()}")
        path = f"{folders[name]}/{name}.md" if folders[name] else f"{name}.md"
        files[f"vault/{path}"] = "\n".join(lines) + "\n"
    # a link into an orphan from a folder outside the vault must not make it linked
    ignored = []
    if decoys:
        ignored = [".trash", "templates"]
        victim = sorted(orphans)[0]
        files["vault/.trash/Scratch.md"] = f"---\ntags: [trash]\n---\n\nDraft linking [[{victim}]] #trash\n- [ ] Old task 📅 2020-01-01\n"
        files["vault/templates/Daily note.md"] = "---\ntags: [template]\ntitle: Daily note\n---\n\n# {{date}}\n\n- [ ] Plan the day 📅 2020-01-01\n[[Reading list]]\n"
    return Vault(files, today.isoformat(), ignored)
