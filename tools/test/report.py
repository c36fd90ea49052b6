#!/usr/bin/env python3
"""Reports over the suite's gtest XML files, for ./wharf test.

  report.py slowest [--top N] [--bin LABEL=SECS ...] LABEL=XML ...
      the N slowest test cases (the time each XML gives its case) and the
      N slowest binaries (their --bin wall times), with the total.
  report.py repeat LABEL@ROUND=XML ... | LABEL=XML ...
      each case's passes over the rounds of ./wharf test --repeat (a
      round per file, or cases named NAME@ROUND in one file): one
      line a case, those that failed at least once first; exits 1 when
      any case failed in any round (or a round of a binary left no case).

A LABEL names a binary (a host test, a guest binary) or "faults"; an XML
that does not parse (a binary that crashed mid-write) counts as no case;
the caller counts that binary's failure from its exit status.
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def cases(path):
    """(name, status, seconds) for each test case of a gtest XML file;
    status is pass, fail or skip; gtest's DISABLED_ helpers
    (result="suppressed") did not run and are left out."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return []
    out = []
    for tc in root.iter('testcase'):
        if tc.get('result') == 'suppressed':
            continue
        name = tc.get('name', '?')
        cls = tc.get('classname', '')
        if cls and cls != name:
            name = cls + '.' + name
        if tc.find('failure') is not None or tc.find('error') is not None:
            status = 'fail'
        elif (tc.find('skipped') is not None or
              tc.get('result') == 'skipped' or
              tc.get('status') == 'notrun'):
            status = 'skip'
        else:
            status = 'pass'
        try:
            secs = float(tc.get('time', '0') or 0)
        except ValueError:
            secs = 0.0
        out.append((name, status, secs))
    return out


def pairs(items, what):
    for it in items:
        label, sep, value = it.partition('=')
        if not sep or not label or not value:
            sys.exit('report.py: %s takes LABEL=VALUE, not %r' % (what, it))
        yield label, value


def slowest(args):
    rows = []
    for label, path in pairs(args.xml, 'an XML'):
        for name, status, secs in cases(path):
            rows.append((secs, label, name, status))
    bins = []
    for label, secs in pairs(args.bin or [], '--bin'):
        try:
            bins.append((float(secs), label))
        except ValueError:
            pass
    rows.sort(key=lambda r: -r[0])
    total = sum(r[0] for r in rows)
    print('slowest %d of %d test cases (%.0f s in all):' %
          (min(args.top, len(rows)), len(rows), total))
    for secs, label, name, status in rows[:args.top]:
        mark = '' if status == 'pass' else '  [%s]' % status
        print('  %7.1f s  %-28s %s%s' % (secs, label, name, mark))
    if bins:
        bins.sort(key=lambda b: -b[0])
        print('slowest %d of %d guest binaries (%.0f s in all):' %
              (min(args.top, len(bins)), len(bins),
               sum(b[0] for b in bins)))
        for secs, label in bins[:args.top]:
            print('  %7.0f s  %s' % (secs, label))
    return 0


def repeat(args):
    runs = {}   # (label, case) -> [passes, fails, skips]
    rounds = {}  # label -> the rounds seen
    empty = []
    for item, path in pairs(args.xml, 'an XML'):
        label, _, rnd = item.partition('@')
        got = cases(path)
        if not got:
            # A round without results (the binary crashed before gtest
            # wrote its XML) is a round every case of the label missed.
            empty.append('%s round %s' % (label, rnd or '1'))
            if rnd:
                rounds.setdefault(label, set()).add(rnd)
        for name, status, _ in got:
            # One file may hold every round, each case as NAME@ROUND
            # (the fault suite's faults.xml).
            base, at, crnd = name.rpartition('@')
            if at and crnd.isdigit():
                name, rnd_of = base, crnd
            else:
                rnd_of = rnd or '1'
            rounds.setdefault(label, set()).add(rnd_of)
            c = runs.setdefault((label, name), [0, 0, 0])
            c[('pass', 'fail', 'skip').index(status)] += 1
    bad = 0
    lines = []
    for (label, name), (p, f, s) in runs.items():
        n = len(rounds[label])
        missing = n - p - f - s
        # Skipped in some rounds and passed in others is not steady
        # either (a fixture that failed to set up skips every case).
        flaky = f or missing or (s and p)
        bad += 1 if flaky else 0
        txt = '%d/%d' % (p, n)
        if s:
            txt += ' (%d skipped)' % s
        if missing:
            txt += ' (%d rounds without it)' % missing
        lines.append((not flaky, label, name, txt))
    lines.sort()
    print('passes per case over the rounds (%d cases):' % len(lines))
    for _, label, name, txt in lines:
        print('  %-12s %-28s %s' % (txt, label, name))
    for e in empty:
        print('  no result from %s' % e)
    print('repeat: %d of %d cases passed in every round' %
          (len(lines) - bad, len(lines)))
    return 1 if bad or empty else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('slowest', help='the slowest cases and binaries')
    s.add_argument('--top', type=int, default=10)
    s.add_argument('--bin', action='append', metavar='LABEL=SECS')
    s.add_argument('xml', nargs='*', metavar='LABEL=XML')
    r = sub.add_parser('repeat', help="each case's passes over the rounds")
    r.add_argument('xml', nargs='*', metavar='LABEL@ROUND=XML')
    args = ap.parse_args()
    return slowest(args) if args.cmd == 'slowest' else repeat(args)


if __name__ == '__main__':
    sys.exit(main())
