#!/usr/bin/env python3
"""Plots every panel of Atlas's Grafana dashboard from a Prometheus server into one PNG.

Where Grafana is not at hand, this draws what the dashboard would show: each time-series panel of
docs/grafana/atlas-dashboard.json, in the dashboard's order, with its title, its queries run as
range queries against Prometheus ($service = every service, $__rate_interval = RATE_INTERVAL), and
legends from the panels' legendFormat. ./demo.sh --prometheus runs it over the demo when matplotlib is
installed (Debian: apt-get install python3-matplotlib).

    plot-dashboard.py PROMETHEUS_URL START END OUTPUT.png   (START, END: Unix seconds)

Exit status 1 when Prometheus cannot be queried; a query without data is drawn as an empty panel
("no data"), as Grafana would.
"""

import json
import math
import os
import re
import sys
import urllib.parse
import urllib.request

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (the backend is chosen first)

DASHBOARD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "atlas-dashboard.json")
RATE_INTERVAL = "10s"
COLUMNS = 4
POINTS = 300


def range_query(prometheus, expr, start, end):
    step = max(1, math.ceil((end - start) / POINTS))
    query = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": step})
    with urllib.request.urlopen(f"{prometheus}/api/v1/query_range?{query}", timeout=30) as answer:
        body = json.load(answer)
    if body.get("status") != "success":
        raise RuntimeError(f"query failed: {expr}: {body}")
    return body["data"]["result"]


def legend(fmt, labels):
    if not fmt:
        return ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "value"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt).strip()


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    prometheus, start, end, output = argv[1].rstrip("/"), int(argv[2]), int(argv[3]), argv[4]
    with open(DASHBOARD, encoding="utf-8") as source:
        dashboard = json.load(source)
    panels = [p for p in dashboard["panels"] if p.get("type") == "timeseries"]
    rows = math.ceil(len(panels) / COLUMNS)
    figure, axes = plt.subplots(rows, COLUMNS, figsize=(6 * COLUMNS, 3.6 * rows), squeeze=False)
    for index, panel in enumerate(panels):
        ax = axes[index // COLUMNS][index % COLUMNS]
        ax.set_title(panel["title"], fontsize=11, loc="left")
        drawn = 0
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$service", ".+").replace("$__rate_interval", RATE_INTERVAL)
            for series in range_query(prometheus, expr, start, end):
                points = [(float(t) - start, float(v)) for t, v in series["values"] if v not in ("NaN", "+Inf", "-Inf")]
                if not points:
                    continue
                xs, ys = zip(*points)
                ax.plot(xs, ys, linewidth=1, label=legend(target.get("legendFormat"), series["metric"])[:48])
                drawn += 1
        if drawn == 0:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="grey")
        elif drawn <= 8:
            ax.legend(fontsize=7, loc="upper left")
        if panel.get("fieldConfig", {}).get("defaults", {}).get("unit") == "percentunit":
            ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
        ax.set_xlim(0, end - start)
        ax.set_xlabel("s since the start", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.grid(alpha=0.3)
    for index in range(len(panels), rows * COLUMNS):
        axes[index // COLUMNS][index % COLUMNS].axis("off")
    figure.suptitle(f"{dashboard['title']} (every service; rate interval {RATE_INTERVAL})", fontsize=14)
    figure.tight_layout(rect=(0, 0, 1, 0.98))
    figure.savefig(output, dpi=80)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except OSError as failure:
        sys.stderr.write(f"plot-dashboard: Prometheus could not be queried: {failure}\n")
        sys.exit(1)
