# SPDX-License-Identifier: BSD-2-Clause
"""syncq-lab on any machine size: no claim is unmeasurable by declaration, the
PU-gated claims are decided where the machine has the units, the thread lists
and budgets a run plans for another machine's count (--pus, SYNCQ_LAB_PUS),
and dg25-casfail's modelled network round trip.

Run by CTest (lab_cli_test) with SYNCQ_LAB pointing at the built binary; the
verdicts come from the report's own rule evaluator (report/syncq_report).
"""
import dataclasses
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "report"))
from syncq_report import load, rules  # noqa: E402
from syncq_report.load import Point  # noqa: E402
from labrun import LAB, lab, records  # noqa: E402


def claims():
    out = lab("claims", check=0).stdout.splitlines()
    assert out, "syncq-lab claims printed nothing"
    return [json.loads(line) for line in out]


def plan(*names, pus=None, extra=(), env=None):
    """(each experiment's plan line by name, the budget line) of a --quick --plan run."""
    args = ["run", ",".join(names) if names else "all", "--quick", "--plan", *extra]
    if pus is not None:
        args += ["--pus", str(pus)]
    lines = [json.loads(line) for line in lab(*args, check=0, env=env).stdout.splitlines()]
    assert lines and "plan" in lines[-1], lines
    return {line["experiment"]: line for line in lines[:-1]}, lines[-1]["plan"]


def subrules(rule):
    """Every rule object inside rule, rule included."""
    yield rule
    for sub in rule.get("rules", []) if isinstance(rule.get("rules"), list) else []:
        yield from subrules(sub)
    if isinstance(rule.get("rule"), dict):
        yield from subrules(rule["rule"])


# ---------------------------------------------------------------- no fixed verdicts

def test_claims_lists_every_experiments_claims():
    listed = [c["experiment"] for c in claims()]
    names = [line.split()[0] for line in lab("list", check=0).stdout.splitlines()[1:]]
    assert set(listed) <= set(names)
    assert len(set(listed)) >= len(names) // 2  # most experiments carry claims
    assert all(isinstance(c["text"], str) and c["text"] and isinstance(c["rule"], dict) for c in claims())
    assert lab("claims", "extra").returncode == 2


def test_no_claim_declares_itself_unmeasurable():
    """A verdict fixed in the rule ("not_measurable") is one no machine can change."""
    fixed = [(c["experiment"], c["text"][:60]) for c in claims()
             for r in subrules(c["rule"] or {"op": "not_measurable"}) if r.get("op") == "not_measurable"]
    assert fixed == []


def test_every_rule_op_is_one_the_report_knows():
    unknown = [(c["experiment"], r.get("op")) for c in claims() for r in subrules(c["rule"])
               if r.get("op") not in rules._OPS]
    assert unknown == []


# ---------------------------------------------------------------- PU-gated claims on synthetic points

def _value(*key):
    """A distinct, deterministic median for a synthetic point."""
    return 1.0 + zlib.crc32(repr(key).encode()) % 1000 / 10.0


def _point(experiment, algorithm, params, metric, family="queue"):
    v = _value(algorithm, sorted(params.items()), metric)
    return Point(experiment=experiment, algorithm=algorithm, params=params, metric=metric, unit="x",
                 better="lower", median=v, min=v, max=v, samples=[v] * rules.MIN_SAMPLES, counters={}, line=1, family=family,
                 props="fifo")


def synthetic_points(experiment, rule, threads):
    """A point for every algorithm the rule reads, at every planned thread count,
    under the rule's `where` (and its `at`, its `along` values); a panel of four
    queues for in_pack."""
    points = {}

    def add(algorithm, params, metric):
        key = (algorithm, metric, tuple(sorted(params.items())))
        points.setdefault(key, _point(experiment, algorithm, params, metric))

    for r in subrules(rule):
        names = [r[k] for k in ("num", "den", "algo") if isinstance(r.get(k), str)]
        if not names or "metric" not in r:
            continue
        where = r.get("where", {})
        if r["op"] == "in_pack":
            names += ["q1", "q2", "q3", "q4"]
        if r["op"].startswith("peer_ratio"):
            for t in threads:
                peer = _point(experiment, "peer:q", {**where, "threads": t}, r["metric"])
                points.setdefault(("peer:q", r["metric"], t), dataclasses.replace(peer, peer=True))
        if r["op"].startswith("along_ratio"):
            for name in names:
                for at in (r["num"], r["den"]):
                    add(name, {**where, r["along"]: at}, r["metric"])
            continue
        counts = list(threads)
        if isinstance(r.get("at"), dict) and "threads" in r["at"]:
            counts.append(r["at"]["threads"])
        wheres = [where]
        if isinstance(r.get("base"), dict):  # ratio_change_*: the baseline's points too
            wheres.append({**where, **r["base"]})
        for name in names:
            for t in counts:
                for w in wheres:
                    add(name, {**w, "threads": t}, r["metric"])
    return list(points.values())


def gated_claims():
    out = []
    for c in claims():
        needs = [r["pus"] for r in subrules(c["rule"]) if r.get("op") == "needs_pus"]
        if needs:
            out.append((c, max(needs)))
    return out


def test_the_scale_claims_are_pu_gated():
    gated = {(c["experiment"], need) for c, need in gated_claims()}
    for expected in [("np99-locks", 9), ("dg25-prodcons", 16), ("dg25-casfail", 20), ("np99-apps-dedicated", 33),
                     ("ms98-stack", 11), ("ms98-counter", 11), ("ms98-queue", 11)]:
        assert expected in gated, (expected, gated)


@pytest.mark.parametrize("pus", [2, 16, 64])
def test_pu_gated_claims_are_decided_where_the_units_suffice(pus):
    """On synthetic points over the thread list a machine of `pus` units plans,
    every PU-gated claim is decided (held, did not hold or inconclusive) when
    the machine has the units it needs, and otherwise says what it needs and
    what the machine has."""
    gated = gated_claims()
    plans, _ = plan(*sorted({c["experiment"] for c, _ in gated}), pus=pus)
    for claim, need in gated:
        threads = plans[claim["experiment"]]["threads"]
        points = synthetic_points(claim["experiment"], claim["rule"], threads)
        verdict = rules.evaluate(claim["rule"], points, machine={"pus": pus})
        where = (pus, claim["experiment"], claim["text"][:50], verdict)
        if pus >= need:
            assert verdict.status != rules.UNMEASURABLE, where
        else:
            assert verdict.status == rules.UNMEASURABLE, where
            assert verdict.explanation == f"needs {need} processing units, this machine has {pus}", where


@pytest.mark.parametrize("pus", [2, 16, 64])
def test_oversubscription_claims_are_decided_on_every_machine_size(pus):
    """A claim about a queue past the processing units reads the thread counts that
    fill them once and twice; the plan of any machine must measure both."""
    crowd = [c for c in claims() if any(r.get("op") == "oversubscribed_ratio_above" for r in subrules(c["rule"]))]
    assert ("dg25-prodcons" in {c["experiment"] for c in crowd}), crowd
    plans, _ = plan(*sorted({c["experiment"] for c in crowd}), pus=pus)
    for claim in crowd:
        threads = plans[claim["experiment"]]["threads"]
        points = synthetic_points(claim["experiment"], claim["rule"], threads)
        verdict = rules.evaluate(claim["rule"], points, machine={"pus": pus})
        assert verdict.status != rules.UNMEASURABLE, (pus, claim["text"][:50], threads, verdict)


def test_a_gate_without_a_machine_record_is_not_measurable():
    claim, _ = gated_claims()[0]
    verdict = rules.evaluate(claim["rule"], [], machine=None)
    assert verdict.status == rules.UNMEASURABLE
    assert "machine record" in verdict.explanation


# ---------------------------------------------------------------- planning another machine's count

def test_sixteen_pus_plan_the_sixteen_pu_thread_list():
    plans, budget = plan("dg25-prodcons", "dg25-casfail", pus=16)
    for name in ("dg25-prodcons", "dg25-casfail"):
        assert plans[name]["threads"] == [1, 2, 3, 4, 8, 16, 24, 32]
    assert budget["planned_pus"] == 16
    assert budget["pus"] >= 1


def test_the_environment_plans_like_the_option():
    by_env, _ = plan("dg25-prodcons", env={"SYNCQ_LAB_PUS": "16"})
    by_opt, _ = plan("dg25-prodcons", pus=16)
    assert by_env == by_opt
    two, _ = plan("dg25-prodcons", pus=2)
    assert two["dg25-prodcons"]["threads"] == [1, 2, 3, 4]
    assert by_opt["dg25-prodcons"]["points"] > two["dg25-prodcons"]["points"]


@pytest.mark.parametrize("pus", [2, 16, 64])
def test_budgets_fit_the_suite_budget_on_any_plan(pus):
    """points x point budget + claimed x claim budget, per launch, never exceeds the
    suite budget's share of a launch: a longer plan gets smaller budgets."""
    plans, b = plan(pus=pus)
    assert b["points"] == sum(p["points"] for p in plans.values())
    assert b["claimed"] == sum(p["claimed"] for p in plans.values())
    wanted = (b["points"] * b["point_budget_ms"] + b["claimed"] * b["claim_budget_ms"]) / 1000
    assert b["wanted_s"] == pytest.approx(wanted)
    assert b["launch_budget_s"] == pytest.approx(b["suite_budget_s"] / b["launches"])
    assert b["scale"] == pytest.approx(min(1.0, b["launch_budget_s"] / wanted))
    assert b["fitted_point_budget_ms"] == pytest.approx(b["point_budget_ms"] * b["scale"], rel=1e-6)
    assert b["fitted_claim_budget_ms"] == pytest.approx(b["claim_budget_ms"] * b["scale"], rel=1e-6)
    fitted = (b["points"] * b["fitted_point_budget_ms"] + b["claimed"] * b["fitted_claim_budget_ms"]) / 1000
    assert fitted <= b["launch_budget_s"] * (1 + 1e-6)


def test_more_units_plan_more_points_and_smaller_budgets():
    _, two = plan(pus=2)
    _, many = plan(pus=64)
    assert many["points"] > two["points"]
    assert many["fitted_point_budget_ms"] < two["fitted_point_budget_ms"]


def test_suite_budget_zero_keeps_the_size_budgets():
    _, b = plan(pus=64, extra=("--suite-budget", "0"))
    assert b["scale"] == 1 and b["fitted_point_budget_ms"] == b["point_budget_ms"]


@pytest.mark.parametrize("args,env", [
    (["--pus", "0"], None), (["--pus", "x"], None), (["--pus", "4097"], None), (["--pus"], None),
    (["--suite-budget", "-1"], None), (["--suite-budget", "x"], None),
    ([], {"SYNCQ_LAB_PUS": "zero"}), ([], {"SYNCQ_LAB_PUS": "0"}),
])
def test_bad_plan_options_exit_2(args, env):
    r = lab("run", "np99-counter", "--plan", *args, env=env)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "usage" in r.stderr


def test_a_plan_writes_no_results(tmp_path):
    lab("run", "np99-counter", "--plan", "--out", str(tmp_path / "none"), check=0)
    assert not (tmp_path / "none").exists()


def test_machine_record_keeps_the_real_and_the_planned_units(tmp_path):
    lab("run", "np99-counter", "--size", "smoke", "--threads", "1", "--pus", "16", "--out", str(tmp_path),
        check=0)
    machine = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert machine["type"] == "machine"
    assert machine["planned_pus"] == 16
    real = json.loads(lab("run", "np99-counter", "--quick", "--plan", check=0).stdout.splitlines()[-1])
    assert machine["pus"] == real["plan"]["pus"]


# ---------------------------------------------------------------- dg25-casfail's network

def test_casfail_measures_the_delayed_curve_beside_the_zero_delay_one(tmp_path):
    lab("run", "dg25-casfail", "--size", "smoke", "--threads", "1,2", "--algos", "nblfq,ms", "--out",
        str(tmp_path), check=0)
    recs = records(tmp_path)
    points = [r for r in recs if r["type"] == "point"]
    seen = {(p["algorithm"], p["params"]["threads"], p["params"]["rtt_ns"]) for p in points}
    for algo in ("nblfq", "ms"):
        for t in (1, 2):
            assert {(algo, t, 0), (algo, t, 2000)} <= seen
    assert all(p["metric"] == "cas_retry_share" and 0 <= p["median"] <= 100 for p in points)
    exp = next(r for r in recs if r["type"] == "experiment")
    assert "rtt_ns" in exp["description"]
    for claim in exp["claims"]:
        leaves = [r for r in subrules(claim["rule"]) if "metric" in r]
        assert leaves and all(r["where"] == {"rtt_ns": 2000} for r in leaves), claim["text"]


# ---------------------------------------------------------------- actor runtimes: verdicts either way

def _po_point(experiment, algorithm, metric, median, **params):
    return Point(experiment=experiment, algorithm=algorithm, params={"threads": 2, **params}, metric=metric,
                 unit="ms", better="lower", median=median, min=median, max=median, samples=[median] * rules.MIN_SAMPLES,
                 counters={}, line=1)


def _po_claim(experiment, needle):
    found = [c for c in claims() if c["experiment"] == experiment and needle in c["text"]]
    assert len(found) == 1, [c["text"] for c in claims() if c["experiment"] == experiment]
    return found[0]["rule"]


@pytest.mark.parametrize("experiment, metric, key, sizes, needle", [
    ("po-skynet", "time", "leaves", (10_000, 100_000, 1_000_000), "skynet"),
    ("po-server", "request", "requests", (100_000,), "request"),
])
def test_actor_claims_against_go_come_out_either_way(experiment, metric, key, sizes, needle):
    """syncq's fibers at or below Go's: held when the best fiber mailbox beats Go at the largest
    size measured, not held when every one is slower there (whatever the smaller sizes say)."""
    rule = _po_claim(experiment, needle)

    def points(fiber_at_top):
        pts = []
        for size in sizes:
            top = size == max(sizes)
            pts.append(_po_point(experiment, "go", metric, 100.0, **{key: size}))
            for mb, factor in (("mpsc", 1.0), ("nonblocking", 1.5), ("mutex", 2.0)):
                value = (fiber_at_top * factor) if top else 10.0
                pts.append(_po_point(experiment, f"fiber:{mb}", metric, value, **{key: size}))
        return pts

    assert rules.evaluate(rule, points(50.0)).status == rules.HELD
    assert rules.evaluate(rule, points(400.0)).status == rules.FAILED


def test_ring_with_main_a_member_against_go_comes_out_either_way():
    rule = _po_claim("po-ring", "main taking part")

    def points(slow_at):
        pts = []
        for n in (2, 100, 1000, 6000):
            for main in ("member", "outside"):
                pts.append(_po_point("po-ring", "go", "hop", 200.0, recv="blocking", main=main, processes=n))
                for mb in ("mpsc", "nonblocking", "mutex"):
                    hop = 900.0 if (main == "member" and n == slow_at) else 100.0
                    pts.append(_po_point("po-ring", f"fiber:{mb}", "hop", hop, recv="blocking", main=main,
                                         processes=n))
        return pts

    assert rules.evaluate(rule, points(None)).status == rules.HELD
    for n in (2, 100, 1000, 6000):  # any one size where main's ring is slower than Go's fails it
        assert rules.evaluate(rule, points(n)).status == rules.FAILED


def test_cold_spawn_against_erlang_comes_out_either_way():
    """The best fiber mailbox's spawn_cold at or below Erlang's spawn at 1,000 and 6,000 processes:
    held when one mailbox is below at both sizes, not held when every one is above at either; the warm
    spawn metric and the other sizes are not read."""
    rule = _po_claim("po-ring", "cold spawn")

    def points(slow_at, warm=0.1):
        pts = []
        for n in (2, 100, 1000, 6000):
            pts.append(_po_point("po-ring", "erlang", "spawn_cold", 1.5, recv="blocking", main="outside", processes=n))
            pts.append(_po_point("po-ring", "erlang", "spawn", 1.5, recv="blocking", main="outside", processes=n))
            for mb, factor in (("mpsc", 1.0), ("nonblocking", 1.3), ("mutex", 2.0)):
                cold = (3.0 if n == slow_at else 1.0) * factor
                if n in (2, 100):
                    cold = 40.0  # small rings: the first chunk's mapping dominates, never read
                pts.append(_po_point("po-ring", f"fiber:{mb}", "spawn_cold", cold, recv="blocking", main="outside",
                                     processes=n))
                pts.append(_po_point("po-ring", f"fiber:{mb}", "spawn", warm, recv="blocking", main="outside",
                                     processes=n))
        return pts

    assert rules.evaluate(rule, points(None)).status == rules.HELD
    assert rules.evaluate(rule, points(None, warm=9.0)).status == rules.HELD  # warm spawn is not read
    for n in (1000, 6000):
        assert rules.evaluate(rule, points(n)).status == rules.FAILED
        assert rules.evaluate(rule, points(n, warm=0.01)).status == rules.FAILED


# ---------------------------------------------------------------- queues at scale: verdicts either way

def _q_point(algorithm, threads, median, peer=False):
    return Point(experiment="dg25-prodcons", algorithm=algorithm, params={"threads": threads}, metric="throughput",
                 unit="Mops/s", better="higher", median=median, min=median, max=median, samples=[median] * rules.MIN_SAMPLES,
                 counters={}, line=1, peer=peer, family="queue", props="fifo")


def _prodcons_claim(needle):
    found = [c for c in claims() if c["experiment"] == "dg25-prodcons" and needle in c["text"]]
    assert len(found) == 1, [c["text"] for c in claims() if c["experiment"] == "dg25-prodcons"]
    return found[0]["rule"]


def _scale_points(values, oversubscribed=1.0):
    """values: algorithm -> throughput at N = 8 (16 threads on 16 units); N = 16 oversubscribes
    them and must not be read (its values are `oversubscribed` for every queue)."""
    pts = []
    for name, v in values.items():
        peer = name.startswith("crossbeam")
        pts += [_q_point(name, 8, v, peer), _q_point(name, 16, oversubscribed, peer), _q_point(name, 1, 5.0, peer)]
    return pts


QUEUES = ("lcrq", "lprq", "lcrq-af", "lprq-af", "wfqueue", "wcq", "scq", "scq2", "nblfq")


def test_best_queue_at_scale_against_the_best_peer_comes_out_either_way():
    rule = _prodcons_claim("syncq's best MPMC queue")
    behind = {**{q: 10.0 for q in QUEUES}, "crossbeam:seg_queue": 20.0}
    one_ahead = {**behind, "wfqueue": 25.0}
    assert rules.evaluate(rule, _scale_points(one_ahead), machine={"pus": 16}).status == rules.HELD
    assert rules.evaluate(rule, _scale_points(behind), machine={"pus": 16}).status == rules.FAILED
    funnel_ahead = {**behind, "lprq-af": 25.0}  # a funnel variant counts as syncq's best too
    assert rules.evaluate(rule, _scale_points(funnel_ahead), machine={"pus": 16}).status == rules.HELD
    # the oversubscribed point is not read, however it comes out
    assert rules.evaluate(rule, _scale_points(behind, oversubscribed=99.0), machine={"pus": 16}).status == rules.FAILED
    assert rules.evaluate(rule, _scale_points(one_ahead), machine={"pus": 8}).status == rules.UNMEASURABLE


@pytest.mark.parametrize("lprq, status", [(10.0, "held"), (11.9, "held"), (8.4, "held"), (12.5, "did not hold"),
                                          (8.0, "did not hold")])
def test_lprq_within_1_2x_of_lcrq_either_way(lprq, status):
    rule = _prodcons_claim("LPRQ (LCRQ's rings")
    values = {"lcrq": 10.0, "lprq": lprq, "crossbeam:seg_queue": 20.0}
    assert rules.evaluate(rule, _scale_points(values), machine={"pus": 16}).status == status


@pytest.mark.parametrize("af, status", [(12.0, "held"), (8.0, "did not hold")])
def test_funnels_against_lcrq_at_scale_come_out_either_way(af, status):
    rule = _prodcons_claim("Aggregating funnels for the ring tickets")
    values = {"lcrq": 10.0, "lcrq-af": af, "crossbeam:seg_queue": 20.0}
    assert rules.evaluate(rule, _scale_points(values), machine={"pus": 16}).status == status
    assert rules.evaluate(rule, _scale_points(values), machine={"pus": 8}).status == rules.UNMEASURABLE


@pytest.mark.parametrize("scq, status", [(14.0, "held"), (6.6, "did not hold")])
def test_scq_share_of_the_best_peer_comes_out_either_way(scq, status):
    rule = _prodcons_claim("SCQ moves at least twice")
    values = {"scq": scq, "crossbeam:seg_queue": 20.0}
    assert rules.evaluate(rule, _scale_points(values), machine={"pus": 16}).status == status


def test_the_competitor_panel_at_one_pair_against_nblfq_comes_out_either_way():
    rule = _prodcons_claim("none of 004's competitor panel")
    panel = ("lcrq", "lprq", "wcq", "wfqueue", "scq2")
    fast = [_q_point(q, 1, 60.0) for q in panel] + [_q_point("nblfq", 1, 100.0)]
    slow = [_q_point(q, 1, 60.0 if q != "wcq" else 30.0) for q in panel] + [_q_point("nblfq", 1, 100.0)]
    assert rules.evaluate(rule, fast).status == rules.HELD
    assert rules.evaluate(rule, slow).status == rules.FAILED


@pytest.mark.parametrize("pus,full,crowded", [(2, 1, 2), (16, 8, 16)])
def test_the_panel_past_the_units_comes_out_either_way(pus, full, crowded):
    """The panel keeps half its rate with its threads twice the units, or one collapses;
    the counts between (N = 4 on 16 units) and beyond (N = 32) are not read."""
    rule = _prodcons_claim("collapses when its threads outnumber")
    panel = ("lcrq", "lprq", "lcrq-af", "lprq-af", "wcq", "wfqueue", "scq2", "loo")

    def points(crowded_rate):
        out = []
        for q in panel:
            out += [_q_point(q, full, 20.0), _q_point(q, crowded, crowded_rate(q)), _q_point(q, 4, 1.0),
                    _q_point(q, 32, 1.0)]
        return out

    assert rules.evaluate(rule, points(lambda q: 12.0), machine={"pus": pus}).status == rules.HELD
    collapsed = rules.evaluate(rule, points(lambda q: 12.0 if q != "loo" else 4.0), machine={"pus": pus})
    assert collapsed.status == rules.FAILED and "loo at threads=" in collapsed.explanation


# ---------------------------------------------------------------- notes name only the selected peers

def test_the_left_out_peer_note_names_only_peers_the_run_selected(tmp_path):
    """dg25 leaves the rings that spin on a preempted thread out where the 2N
    threads outnumber the units, and says so; a run whose --algos did not
    select such a ring says nothing of it."""
    queues = lab("algos", "queue", check=0).stdout
    if "dpdk:ring_mpmc" not in queues:
        pytest.skip("dpdk:ring_mpmc is not built here (DPDK absent)")

    def notes(algos, out):
        lab("run", "dg25-prodcons", "--size", "smoke", "--threads", "2", "--pus", "2", "--algos", algos, "--quiet",
            "--out", str(out), check=0)
        recs = records(out)
        return [r["text"] for r in recs if r.get("type") == "note"]

    with_ring = notes("lcrq,dpdk:ring_mpmc", tmp_path / "with")
    assert any(t.startswith("dpdk:ring_mpmc is not run where") for t in with_ring), with_ring
    without = notes("lcrq", tmp_path / "without")
    assert not any("is not run where" in t for t in without), without


# ---------------------------------------------------------------- without a topology

NO_TOPOLOGY = {"HWLOC_COMPONENTS": "stop"}  # hwloc enables no discovery component: loading fails


def on_two_cpus(*args):
    """syncq-lab args, without a topology, allowed the first two CPUs this
    process may run on (sched_getaffinity): the same 2-CPU run on any machine
    of 2 or more."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip(f"this process may run on {len(cpus)} CPU: a 2-CPU run needs 2")
    r = subprocess.run([LAB, *args], capture_output=True, text=True, timeout=600, env={**os.environ, **NO_TOPOLOGY},
                       preexec_fn=lambda: os.sched_setaffinity(0, cpus[:2]))
    assert r.returncode == 0, (r.returncode, r.stderr)
    return r


def cpuinfo_model():
    """The processor's name as /proc/cpuinfo's first "model name" line gives
    it, or "unknown" where there is none (what the lab records without a
    topology)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip() or "unknown"
    except OSError:
        pass
    return "unknown"


def test_without_a_topology_the_plan_is_the_cpus_the_run_may_use():
    """hwloc found no topology: the run's processing units are the CPUs
    sched_getaffinity allows (2 here), the plan's thread list is that of 2
    units (1..4, not 1's 1..2), and the plan says where the count came
    from."""
    lines = [json.loads(line) for line in on_two_cpus("run", "np99-counter", "--quick", "--plan").stdout.splitlines()]
    (exp,), (plan,) = lines[:-1], [lines[-1]["plan"]]
    assert exp["threads"] == [1, 2, 3, 4], exp
    assert (plan["pus"], plan["planned_pus"]) == (2, 2), plan
    assert plan["pus_source"].startswith("sched_getaffinity (no topology: "), plan


def test_without_a_topology_a_claim_that_needs_2_units_is_judged_on_2_cpus(tmp_path):
    """A 2-CPU run without hwloc: the machine record's pus is 2 with its
    source, its cores unknown (null: two CPUs may be two cores or one
    core's two hardware threads), the run is unpinned (pinning by CPU number could put two
    workers on one core's hardware threads: the kernel, which knows the
    cores, places them), the points are measured at 1..4 threads, and a
    claim that needs 2 units is judged at 2 threads rather than found not
    measurable on 1."""
    on_two_cpus("run", "np99-counter", "--size", "smoke", "--algos", "faa", "--reps", "6", "--launches", "1",
                "--quiet", "--out", str(tmp_path))
    (machine,) = [r for r in records(tmp_path) if r["type"] == "machine"]
    assert (machine["pus"], machine["planned_pus"]) == (2, 2), machine
    assert machine["pus_source"].startswith("sched_getaffinity (no topology: "), machine
    assert machine["cores"] is None, machine
    assert machine["cpu_model"] == cpuinfo_model(), machine
    assert machine["pinning"] == "refused: no topology", machine
    (result,) = load.load(tmp_path / "results.jsonl").experiments
    assert sorted({p.params["threads"] for p in result.points}) == [1, 2, 3, 4]
    rule = {"op": "needs_pus", "pus": 2, "rule": {"op": "value_above", "metric": "time", "algo": "faa",
                                                   "where": {"work_ns": 0}, "at": "max_threads", "bound": 0}}
    v = rules.evaluate(rule, result.points, machine=result.machine)
    assert v.status == rules.HELD, v.explanation
    assert "threads=2" in v.explanation, v.explanation
