# SPDX-License-Identifier: BSD-2-Clause
"""What a valid record looks like (docs/results-format.md), checked field by field."""

import json
import sys

SCHEMA_VERSION = 1


def _is_number(value):
    # JSON true/false decode to bool, which Python counts as int; they are not numbers here.
    # 1e400 decodes to inf and huge integers overflow float arithmetic: only finite
    # float-sized numbers are measurements.
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= sys.float_info.max
    )


def _is_claim(value):
    return (
        isinstance(value, dict) and isinstance(value.get("text"), str) and isinstance(value.get("rule"), dict)
    )


# Each field type: (description used in error messages, predicate).
STRING = ("a string", lambda v: isinstance(v, str))
RUN_ID = ("a non-empty string", lambda v: isinstance(v, str) and v != "")
INTEGER = ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
INTEGER_OR_NULL = ("an integer or null", lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)))
NUMBER = ("a number", _is_number)
BOOLEAN = ("true or false", lambda v: isinstance(v, bool))
STRING_OR_NULL = ("a string or null", lambda v: v is None or isinstance(v, str))
STRINGS = ("an array of strings", lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v))
NUMBERS = ("an array of numbers", lambda v: isinstance(v, list) and all(_is_number(n) for n in v))
PARAMS = (
    "an object of numbers or strings",
    lambda v: isinstance(v, dict) and all(_is_number(p) or isinstance(p, str) for p in v.values()),
)
COUNTERS = ("an object of numbers", lambda v: isinstance(v, dict) and all(_is_number(c) for c in v.values()))
BETTER = ('"lower" or "higher"', lambda v: v in ("lower", "higher"))
CLAIMS = (
    'an array of {"text": string, "rule": object}',
    lambda v: isinstance(v, list) and all(_is_claim(c) for c in v),
)

PEERS = (
    'an array of {"library", "package", "registered", "why"}',
    lambda v: isinstance(v, list)
    and all(
        isinstance(p, dict)
        and isinstance(p.get("library"), str)
        and isinstance(p.get("package"), str)
        and isinstance(p.get("registered"), int)
        and not isinstance(p.get("registered"), bool)
        and isinstance(p.get("why"), str)
        for p in v
    ),
)

COMMON_FIELDS = {"schema": INTEGER, "run_id": RUN_ID}

MACHINE_FIELDS = {
    "cpu_model": STRING,
    "cores": INTEGER_OR_NULL,  # null: unknown (no topology)
    "pus": INTEGER,
    "kernel": STRING,
    "compiler": STRING,
    "flags": STRING,
    "build_type": STRING,
    "git_revision": STRING,
    "date": STRING,
    "size": STRING,
    "reps": INTEGER,
    "pinning": STRING,
    "perf_counters": STRING,
    "command": STRING,
}

RECORD_FIELDS = {
    "machine": MACHINE_FIELDS,
    "experiment": {
        "name": STRING,
        "paper": STRING,
        "figure": STRING,
        "title": STRING,
        "description": STRING,
        "x": STRING_OR_NULL,
        "log_y": BOOLEAN,
        "claims": CLAIMS,
        "notes": STRINGS,
    },
    "point": {
        "experiment": STRING,
        "algorithm": STRING,
        "params": PARAMS,
        "metric": STRING,
        "unit": STRING,
        "better": BETTER,
        "median": NUMBER,
        "min": NUMBER,
        "max": NUMBER,
        "samples": NUMBERS,
        "counters": COUNTERS,
    },
    "note": {"experiment": STRING_OR_NULL, "text": STRING},
}


ALSO_X = (
    'an array of {"x": string, "join"?: string, "base"?: string, "metrics"?: [string]}',
    lambda v: isinstance(v, list)
    and all(
        isinstance(a, dict)
        and isinstance(a.get("x"), str)
        and all(isinstance(a.get(k, ""), str) for k in ("join", "base"))
        and (isinstance(a.get("metrics", []), list) and all(isinstance(m, str) for m in a.get("metrics", [])))
        for a in v
    ),
)

LAUNCH = ("a positive integer", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1)

# Fields a record may carry (older results lack them); checked when present.
OPTIONAL_FIELDS = {
    "machine": {
        "peers": PEERS,
        "peers_note": STRING,
        "launches": LAUNCH,
        "launch": LAUNCH,
        "max_reps": LAUNCH,
        "point_budget_ms": INTEGER,
        "claim_budget_ms": INTEGER,
        "claim_max_reps": LAUNCH,
        "planned_pus": LAUNCH,
        "suite_budget_s": INTEGER,
        "queue_wait": STRING,
        "perf_events": STRING,
        "po_clock_gate": STRING,
        "pus_source": STRING,
    },
    "experiment": {"also_x": ALSO_X, "launch": LAUNCH},
    "point": {"peer": BOOLEAN, "family": STRING, "props": STRING, "launch": LAUNCH, "po_clock_gate": STRING},
    "note": {"launch": LAUNCH},
}


def _shown(value):
    """A short JSON rendering of an offending value for an error message."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def problem(record):
    """Return what is wrong with a decoded record, or None when it is valid."""
    if not isinstance(record, dict):
        return "a record must be a JSON object"
    if "type" not in record:
        return "record lacks field 'type'"
    kind = record["type"]
    if kind not in RECORD_FIELDS:
        return f"unknown record type {_shown(kind)}"
    for name, (description, valid) in {**COMMON_FIELDS, **RECORD_FIELDS[kind]}.items():
        if name not in record:
            return f"{kind} record lacks field '{name}'"
        if not valid(record[name]):
            return f"{kind} field '{name}' must be {description}, got {_shown(record[name])}"
    for name, (description, valid) in OPTIONAL_FIELDS[kind].items():
        if name in record and not valid(record[name]):
            return f"{kind} field '{name}' must be {description}, got {_shown(record[name])}"
    if record["schema"] != SCHEMA_VERSION:
        return f"unsupported schema {record['schema']} (this report reads schema {SCHEMA_VERSION})"
    if kind == "point" and not record["min"] <= record["median"] <= record["max"]:
        return f"point needs min <= median <= max, got {record['min']}, {record['median']}, {record['max']}"
    return None
