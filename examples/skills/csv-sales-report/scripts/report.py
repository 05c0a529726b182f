"""Reference implementation of the CSV sales report procedure."""

import csv
import json
import sys
from collections import defaultdict


def main(path: str) -> None:
    totals: dict[str, float] = defaultdict(float)
    products: dict[str, float] = defaultdict(float)
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            revenue = int(row["units"]) * float(row["unit_price"])
            totals[row["region"]] += revenue
            products[row["product"]] += revenue
    ranked = sorted(products, key=lambda name: (-products[name], name))
    print(json.dumps({"region_totals": {k: round(v, 2) for k, v in totals.items()}, "top_products": ranked}))


if __name__ == "__main__":
    main(sys.argv[1])
