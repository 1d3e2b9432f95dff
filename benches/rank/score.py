"""One markdown row for benches/rank/run.sh: calls, rounds and accuracy of a ranking against
the hidden qualities. Accuracy follows the simulation test: Kendall tau-b between the judge's
positions and the true qualities over the truly useful contexts (quality >= 0.7; those the
judge left out share its last position), and nDCG@10 of the judge's order with the true
grades (0-3 by cuts 0.7/0.8/0.9) as gains.

usage: score.py RANKINGS.jsonl TRUTH.json JUDGE ALGORITHM WALL_SECONDS"""
import json
import math
import sys

line = json.loads(open(sys.argv[1]).readline())
truth = json.load(open(sys.argv[2]))
ranking = line["ranking"]
grade = lambda q: sum(q >= cut for cut in (0.7, 0.8, 0.9))

useful = [i for i, q in enumerate(truth) if grade(q) > 0]
position = {index: p for p, index in enumerate(ranking["good"])}
last = len(ranking["good"])
x = [position.get(i, last) for i in useful]
y = [-truth[i] for i in useful]


def tau_b(x, y):
    concordant = discordant = ties_x = ties_y = 0
    for a in range(len(x)):
        for b in range(a + 1, len(x)):
            dx, dy = x[a] - x[b], y[a] - y[b]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif dx * dy > 0:
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else float("nan")


def dcg(gains):
    return sum(g / math.log2(r + 2) for r, g in enumerate(gains[:10]))


gains = [grade(truth[i]) for i in ranking["indices"]]
ndcg = dcg(gains) / dcg(sorted((grade(q) for q in truth), reverse=True))
calls = ranking["calls"]
total = calls["grade"] + calls["compare"] + calls["order"]
tau = tau_b(x, y)
print(f"| {sys.argv[3]} | {sys.argv[4]} | {float(sys.argv[5]):.1f} | "
      f"{total} ({calls['grade']} + {calls['compare']} + {calls['order']}; "
      f"{calls['failed']} failed) | {ranking['rounds']} | "
      f"{len(ranking['good'])} | {'—' if math.isnan(tau) else f'{tau:.3f}'} | {ndcg:.3f} |")
