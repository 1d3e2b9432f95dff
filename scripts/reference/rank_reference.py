#!/usr/bin/env python3
"""Regenerate the rank-metric reference fixtures from scipy and the PyPI `rbo` package.

A developer tool, run by hand when a fixture must change. It is not part of rageval, its
build or its CI; the Rust tests only read the JSON it writes. Run it in a throwaway venv:

    python3 -m venv /tmp/venv-rank
    /tmp/venv-rank/bin/pip install scipy rbo
    /tmp/venv-rank/bin/python scripts/reference/rank_reference.py

Writes, under crates/rageval-core/tests/fixtures/rank/:
- correlation.json: Spearman rho (scipy.stats.spearmanr) and Kendall tau-b
  (scipy.stats.kendalltau, default variant "b") on seeded vectors full of ties, n = 5, 50,
  1000, plus seed S3's 78 "good" contexts. Undefined values are written as null.
- rbo.json: RBO ext from rbo.RankingSimilarity(S, T).rbo_ext(p) (Webber et al. eq. 32);
  RBO min (eq. 11 taken to the longer list's depth) and RBO res (eq. 30) evaluated here
  term by term, and both cross-checked against a brute-force sum over the extremal
  continuations of the two lists. The rbo package offers no min or res of its own.
"""

import json
import math
import pathlib
import sys

import numpy as np
import rbo
import scipy
from scipy.stats import kendalltau, spearmanr

SEED = 20261122
OUT = pathlib.Path(__file__).resolve().parents[2] / "crates/rageval-core/tests/fixtures/rank"

# Seed 003's "Sorted Good indices" (GPT's order of the useful contexts). Its printed
# Spearman 0.443 and top-10 similarity 0.6 are reproduced by comparing this order with the
# same ids in retrieval order, i.e. ascending.
SEED_S3_GOOD = [
    55, 178, 0, 59, 169, 11, 9, 1, 5, 13, 56, 28, 53, 95, 3, 186, 21, 22, 20, 57, 25, 26,
    38, 70, 98, 106, 165, 182, 54, 99, 111, 129, 140, 141, 144, 192, 87, 51, 168, 17, 19,
    30, 33, 31, 32, 36, 34, 35, 39, 40, 67, 47, 41, 49, 78, 121, 122, 127, 132, 42, 45, 61,
    62, 80, 69, 85, 153, 128, 135, 180, 137, 152, 154, 172, 187, 195, 198, 160,
]


def finite_or_none(value):
    value = float(value)
    return value if math.isfinite(value) else None


def correlation_case(name, x, y):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho = spearmanr(x, y).statistic
            tau = kendalltau(x, y).statistic  # variant="b" is the default
    return {
        "name": name,
        "x": x,
        "y": y,
        "spearman": finite_or_none(rho),
        "kendall_tau_b": finite_or_none(tau),
    }


def correlation_cases(rng):
    cases = []
    for n in (5, 50, 1000):
        # Few levels on both sides: most pairs are tied somewhere.
        x = rng.integers(0, 3, n)
        y = rng.integers(0, 3, n)
        cases.append(correlation_case(f"n{n}_three_levels", x, y))
        # Correlated, with ties: y is x plus small integer noise.
        x = rng.integers(0, max(2, n // 10), n)
        y = x + rng.integers(0, 3, n)
        cases.append(correlation_case(f"n{n}_correlated", x, y))
        # Anti-correlated quarter steps (exact in binary), ties in both.
        x = rng.integers(0, 12, n) / 4.0
        y = -x + rng.integers(0, 5, n) / 4.0
        cases.append(correlation_case(f"n{n}_anti_quarters", x, y))
        # Binary judgement against a graded score.
        x = rng.integers(0, 2, n)
        y = rng.integers(0, 4, n) + x
        cases.append(correlation_case(f"n{n}_binary_vs_graded", x, y))
    cases.append(correlation_case("constant_x", [2, 2, 2, 2, 2], [1, 2, 3, 4, 5]))
    cases.append(
        correlation_case("seed_s3_good_docs", range(len(SEED_S3_GOOD)), SEED_S3_GOOD)
    )
    return cases


def overlap(short, long, d):
    """X_d: ids shared by short[:min(d, s)] and long[:d]."""
    return len(set(short[:d]) & set(long[:d]))


def rbo_min(short, long, p):
    l = len(long)
    x_l = overlap(short, long, l)
    total = sum((overlap(short, long, d) - x_l) * p**d / d for d in range(1, l + 1))
    return (1 - p) / p * (total - x_l * math.log(1 - p))


def rbo_res(short, long, p):
    s, l = len(short), len(long)
    x_l = overlap(short, long, l)
    f = s + l - x_l
    term_s = s * sum(p**d / d for d in range(s + 1, f + 1))
    term_l = l * sum(p**d / d for d in range(l + 1, f + 1))
    term_x = x_l * (math.log(1 / (1 - p)) - sum(p**d / d for d in range(1, f + 1)))
    return p**s + p**l - p**f - (1 - p) / p * (term_s + term_l + term_x)


def truncated_rbo(a, b, p, depth):
    seen_a, seen_b, shared, total = set(), set(), 0, 0.0
    for d in range(depth):
        x, y = a[d], b[d]
        if x == y:
            shared += 1
        else:
            shared += (x in seen_b) + (y in seen_a)
        seen_a.add(x)
        seen_b.add(y)
        total += (1 - p) * p**d * shared / (d + 1)
    return total


def brute_bounds(short, long, p):
    """min and residual by summing the worst and best continuations far enough out."""
    depth = len(short) + len(long) + int(math.log(1e-17) / math.log(p)) + 1
    fresh = lambda tag: [f"{tag}{i}" for i in range(depth)]  # noqa: E731
    worst = truncated_rbo(list(short) + fresh("s"), list(long) + fresh("l"), p, depth)
    best_short = list(short) + [v for v in long if v not in short] + fresh("f")
    best_long = list(long) + [v for v in short if v not in long] + fresh("f")
    best = truncated_rbo(best_short, best_long, p, depth)
    return worst, best - worst


def rbo_case(name, a, b, p):
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    low, residual = rbo_min(short, long, p), rbo_res(short, long, p)
    brute_low, brute_residual = brute_bounds(short, long, p)
    assert abs(low - brute_low) < 1e-12, (name, low, brute_low)
    assert abs(residual - brute_residual) < 1e-12, (name, residual, brute_residual)
    ext = rbo.RankingSimilarity(list(a), list(b)).rbo_ext(p)
    return {"name": name, "a": list(a), "b": list(b), "p": p,
            "min": low, "residual": residual, "extrapolated": float(ext)}


def rbo_cases(rng):
    cases = []
    for s, l, pool in [(5, 8, 12), (10, 25, 30), (7, 7, 10), (20, 50, 60), (1, 6, 6),
                       (30, 12, 40), (15, 40, 200), (8, 8, 8)]:
        for p in (0.9, 0.95, 0.98):
            ids = [f"d{i}" for i in range(pool)]
            a = list(rng.permutation(ids)[:s])
            b = list(rng.permutation(ids)[:l])
            cases.append(rbo_case(f"s{s}_l{l}_pool{pool}_p{p}", a, b, p))
    for a, b in [("abcdefg", "abcdefg"), ("abcdefg", "bacdefg"), ("abcdefg", "zcavwxy"),
                 ("abcde", "vwxyz"), ("abcdefgh", "abcdxyz"), ("ab", "xab")]:
        for p in (0.9, 0.98):
            cases.append(rbo_case(f"{a}_{b}_p{p}", list(a), list(b), p))
    return cases


def write(name, payload):
    path = OUT / name
    path.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def main():
    rng = np.random.default_rng(SEED)
    versions = {"python": sys.version.split()[0], "numpy": np.__version__,
                "scipy": scipy.__version__, "rbo": "0.1.3"}
    OUT.mkdir(parents=True, exist_ok=True)
    write("correlation.json", {"generator": "scripts/reference/rank_reference.py",
                               "seed": SEED, "versions": versions,
                               "cases": correlation_cases(rng)})
    write("rbo.json", {"generator": "scripts/reference/rank_reference.py",
                       "seed": SEED, "versions": versions, "cases": rbo_cases(rng)})


if __name__ == "__main__":
    main()
