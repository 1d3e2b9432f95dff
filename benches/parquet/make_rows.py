"""Writes N synthetic ragas-shaped rows as Parquet (pyarrow, snappy, pyarrow's default row
groups) for the streaming benchmark in BENCHMARKS.md ("Parquet datasets").

    python benches/parquet/make_rows.py 100000 /tmp/rows.parquet
"""

import sys

import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    count, path = int(sys.argv[1]), sys.argv[2]
    words = "the retriever found a passage about rivers mountains cities and their history".split()

    def sentence(row: int, salt: int) -> str:
        return " ".join(words[(row * 7 + salt * 3 + i) % len(words)] for i in range(12))

    table = pa.table({
        "id": [f"q{row}" for row in range(count)],
        "user_input": [f"question {row}: " + sentence(row, 1) for row in range(count)],
        "retrieved_contexts": [[sentence(row, 2), sentence(row, 3), sentence(row, 4)]
                               for row in range(count)],
        "response": [sentence(row, 5) for row in range(count)],
        "reference": [sentence(row, 6) for row in range(count)],
    })
    pq.write_table(table, path, compression="snappy")


if __name__ == "__main__":
    main()
