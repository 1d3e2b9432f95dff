"""Writes the XLSX fixtures of rageval-core's dataset tests.

Run from the repository root with openpyxl installed:
    python3 scripts/reference/make_xlsx_fixtures.py
Text fixtures are committed as they are; only workbooks need a generator.
"""

from pathlib import Path

from openpyxl import Workbook

ROOT = Path("crates/rageval-core/tests/fixtures/datasets")


def workbook(sheets):
    """sheets: list of (title, rows); the first becomes the active sheet."""
    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets:
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    return book


def main():
    good = [
        ("eval", [
            ["id", "user_input", "retrieved_contexts", "response", "reference", "retrieved_context_scores", "team"],
            [12, "What is RAG?", '["Retrieval-augmented generation pairs a retriever with a generator.", "It was named in 2020."]',
             "A retriever plus a generator.", "['Retrieval plus generation.']", "[0.91, 0.40]", "search"],
            ["q-2", "少儿编程市场规模？", "2024年约488亿元。", "约488亿。", "约488亿人民币。", 0.5, None],
        ]),
        ("ragas01", [
            ["question", "contexts", "answer", "ground_truth"],
            ["Who wrote it?", "['Ann wrote it.', \"Bob's copy\"]", "Ann", "Ann"],
        ]),
    ]
    workbook(good).save(ROOT / "good" / "dataset.xlsx")
    workbook([("eval", [["question", "answer"], ["q", "a"]])]).save(ROOT / "malformed" / "missing_sheet.xlsx")
    workbook([("eval", [["question", "answer"]])]).save(ROOT / "malformed" / "header_only.xlsx")
    workbook([("eval", [["id", "question"], [1, "a"], [2, "b"], [1, "c"]])]).save(ROOT / "malformed" / "duplicate_ids.xlsx")
    workbook([("eval", [["question", "contexts"], ["a", "x"], [None, "y"]])]).save(ROOT / "malformed" / "missing_question.xlsx")


if __name__ == "__main__":
    main()
