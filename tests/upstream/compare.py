#!/usr/bin/env python3
"""Judge the tree's selftests on ours against stock (scripts/upstream.sh).

usage: compare.py STOCK_RAW OURS_RAW DIFFERENCES OUTDIR

STOCK_RAW and OURS_RAW are what tests/upstream/guest.sh wrote on ttyS1:
each suite's raw output between "@@BEGIN suite" and "@@END suite rc= secs=".
Every item (test_verifier case and run, veristat program, test_maps test,
test_progs test or subtest) whose verdict differs between the kernels must
be listed in DIFFERENCES with the same verdicts; so must a program that
loads on both with more than 10% more instructions processed on ours.
Anything else fails the run, improvements included (the verifier accepting
what stock refuses needs a reason as much as a refusal does); so does a
listed difference seen on neither side of its run any more (stale entry).
An item may be a glob (fnmatch: "linked_list/*_incorrect_lock_*"): it
stands for every difference it matches with its verdicts, and is stale
when it matches none.
Writes OUTDIR/summary.txt, veristat.csv, veristat.md, differences.txt,
bench.txt; prints the summary; exit 1 on any unexplained difference.
stock-fails.txt beside DIFFERENCES, where it exists, gives why each
test_progs test fails on stock; the report names any failing top-level
test it does not explain (a note, not a verdict).
"""
import csv
import fnmatch
import io
import os
import re
import sys

INSN_LIMIT = 1.10  # ours may process at most 10% more instructions
SUITES = ("test_verifier", "veristat", "test_maps", "test_progs")


def sections(path):
    """suite -> (lines, rc, secs); rc None when the suite did not finish."""
    out, cur, lines = {}, None, []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n").rstrip("\r")
            m = re.match(r"^@@BEGIN (\S+)$", line)
            if m:
                cur, lines = m.group(1), []
                out[cur] = (lines, None, None)
                continue
            m = re.match(r"^@@END (\S+) rc=(\d+) secs=(\d+)$", line)
            if m and m.group(1) == cur:
                out[cur] = (lines, int(m.group(2)), int(m.group(3)))
                cur = None
                continue
            if cur:
                lines.append(line)
    return out


def unique(items, key, verdict):
    """Number repeated names ("name #2") so that each item stays distinct."""
    n = items.get(key)
    if n is None:
        items[key] = verdict
        return
    i = 2
    while f"{key} #{i}" in items:
        i += 1
    items[f"{key} #{i}"] = verdict


def parse_test_verifier(lines):
    items, pending = {}, None
    for line in lines:
        m = re.match(r"^#\d+/([pu]) (.*?) (OK|FAIL|SKIP)\b", line)
        if m:
            unique(items, f"{m.group(2)} [{m.group(1)}]", m.group(3))
            pending = None
            continue
        # a message before the verdict ("Failed to load BTF spec: ..." in
        # unprivileged runs), the verdict on the next line
        m = re.match(r"^#\d+/([pu]) (.*)$", line)
        if m:
            desc = re.sub(r" Failed to load BTF spec: '[^']*'$", "", m.group(2))
            pending = f"{desc} [{m.group(1)}]"
            continue
        m = re.match(r"^(OK|FAIL|SKIP)\b", line)
        if m and pending:
            unique(items, pending, m.group(1))
            pending = None
    return items


def parse_veristat(lines):
    """6.12's veristat prints "Using guessed program type ..." on stdout
    before its CSV: the rows start at the header, and lines that are not
    rows (another process's header or notes) fail the int() below."""
    items, stats = {}, {}
    start = next((i for i, l in enumerate(lines) if l.startswith("file_name,")), 0)
    text = "\n".join(l for l in lines[start:] if l.strip())
    for row in csv.DictReader(io.StringIO(text)):
        try:
            key = f"{row['file_name']}/{row['prog_name']}"
            verdict = row["verdict"]
            stats[key] = (verdict, int(row["total_insns"]), int(row["total_states"]),
                          int(row["duration"]))
        except (KeyError, ValueError, TypeError):
            continue
        unique(items, key, verdict)
    return items, stats


def parse_test_maps(lines):
    items = {}
    for line in lines:
        m = re.match(r"^test_maps (\S+) (OK|FAIL|TIMEOUT|SKIP) rc=", line)
        if m:
            items[m.group(1)] = m.group(2)
    return items


RETRIED = []


def parse_test_progs(lines, kernel="?"):
    """Each test's and subtest's verdict in its last run. guest.sh runs a
    failing test again (timing tests miss under TCG on a loaded host) and
    prints the earlier runs' verdicts as '#   run N: ...': one that was OK
    in any run counts as OK, on both kernels alike, and is reported."""
    items, earlier_ok = {}, set()
    for line in lines:
        m = re.match(r"^#   run \d+: #\d+(?:/\d+)?\s+(\S.*?):OK\s*$", line)
        if m:
            earlier_ok.add(m.group(1))
            continue
        m = re.match(r"^#\d+(?:/\d+)?\s+(\S.*?):(OK|FAIL|SKIP|TIMEOUT)\s*$", line)
        if m:
            items[m.group(1)] = m.group(2)
    for name in sorted(earlier_ok):
        if items.get(name) == "FAIL":
            items[name] = "OK"
            RETRIED.append(f"retried    test_progs: {name}: OK in an earlier run on {kernel}, "
                           "FAIL in the last: counted OK")
    return items


def load_differences(path):
    """(suite, item) -> (stock verdict, ours verdict, patch, section)."""
    listed = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 5 or "->" not in parts[2]:
                sys.exit(f"{path}:{n}: want 'suite | item | STOCK -> OURS | patch | section'")
            s, o = (v.strip() for v in parts[2].split("->"))
            listed[(parts[0], parts[1])] = (s, o, parts[3], parts[4])
    return listed


PASS = {"OK", "success"}


def load_stock_fails(diff_path):
    """The tests stock-fails.txt explains ('test | cause | reason')."""
    path = os.path.join(os.path.dirname(diff_path), "stock-fails.txt")
    fails = set()
    if os.path.exists(path):
        with open(path) as f:
            fails = {line.split(" | ")[0].strip() for line in f
                     if line.strip() and not line.startswith("#")}
    return fails, path


def stock_fails_note(items, diff_path):
    """One line on the top-level test_progs tests failing on stock."""
    fails, path = load_stock_fails(diff_path)
    failed = sorted(n for n, v in items.items() if "/" not in n and v in ("FAIL", "TIMEOUT"))
    if not fails or not failed:
        return None
    unexplained = [n for n in failed if n not in fails]
    line = (f"upstream test_progs: {len(failed)} top-level tests fail on stock, "
            f"{len(failed) - len(unexplained)} explained in {os.path.basename(path)}")
    return line + (f"; not explained: {' '.join(unexplained)}" if unexplained else "")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[1])
    stock_raw, ours_raw, diff_path, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    raw = {"stock": sections(stock_raw), "ours": sections(ours_raw)}
    listed = load_differences(diff_path)
    globs = {k: v for k, v in listed.items() if "*" in k[1]}
    glob_seen = set()

    def lookup(suite, name, s, o):
        """The listed entry for a difference: the item itself, else a glob
        with the same verdicts."""
        entry = listed.get((suite, name))
        if entry:
            return entry
        for (gs, gi), g in globs.items():
            if gs == suite and (g[0], g[1]) == (s, o) and fnmatch.fnmatchcase(name, gi):
                glob_seen.add((gs, gi))
                return g
        return None
    summary, report, problems = [], [], []
    compared = 0
    vstats = {}

    for suite in SUITES:
        if suite not in raw["stock"] and suite not in raw["ours"]:
            continue
        items, secs = {}, {}
        for k in ("stock", "ours"):
            lines, rc, sec = raw[k].get(suite, ([], None, None))
            secs[k] = sec
            if rc is None:
                problems.append(f"{suite}: did not finish on {k} (crash or time limit: see its console log)")
            if suite == "test_verifier":
                items[k] = parse_test_verifier(lines)
            elif suite == "veristat":
                items[k], vstats[k] = parse_veristat(lines)
            elif suite == "test_maps":
                items[k] = parse_test_maps(lines)
            else:
                items[k] = parse_test_progs(lines, k)
                report.extend(RETRIED)
                RETRIED.clear()
            if rc is not None and not items[k]:
                problems.append(f"{suite}: no results on {k}")

        def counts(k):
            c = {}
            for v in items[k].values():
                c[v] = c.get(v, 0) + 1
            return " ".join(f"{n} {v}" for v, n in sorted(c.items()))

        names = sorted(set(items["stock"]) | set(items["ours"]))
        intended = unexplained = 0
        for name in names:
            s = items["stock"].get(name, "missing")
            o = items["ours"].get(name, "missing")
            compared += 1
            entry = listed.get((suite, name)) if s == o else lookup(suite, name, s, o)
            if s == o:
                if entry and s != "missing":
                    problems.append(f"{suite}: listed difference not seen (stale entry in differences.txt): "
                                    f"{name}: {entry[0]} -> {entry[1]} expected, {s} on both")
                continue
            if entry and (entry[0], entry[1]) == (s, o):
                intended += 1
                report.append(f"intended   {suite}: {name}: stock {s}, ours {o} ({entry[2]}; design: {entry[3]})")
                continue
            unexplained += 1
            kind = ("REGRESSION" if s in PASS else
                    "IMPROVEMENT (unlisted)" if o in PASS else "CHANGE")
            problems.append(f"{suite}: {kind}: {name}: stock {s}, ours {o}")
            report.append(f"unlisted   {suite}: {name}: stock {s}, ours {o} [{kind}]")

        extra = ""
        if suite == "veristat":
            grown = []
            for name, (sv, si, ss, sd) in vstats["stock"].items():
                ov = vstats["ours"].get(name)
                if not ov or sv != "success" or ov[0] != "success" or not si:
                    continue
                if ov[1] > si * INSN_LIMIT:
                    entry = listed.get(("veristat-insns", name))
                    line = f"{name}: {si} -> {ov[1]} insns (+{100.0 * (ov[1] - si) / si:.1f}%)"
                    if entry:
                        report.append(f"intended   veristat insns: {line} ({entry[2]}; design: {entry[3]})")
                    else:
                        grown.append(line)
                        problems.append(f"veristat: insns more than 10% above stock's: {line}")
            extra = f"; {len(grown)} programs >10% more insns"
        if suite == "test_progs":
            note = stock_fails_note(items["stock"], diff_path)
            if note:
                report.append(note)
        summary.append(f"upstream {suite}: stock {counts('stock') or 'nothing'} ({secs['stock']} s) | "
                       f"ours {counts('ours') or 'nothing'} ({secs['ours']} s) | "
                       f"{intended} intended, {unexplained} unlisted differences{extra}")

    for (gs, gi), g in sorted(globs.items()):
        if (gs, gi) not in glob_seen and gs in raw["stock"] and gs in raw["ours"]:
            problems.append(f"{gs}: listed difference not seen (stale entry in differences.txt): "
                            f"{gi}: {g[0]} -> {g[1]} expected, matches no difference")

    if "stock" in vstats and "ours" in vstats:
        veristat_tables(vstats, outdir)
        summary.append(f"upstream veristat table: {os.path.join(outdir, 'veristat.md')}")

    with open(os.path.join(outdir, "differences.txt"), "w") as f:
        f.write("\n".join(report + [f"PROBLEM {p}" for p in problems]) + "\n")
    lines = summary + report + [f"not ok: {p}" for p in problems]
    lines.append(f"upstream: {compared - len(problems)} passed, {len(problems)} failed")
    with open(os.path.join(outdir, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if problems else 0


def veristat_tables(vstats, outdir):
    st, ou = vstats["stock"], vstats["ours"]
    names = sorted(set(st) | set(ou))
    with open(os.path.join(outdir, "veristat.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["program", "stock_verdict", "ours_verdict", "stock_insns", "ours_insns",
                    "stock_states", "ours_states", "stock_us", "ours_us"])
        for n in names:
            s = st.get(n, ("missing", "", "", ""))
            o = ou.get(n, ("missing", "", "", ""))
            w.writerow([n, s[0], o[0], s[1], o[1], s[2], o[2], s[3], o[3]])
    both = [n for n in names if n in st and n in ou
            and st[n][0] == "success" and ou[n][0] == "success"]
    fail_both = [n for n in names if st.get(n, ("",))[0] == "failure" and ou.get(n, ("",))[0] == "failure"]
    changed = [n for n in names if st.get(n, ("missing",))[0] != ou.get(n, ("missing",))[0]]
    tot = lambda d, i, ns: sum(d[n][i] for n in ns)
    si, oi = tot(st, 1, both), tot(ou, 1, both)
    ss, os_ = tot(st, 2, both), tot(ou, 2, both)
    sd, od = tot(st, 3, both), tot(ou, 3, both)
    pct = lambda a, b: f"{100.0 * (b - a) / a:+.3f}%" if a else "n/a"
    md = ["# veristat: the selftests' BPF objects, ours against stock", "",
          f"{len(names)} programs in {len({n.split('/')[0] for n in names})} objects: "
          f"{len(both)} load on both, {len(fail_both)} fail on both, {len(changed)} differ.", "",
          "| over the programs that load on both | stock | ours | change |", "|---|---:|---:|---:|",
          f"| total instructions processed | {si} | {oi} | {pct(si, oi)} |",
          f"| total states | {ss} | {os_} | {pct(ss, os_)} |",
          f"| verification time (us, one guest run) | {sd} | {od} | {pct(sd, od)} |", ""]
    md += ["## Verdict changes", "", "| program | stock | ours |", "|---|---|---|"]
    md += [f"| {n} | {st.get(n, ('missing',))[0]} | {ou.get(n, ('missing',))[0]} |" for n in changed]
    if not changed:
        md.append("| (none) | | |")
    deltas = sorted(((ou[n][1] - st[n][1], n) for n in both if ou[n][1] != st[n][1]),
                    key=lambda d: -abs(d[0]))
    md += ["", f"## Largest instruction-count changes ({len(deltas)} programs changed)", "",
           "| program | stock insns | ours insns | change | stock states | ours states |",
           "|---|---:|---:|---:|---:|---:|"]
    md += [f"| {n} | {st[n][1]} | {ou[n][1]} | {pct(st[n][1], ou[n][1])} | {st[n][2]} | {ou[n][2]} |"
           for _, n in deltas[:20]]
    if not deltas:
        md.append("| (none) | | | | | |")
    # where the time went: meaningful when the guests count instructions
    # (scripts/verifier-bench.sh); a wall-time guest's figures are noise
    slow = sorted(both, key=lambda n: -(ou[n][3] - st[n][3]))[:20]
    md += ["", "## Largest verification-time changes", "",
           "| program | stock us | ours us | change | stock insns | ours insns |",
           "|---|---:|---:|---:|---:|---:|"]
    md += [f"| {n} | {st[n][3]} | {ou[n][3]} | {pct(st[n][3], ou[n][3])} | {st[n][1]} | {ou[n][1]} |"
           for n in slow]
    with open(os.path.join(outdir, "veristat.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "bench.csv"), "w") as f:
        f.write(f"programs,stock_insns,ours_insns,stock_us,ours_us\n{len(both)},{si},{oi},{sd},{od}\n")
    with open(os.path.join(outdir, "bench.txt"), "w") as f:
        f.write(f"verifier cost on the selftests' corpus ({len(both)} programs loading on both):\n"
                f"  instructions processed: stock {si}, ours {oi}, ours/stock {oi / si if si else 0:.4f}\n"
                f"  verification time: stock {sd / 1e6:.2f} s, ours {od / 1e6:.2f} s, "
                f"ours/stock {od / sd if sd else 0:.3f} (guest time)\n")


if __name__ == "__main__":
    sys.exit(main())
