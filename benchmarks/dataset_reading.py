"""Reading 10,000 rows: `task.kind = "datasets"` (jsonl, parquet, messages rendered with a chat
template) against rlvr's own jsonl reader (`task.kind = "jsonl"`), one timing each, in a
scratch folder. Results: docs/bring-your-own.md, "Cost of reading".

    python benchmarks/dataset_reading.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rlvr.tasks import load_jsonl
from rlvr.tasks.chat import renderer
from rlvr.tasks.files import Columns, load_file

ROWS = 10_000
REPO = Path(__file__).resolve().parents[1]


def chat_tokenizer():
    spec = importlib.util.spec_from_file_location("make_chat_model", REPO / "scripts" / "make_chat_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.bpe_tokenizer()


def main() -> None:
    os.chdir(tempfile.mkdtemp())
    os.environ.setdefault("HF_DATASETS_CACHE", str(Path.cwd() / "cache"))  # a first read is a first read
    rows = [{"prompt": f"What is {i}+{i + 1}?", "answer": str(2 * i + 1)} for i in range(ROWS)]
    Path("b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pq.write_table(pa.Table.from_pylist(rows), "b.parquet")
    chats = [{"messages": [{"role": "system", "content": "Answer with the number only."},
                           {"role": "user", "content": r["prompt"]}], "answer": r["answer"]} for r in rows]
    pq.write_table(pa.Table.from_pylist(chats), "m.parquet")
    tok = chat_tokenizer()
    cases = [("kind = jsonl (baseline)", lambda: load_jsonl("b.jsonl")),
             ("datasets jsonl, first read", lambda: load_file("b.jsonl", Columns(), None)),
             ("datasets jsonl, cached", lambda: load_file("b.jsonl", Columns(), None)),
             ("datasets parquet", lambda: load_file("b.parquet", Columns(), None)),
             ("datasets parquet, messages rendered", lambda: load_file("m.parquet", Columns("messages"),
                                                                      renderer("auto", lambda: tok)))]
    base = None
    for name, read in cases:
        start = time.perf_counter()
        assert len(read()) == ROWS
        seconds = time.perf_counter() - start
        base = base or seconds
        print(f"{name:40s} {seconds:.3f} s  {seconds / base:.1f}x")


if __name__ == "__main__":
    main()
