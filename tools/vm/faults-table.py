#!/usr/bin/env python3
"""Prints the fault suite's results (faults.json from tests/faults/faults.sh)
as a table: case, attempts, outcomes on each side, the storm's seconds (the
client's run: every attempt ended), when the server settled (its last
connection error or early disconnect, else its last line, in seconds since
it started; in a crash case since node a heard of the crash: the time the
server took to reclaim every connection; in an NVMe-oF case the host's
outage, error recovery to reconnected), the time to recover (NVMe-oF: the
fault's start to the host's reconnect; flap_disconnect: the longest DREQ
to forced teardown; "-" where it does not apply), the leaks found (with
`faults.sh --asan`: LeakSanitizer's leak records summed over the case's
processes that exited by themselves, those that could not report named
n/a; "not checked" without ASan builds), and the verdict.

usage: faults-table.py FAULTS.json
"""
import json
import sys


def recover(r):
    v = r.get("recover_s", -1)
    return "-" if v is None or v < 0 else "%.1f" % v


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    with open(sys.argv[1]) as f:
        rows = json.load(f)
    head = ("case", "attempts", "client outcomes", "server outcomes",
            "storm s", "settled s", "recover s", "leaks found", "verdict")
    table = [head] + [(
        r["case"], str(r["attempts"]), r["client_outcomes"],
        r["server_outcomes"], "%.1f" % r["client_s"],
        "%.1f" % r["server_settled_s"], recover(r),
        r.get("leaks_found", "not checked"), r["verdict"])
        for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for n, row in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
    bad = sum(r["verdict"] != "ok" for r in rows)
    print("%d passed, %d failed" % (len(rows) - bad, bad))
    return 0


if __name__ == "__main__":
    sys.exit(main())
