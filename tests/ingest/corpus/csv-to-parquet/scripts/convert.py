"""Convert CSV files to Parquet with explicit column types and a row-count check."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from utils import fail, human_bytes

TYPES = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "date": pa.date32(), "bool": pa.bool_()}


def load_schema(path: Path | None) -> dict[str, pa.DataType]:
    if path is None:
        return {}
    mapping = json.loads(path.read_text())
    unknown = sorted(set(mapping.values()) - set(TYPES))
    if unknown:
        fail(f"unknown types in schema: {', '.join(unknown)}")
    return {column: TYPES[kind] for column, kind in mapping.items()}


def convert(source: Path, target: Path, schema: dict[str, pa.DataType], compression: str) -> int:
    options = pacsv.ConvertOptions(column_types=schema, strings_can_be_null=True)
    table = pacsv.read_csv(source, convert_options=options)
    pq.write_table(table, target, compression=compression)
    written = pq.ParquetFile(target).metadata.num_rows
    if written != table.num_rows:
        fail(f"row count mismatch: read {table.num_rows}, wrote {written}")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("inputs", nargs="+", type=Path)
    parser.add_argument("--schema", type=Path, help="JSON object: column name -> int|float|str|date|bool")
    parser.add_argument("--compression", default="zstd", choices=["zstd", "snappy", "gzip", "none"])
    parser.add_argument("--out-dir", type=Path, default=Path("parquet"))
    args = parser.parse_args()
    schema = load_schema(args.schema)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for source in args.inputs:
        target = args.out_dir / (source.stem + ".parquet")
        rows = convert(source, target, schema, args.compression)
        print(f"{source} -> {target}: {rows} rows, {human_bytes(target.stat().st_size)}")


if __name__ == "__main__":
    main()
