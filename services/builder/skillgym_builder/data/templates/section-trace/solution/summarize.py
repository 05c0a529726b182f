"""Step 2: count queries per section from step 1's mapping."""

import json
from collections import Counter

with open("out/locations.json", encoding="utf-8") as handle:
    locations = json.load(handle)
with open("out/summary.json", "w", encoding="utf-8") as out:
    json.dump(dict(Counter(locations.values())), out, indent=2)
