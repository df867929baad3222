#!/usr/bin/env python3
"""The benchmark record of coterie's bench scripts (Python standard library only).

One JSON object per measurement, one object per line, in ``bench/results/<system>.jsonl``::

    {"system": "ring", "impl": "coterie", "op": "rq_mul",
     "params": {"n": 8192, "limbs": 4, "logq": 220},
     "unit": "ns", "value": 20718.4, "samples": 30,
     "label": null, "rev": "b1e6418", "date": "2026-11-25T10:40:00Z",
     "host": {"cpu": "AMD EPYC", "cores": 2, "avx512": ["avx512f", ...],
              "load": [0.41, 0.7, 1.2], "os": "Linux 6.8.0 x86_64"}}

Fields (all always present, in this order; see bench/README.md):

* ``system``  what was measured: ``ring``, ``bfv``, ``tfhe``, ``tfhe-mk``, ``spdz``, ``threshold``,
  ``hss``, ``net``; the file name is ``<system>.jsonl``.
* ``impl``    who: ``coterie`` or a peer (``lattigo``, ``fhe-math``, ``fhe.rs``, ``seal``,
  ``tfhe-rs``, ``gmp``), or a reference figure (``paper``, ``formula``).
* ``op``      snake_case operation id, stable across runs (the compare runner matches on it).
* ``params``  the measurement point (flat object of numbers, strings and booleans): everything
  that must be equal for two records to be compared (N, limbs, parties, RTT, ...).
* ``unit``    ``ns``, ``us``, ``ms``, ``s`` (time per operation; lower is better), ``1/s``
  (operations per second; higher is better), ``MB/s``, ``Mbit/s``, ``bytes``, ``kB``, ``MB``, ``count``, ``ratio``, ``var``.
* ``value``   the number (a median where the tool takes several samples).
* ``samples`` how many samples ``value`` summarizes, or null.
* ``label``   free text given with ``--label`` (``before``/``after`` in compare runs), or null.
* ``rev``     ``git rev-parse --short HEAD`` of the measured tree (``+dirty`` when it had changes),
  or null when unknown (results converted from before this format).
* ``date``    UTC time of the run, ISO 8601.
* ``host``    the machine: ``cpu`` model, ``cores``, ``avx512`` flags, 1/5/15-min ``load`` when the
  measurement started, ``os`` (null where unknown, e.g. avx512 in converted results).

Subcommands (used by bench/lib.sh and the scripts; each prints records as JSON lines):

  criterion DIR [--system S]       records from a criterion output tree (median, ns)
  select FILE --system S [--impl I | --not-impl I]   records of a record (or legacy) JSONL, filtered
  criterion-stdout FILE            records from criterion's printed output (middle estimate, ns)
  nsjsonl FILE                     records from {"impl","op","ns","samples",...} lines (Lattigo, SEAL)
  tfhe FILE                        records from the coterie-tfhe `pbs` bench JSON
  tfhe-mk FILE                     records from mk_bench JSON lines
  spdz FILE                        records from spdz_bench JSON
  threshold FILE                   records from threshold_bench JSON (grid, prep or legacy)
  hss FILE                         records from hss_bench's markdown output
  netem-selfcheck | netem-mesh | net-loopback FILE   records of the coterie-net measurements
  write --system S --out DIR [--mode merge|append|replace] [--label L] [--rev R] [--date D]
        [--host-json JSON] FILE...   stamp partial records and write DIR/S.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

FIELDS = ("system", "impl", "op", "params", "unit", "value", "samples", "label", "rev", "date", "host")
UNITS = ("ns", "us", "ms", "s", "1/s", "bytes", "kB", "MB", "MB/s", "Mbit/s", "count", "ratio", "var")
# Seconds per unit, for time units (lower is better).
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def rec(impl, op, unit, value, params=None, samples=None, **extra):
    """A partial record (system/label/rev/date/host are filled in by `write`)."""
    r = {"impl": impl, "op": op, "params": dict(params or {}), "unit": unit, "value": value, "samples": samples}
    r.update(extra)
    return r


def number(s):
    """int or float from a string, else the string itself."""
    try:
        return int(s)
    except (TypeError, ValueError):
        pass
    try:
        return float(s)
    except (TypeError, ValueError):
        return s


def validate(r: dict, where: str = "") -> None:
    """Raise ValueError when `r` is not a complete record."""
    missing = [f for f in FIELDS if f not in r]
    if missing:
        raise ValueError(f"{where}missing fields {missing}")
    if not isinstance(r["params"], dict):
        raise ValueError(f"{where}params must be an object")
    for k, v in r["params"].items():
        if not isinstance(v, (int, float, str, bool)) and v is not None:
            raise ValueError(f"{where}params.{k} must be a scalar")
    if r["unit"] not in UNITS:
        raise ValueError(f"{where}unit {r['unit']!r} not one of {UNITS}")
    if not isinstance(r["value"], (int, float)) or isinstance(r["value"], bool):
        raise ValueError(f"{where}value must be a number")
    for f in ("system", "impl", "op", "date"):
        if not isinstance(r[f], str) or not r[f]:
            raise ValueError(f"{where}{f} must be a non-empty string")


def read_records(path: str, complete: bool = True) -> list[dict]:
    """Read a JSONL file of records (skips blank lines and # comments)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{lineno}: not JSON: {e}")
            if complete:
                try:
                    validate(r, f"{path}:{lineno}: ")
                except ValueError as e:
                    raise SystemExit(str(e))
            out.append(r)
    return out


def key(r: dict) -> tuple:
    """Identity of a measurement point: (system, impl, op, params)."""
    return (r.get("system"), r["impl"], r["op"], json.dumps(r["params"], sort_keys=True))


def ordered(r: dict) -> dict:
    return {f: r.get(f) for f in FIELDS}


def dumps(r: dict) -> str:
    return json.dumps(r, ensure_ascii=False, allow_nan=False)


# ------------------------------------------------------------------ converters of native outputs

ID_PARAM = re.compile(r"^([A-Za-z_][\w.]*)=([^/]+)$")


def from_criterion(root: str, system: str | None = None) -> list[dict]:
    """Every criterion benchmark under `root`: group = op, function = impl, value "k=v/k=v" = params."""
    out = []
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or not {"benchmark.json", "estimates.json"} <= set(files):
            continue
        with open(os.path.join(dirpath, "benchmark.json"), encoding="utf-8") as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json"), encoding="utf-8") as f:
            est = json.load(f)
        params = {}
        for part in (bench.get("value_str") or "").split("/"):
            m = ID_PARAM.match(part)
            if m:
                params[m.group(1)] = number(m.group(2))
            elif part:
                params["id"] = part
        if system == "ring" and "limbs" in params:
            params.setdefault("logq", 55 * int(params["limbs"]))
        samples = None
        sp = os.path.join(dirpath, "sample.json")
        if os.path.exists(sp):
            with open(sp, encoding="utf-8") as f:
                samples = len(json.load(f).get("iters", []))
        out.append(rec(bench.get("function_id") or "coterie", bench["group_id"], "ns",
                       float(est["median"]["point_estimate"]), params, samples))
    out.sort(key=lambda r: (r["op"], json.dumps(r["params"], sort_keys=True), r["impl"]))
    return out


CRIT_UNIT = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
CRIT_NAME = re.compile(r"^(\w+)/([\w.\-^]+)/([^\s]+)")
CRIT_TIME = re.compile(r"time:\s+\[(\S+) (\S+) (\S+) (\S+) (\S+) (\S+)\]")


def from_criterion_stdout(path: str) -> list[dict]:
    """Criterion's printed "op/impl/k=v time: [lo mid hi]" lines (the middle estimate, ns)."""
    out, name = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = CRIT_NAME.match(line.strip())
            if m:
                name = m.groups()
            t = CRIT_TIME.search(line)
            if t and name:
                params = {}
                for part in name[2].split("/"):
                    pm = ID_PARAM.match(part)
                    if pm:
                        params[pm.group(1)] = number(pm.group(2))
                out.append(rec(name[1], name[0], "ns", float(t.group(3)) * CRIT_UNIT[t.group(4)], params))
                name = None
    return out


def from_nsjsonl(path: str) -> list[dict]:
    """{"impl","op","ns","samples", <params>...} lines (bench/lattigo, bench/lattigo-bfv, bfv_seal.py)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            o = json.loads(line)
            params = {k: v for k, v in o.items() if k not in ("impl", "op", "ns", "samples")}
            out.append(rec(o["impl"], o["op"], "ns", float(o["ns"]), params, o.get("samples")))
    return out


TFHE_OPS = (
    ("boolean keygen", "keygen_boolean"),
    ("NAND gate", "nand"),
    ("4-bit PBS keygen", "keygen_pbs4"),
    ("PBS 4-bit LUT", "pbs4"),
    ("LWE key switch", "keyswitch"),
)


def slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def from_tfhe(path: str) -> list[dict]:
    """coterie-tfhe `pbs` bench JSON: each row gives a coterie and a tfhe-rs record (ms)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    reps = doc.get("reps")
    out = []
    for row in doc["rows"]:
        name = row["name"]
        op = next((o for prefix, o in TFHE_OPS if name.startswith(prefix)), slug(name))
        samples = 1 if "keygen" in op else reps
        params = {"what": re.sub(r",\s*ms$", "", name)}
        out.append(rec("coterie", op, "ms", row["coterie_ms"], params, samples))
        out.append(rec("tfhe-rs", op, "ms", row["tfhe_rs_ms"], params, samples))
    return out


def from_tfhe_mk(path: str) -> list[dict]:
    """mk_bench JSON lines (one object per party count k)."""
    out = []
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for o in rows:
        p = {"k": o["k"], "params": o["params"]}
        reps, trials = o.get("reps"), o.get("trials")
        out += [
            rec("coterie", "bootstrap", "ms", o["tb_ms"], p, reps),
            rec("coterie", "blind_rotate", "ms", o["tbr_ms"], p, reps),
            rec("coterie", "keygen_all_parties", "s", o["keygen_s"], p, 1),
            rec("coterie", "key_size", "bytes", o["key_bytes"], p),
            rec("tfhe-rs", "pbs_same_params", "ms", o["tfhe_rs_pbs_ms"], p, reps),
            rec("tfhe-rs", "keyswitch_same_params", "ms", o["tfhe_rs_ks_ms"], p, reps),
        ]
        if o.get("paper_tb_s") is not None:
            out.append(rec("paper", "bootstrap", "s", o["paper_tb_s"], p))
        for f, op, unit in (("err1", "experiment1_err1", "count"), ("err2", "experiment1_err2", "count")):
            if o.get(f) is not None:
                out.append(rec("coterie", op, unit, o[f], p, trials))
        for f, op, unit in (("v0", "v0", "var"), ("kappa", "kappa", "ratio")):
            if o.get(f + "_measured") is not None:
                out.append(rec("coterie", op, unit, o[f + "_measured"], p, trials))
            if o.get(f + "_predicted") is not None:
                out.append(rec("formula", op, unit, o[f + "_predicted"], p))
    return out


def _fields(o: dict, params: dict, impl: str, fields: dict, samples=None) -> list[dict]:
    out = []
    for field, (op, unit) in fields.items():
        if isinstance(o.get(field), (int, float)) and not isinstance(o.get(field), bool):
            out.append(rec(impl, op, unit, o[field], params, samples))
    return out


def from_spdz(path: str) -> list[dict]:
    """spdz_bench --json output (online rows have "ring", OT rows "ot_prep")."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    out = []
    for o in rows:
        net = "netem-1ms-1gbit" if o.get("netem") else "loopback"
        if "ring" in o:
            p = {"ring": o["ring"], "batch": o["batch"], "parties": o.get("parties", 2), "net": net}
            out += _fields(o, p, "coterie", {
                "mul_per_s": ("online_mul", "1/s"), "mul_s": ("online_mul_batch", "s"),
                "mul_check_s": ("online_mul_check", "s"), "mul_bytes_sent_per_party": ("online_mul_bytes", "bytes"),
                "open_per_s": ("online_open", "1/s"), "open_s": ("online_open_batch", "s"),
                "open_check_s": ("online_open_check", "s"), "open_bytes_sent_per_party": ("online_open_bytes", "bytes"),
            })
        elif "ot_prep" in o:
            # "ot_ext": the OT extension (kos, ss<k>); rows before it existed were KOS.
            # "lanes": batches in flight (OtLanes); rows before it existed ran one
            p = {"ring": o["ot_prep"], "parties": o.get("parties", 2), "net": net,
                 "triples": o.get("triples"), "bits": o.get("bits"), "ot_ext": o.get("ot_ext", "kos"),
                 "lanes": o.get("lanes", 1)}
            out += _fields(o, p, "coterie", {
                "setup_s": ("ot_setup", "s"), "triples_per_s": ("ot_triples", "1/s"),
                "bytes_sent_per_triple_per_party": ("ot_triple_bytes", "bytes"),
                "bits_per_s": ("ot_bits", "1/s"), "bytes_sent_per_bit_per_party": ("ot_bit_bytes", "bytes"),
            })
    return out


def from_threshold(path: str) -> list[dict]:
    """threshold_bench JSON: grid rows, prep rows (Tables 4/5) or the legacy `bench` rows."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    out = []
    for o in rows:
        if "rtt_ms" in o and "latency_ms" in o:  # grid (Tables 2 and 3)
            p = {"parties": o["parties"], "rtt_ms": o["rtt_ms"], "mbit": o["mbit"], "batch": o["batch"]}
            # the threads engine's rows keep the keys they always had (no "engine")
            if o.get("engine", "threads") != "threads":
                p["engine"] = o["engine"]
            out += _fields(o, p, "coterie", {
                "latency_ms": ("decrypt_latency", "ms"), "throughput_dec_s": ("decrypt_throughput", "1/s"),
                "bytes_per_dec_party0": ("decrypt_bytes_party0", "bytes"),
            })
        elif o.get("table") == 4:
            p = {"table": 4, "a": o["a"], "gates": o["gates"], "parties": 2, "rtt_ms": 1, "mbit": 1000}
            out += _fields(o, p, "coterie", {"gates_per_s": ("prep_gates", "1/s"), "kB_per_gate": ("prep_gate_size", "kB")})
        elif o.get("table") == 5:
            p = {"table": 5, "what": o.get("what", "")}
            out += _fields(o, p, "coterie", {
                "s_per_1000_dec": ("prep_per_1000_dec", "s"), "MB_per_1000_dec": ("prep_size_per_1000_dec", "MB"),
                "triples_per_s": ("ot_triples", "1/s"), "MB_per_1000_triples": ("ot_size_per_1000_triples", "MB"),
                "s_per_1000_dec_triples": ("ot_triples_per_1000_dec", "s"),
                "MB_per_1000_dec_triples": ("ot_triples_size_per_1000_dec", "MB"),
                "s_per_1000_dec_total": ("prep_total_per_1000_dec", "s"),
            })
        elif "bench" in o:  # legacy three-schedule comparison
            p = {k: v for k, v in o.items() if isinstance(v, str) or k in ("parties", "a", "gates", "batch", "bundles")}
            p.pop("bench", None)
            b = o["bench"].replace("-", "_")
            out += _fields(o, p, "coterie", {
                "gates_per_s": (f"legacy_{b}", "1/s"), "kB_per_gate": (f"legacy_{b}_gate_size", "kB"),
                "s_per_1000_dec": (f"legacy_{b}_per_1000_dec", "s"), "MB_per_1000_dec": (f"legacy_{b}_size_per_1000_dec", "MB"),
                "dec_per_s": (f"legacy_{b}", "1/s"), "median_ms": (f"legacy_{b}", "ms"),
                "bytes_per_dec": (f"legacy_{b}_bytes", "bytes"),
            })
    return out


def from_netem_selfcheck(path: str) -> list[dict]:
    """bench/netem/selfcheck.sh's JSON array of {"rtt_ms", "rate_mbit", "engine", "result": {...}}
    (rows written before the event-loop engine have no "engine": they ran the threads engine)."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    out = []
    for o in rows:
        res = o.get("result") or {}
        p = {"rtt_ms": o["rtt_ms"], "rate_mbit": o["rate_mbit"], "within_5pct": res.get("within_5pct")}
        # the threads engine's rows keep the keys they always had (no "engine")
        if o.get("engine", "threads") != "threads":
            p["engine"] = o["engine"]
        out += _fields(res, p, "coterie", {
            "rtt_ms_measured": ("netem_rtt", "ms"), "rate_mbit_measured": ("netem_rate", "Mbit/s"),
            "relay_overhead_us": ("netem_relay_overhead", "us"), "rtt_ms_direct": ("loopback_rtt", "ms"),
        })
    return out


def from_netem_mesh(path: str) -> list[dict]:
    """bench/netem/run-mesh.sh's JSON array (one object per RTT x rate setting)."""
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    out = []
    for o in rows:
        p = {k: o[k] for k in ("parties", "rounds", "rtt_ms", "rate_mbit", "netns", "ok") if k in o}
        out += _fields(o, p, "coterie", {"total_ms": ("mesh_sum_total", "ms"), "connect_ms": ("mesh_connect", "ms")})
    return out


def from_net_loopback(path: str) -> list[dict]:
    """crates/net/examples/net_bench.rs JSON (loopback rounds and bulk throughput)."""
    with open(path, encoding="utf-8") as f:
        o = json.load(f)
    out = _fields(o, {}, "raw-tcp", {"raw_tcp_pingpong_rtt_us": ("raw_tcp_pingpong_rtt", "us")})
    for r in o.get("rounds", []):
        p = {"parties": r["n"]}
        out += _fields(r, p, "coterie", {"tls_round_us": ("tls_round", "us"), "in_memory_round_us": ("in_memory_round", "us")})
        out += _fields(r, p, "raw-tcp", {"raw_tcp_round_us": ("tls_round", "us")})
    p = {"bytes": o.get("bulk_bytes")}
    out += _fields(o, p, "coterie", {"bulk_tls_mesh_MBps": ("bulk_mesh", "MB/s"),
                                      "bulk_tls_mesh_serde_blob_MBps": ("bulk_mesh_serde_blob", "MB/s"),
                                      "bulk_in_memory_mesh_MBps": ("bulk_in_memory_mesh", "MB/s"),
                                      "bulk_bare_tls_stream_MBps": ("bulk_bare_tls_stream", "MB/s")})
    out += _fields(o, p, "raw-tcp", {"bulk_raw_tcp_MBps": ("bulk_mesh", "MB/s")})
    return out


MD_ROW = re.compile(r"^\|(.+)\|\s*$")


def _md_tables(text: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(heading, header cells, rows) of every markdown table."""
    tables, heading, lines = [], "", text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if MD_ROW.match(line) and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|\s*$", lines[i + 1]):
            head = [c.strip() for c in line.strip().strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and MD_ROW.match(lines[i]):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            tables.append((heading, head, rows))
            continue
        i += 1
    return tables


def from_hss(path: str) -> list[dict]:
    """hss_bench's markdown: modular multiplication, conversion steps, full conversions, RMS rows."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for heading, head, rows in _md_tables(text):
        if heading.startswith("1536-bit"):
            for r in rows:
                impl = "gmp" if "GMP" in r[0] else "paper" if "paper" in r[0] else "coterie"
                if r[1]:
                    out.append(rec(impl, "modmul_1536", "1/s", float(r[1]), {"method": r[0]}))
        elif heading.startswith("Conversion steps"):
            for r in rows:
                impl = "paper" if "paper" in r[0] else "reference" if "reference" in r[0] else "coterie"
                if r[1]:
                    out.append(rec(impl, "convert_steps", "1/s", float(r[1]), {"engine": r[0]}))
        elif heading.startswith("RMS"):
            col = {h: j for j, h in enumerate(head)}

            def cell(r, name):
                j = next((j for h, j in col.items() if h.startswith(name)), None)
                v = r[j] if j is not None and j < len(r) else "—"
                return None if v in ("—", "-", "") else v

            for r in rows:
                p = {"eps": cell(r, "ε"), "B": number(cell(r, "B")), "R": number(cell(r, "R")), "d": number(cell(r, "d"))}
                for name, impl in (("RMS mult/s", "coterie"), ("paper", "paper"), ("plain-GMP", "gmp")):
                    v = cell(r, name)
                    if v is not None:
                        out.append(rec(impl, "rms_mult", "1/s", float(v), p))
    for m in re.finditer(r"^Full Convert\* \(([^)]*)\): (\d+) random starts, mean (\d+) steps.*?, ([\d.e+]+) steps/s, ([\d.]+) µs/conversion",
                         text, re.M):
        p = {"engine": m.group(1)}
        out.append(rec("coterie", "convert_full", "us", float(m.group(5)), p, int(m.group(2))))
        out.append(rec("coterie", "convert_full_steps", "1/s", float(m.group(4)), p, int(m.group(2))))
    return out


def select(path: str, system: str, not_impl: str | None = None, impl: str | None = None) -> list[dict]:
    """Records of `path`, a record JSONL or a legacy {"impl","op","ns",...} file, filtered by impl."""
    out = []
    with open(path, encoding="utf-8") as f:
        first = next((line for line in f if line.strip().startswith("{")), "{}")
    recs = read_records(path) if "system" in json.loads(first) else from_nsjsonl(path)
    for r in recs:
        if r.get("system", system) != system:
            continue
        if (not_impl and r["impl"] == not_impl) or (impl and r["impl"] != impl):
            continue
        out.append(r)
    return out


# ------------------------------------------------------------------ writer

def write(args) -> int:
    host = json.loads(args.host_json) if args.host_json else None
    new = []
    for path in args.files:
        for r in (read_records(path, complete=False) if path != "-" else
                  [json.loads(x) for x in sys.stdin if x.strip()]):
            r.setdefault("system", args.system)
            if r["system"] != args.system:
                raise SystemExit(f"benchrec write: record of system {r['system']!r} in a write for {args.system!r}")
            for f, v in (("label", args.label or None), ("rev", args.rev), ("date", args.date), ("host", host)):
                if r.get(f) is None:
                    r[f] = v
            r.setdefault("samples", None)
            r = ordered(r)
            try:
                validate(r, f"{path}: ")
            except ValueError as e:
                raise SystemExit(f"benchrec write: {e}")
            new.append(r)
    os.makedirs(args.out, exist_ok=True)
    dest = os.path.join(args.out, f"{args.system}.jsonl")
    old = read_records(dest) if os.path.exists(dest) and args.mode != "replace" else []
    if args.mode == "merge":
        # A run replaces the (impl, op) pairs it measured; other pairs keep their older records.
        pairs = {(r["impl"], r["op"]) for r in new}
        old = [r for r in old if (r["impl"], r["op"]) not in pairs]
    elif args.mode == "points":
        # A partial rerun replaces only the points (impl, op, params) it measured.
        keys = {key(r) for r in new}
        old = [r for r in old if key(r) not in keys]
    tmp = dest + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for r in old + new:
            f.write(dumps(r) + "\n")
    os.replace(tmp, dest)
    print(f"{dest}: {len(new)} new records, {len(old)} kept", file=sys.stderr)
    return 0


CONVERTERS = {
    "criterion-stdout": from_criterion_stdout,
    "nsjsonl": from_nsjsonl, "tfhe": from_tfhe, "tfhe-mk": from_tfhe_mk, "spdz": from_spdz,
    "threshold": from_threshold, "hss": from_hss, "netem-selfcheck": from_netem_selfcheck,
    "netem-mesh": from_netem_mesh, "net-loopback": from_net_loopback,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("criterion")
    c.add_argument("dir")
    c.add_argument("--system")
    for name in CONVERTERS:
        sub.add_parser(name).add_argument("file")
    s = sub.add_parser("select")
    s.add_argument("file")
    s.add_argument("--system", required=True)
    s.add_argument("--impl")
    s.add_argument("--not-impl")
    w = sub.add_parser("write")
    w.add_argument("--system", required=True)
    w.add_argument("--out", required=True)
    w.add_argument("--mode", choices=("merge", "points", "append", "replace"), default="merge")
    w.add_argument("--label")
    w.add_argument("--rev")
    w.add_argument("--date", required=True)
    w.add_argument("--host-json")
    w.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.cmd == "write":
        return write(args)
    if args.cmd == "criterion":
        recs = from_criterion(args.dir, args.system)
    elif args.cmd == "select":
        recs = select(args.file, args.system, args.not_impl, args.impl)
    else:
        recs = CONVERTERS[args.cmd](args.file)
    for r in recs:
        print(dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
