"""English is told by its prose: code does not make English text foreign, and Spanish, French or
German prose is not English because its letters are ASCII."""

from __future__ import annotations

from skillgym_ingest.language import english_from_words, prose_only

ENGLISH_WITH_CODE = """Clone website designs with multi-viewport screenshots and CSS extraction.

```
design-clone/
├── bin/   # CLI entry point
│   ├── cli.js
```

- **Font Awesome 6 Icons** - all icons use the CDN (see `fa-solid`)
"""
SPANISH_WITH_CODE = """Sistema unificado de skills para todos los asistentes del ecosistema.

## Comandos principales

```bash
./scripts/setup-all.sh --all --dry-run
```

Preview sin ejecutar. Añadir una nueva CLI con el comando de la lista.
"""


def words(text: str) -> list[str]:
    return prose_only(text).lower().split()


def test_code_and_trees_are_not_prose() -> None:
    text = prose_only(ENGLISH_WITH_CODE)
    assert "cli.js" not in text and "fa-solid" not in text and "Clone website designs" in text


def test_english_with_code_is_english() -> None:
    assert english_from_words(words(ENGLISH_WITH_CODE)).language == "en"


def test_spanish_with_code_is_not_english() -> None:
    guess = english_from_words(words(SPANISH_WITH_CODE))
    assert guess.language == "other", guess


def test_french_and_german_prose_are_not_english() -> None:
    french = "Cette compétence est utilisée pour les rapports et elle ne doit pas être utilisée sans les données."
    german = "Diese Fähigkeit wird für die Berichte verwendet und sie ist nicht für die Daten der Kunden."
    assert english_from_words(words(french)).language == "other"
    assert english_from_words(words(german)).language == "other"
