"""Restock list and stock value from an inventory CSV export."""

import argparse
import csv
import json
import math
from collections import defaultdict


def plan(path: str, cover: float) -> dict:
    restock = []
    value: dict[str, float] = defaultdict(float)
    with open(path, newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            on_hand = int(row["on_hand"])
            target = math.ceil(int(row["reorder_point"]) * cover)
            value[row["warehouse"]] += on_hand * float(row["unit_cost"])
            if on_hand < target:
                restock.append({"sku": row["sku"], "warehouse": row["warehouse"], "order_qty": target - on_hand})
    restock.sort(key=lambda item: (-item["order_qty"], item["sku"], item["warehouse"]))
    return {
        "restock": restock,
        "value_by_warehouse": {name: round(total, 2) for name, total in sorted(value.items())},
        "items_below_cover": len(restock),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inventory")
    parser.add_argument("--cover", type=float, default=1.0, help="safety factor on the reorder point")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(plan(args.inventory, args.cover), handle, indent=2)


if __name__ == "__main__":
    main()
