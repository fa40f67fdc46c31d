#!/usr/bin/env python3
"""Oracle numbers for the hydrological-model readers (issue 26, item 1).

Reads every file of tests/data/hydro with the reference readers -- flopy's
`flopy.utils.HeadFile` / `UcnFile` / `flopy.mf6.utils.MfGrdFile` and pftools'
`parflow.tools.io.read_pfb` / `ParflowBinaryReader` -- and writes one JSON per file here:
the shape, the records as the file numbers them (KSTP, KPER, TOTIM, ...), the distinct
times, three named cells (the first active cell of the first time, the middle active cell of
the middle time, the last active cell of the last time) and the sum of the active values of
the last time. tests/hydro_readers.rs compares the Rust readers with these numbers.

"Active" is decided here exactly as the Rust default mask does (src/methods/hydro/output.rs):
a value within 1e-6 (relative) of +-1e30 (HNOFLO's default), of -999.99, any |value| >= 1e20
(HDRY-like) and non-finite values are masked, plus the file's own HNOFLO where the model
set one (`hnoflo` below: the MODFLOW-2005 Freyberg model uses 999).

Run (versions used for the committed JSONs: flopy 3.11.0, pftools 1.3.15, numpy 2.4.6):

    python3 -m venv /tmp/venv-hydro
    /tmp/venv-hydro/bin/pip install flopy pftools numpy
    /tmp/venv-hydro/bin/python tests/oracles/hydro/make_oracles.py
"""

import importlib.metadata
import json
import math
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")

import flopy  # noqa: E402
from flopy.mf6.utils import MfGrdFile  # noqa: E402
from flopy.utils import HeadFile, UcnFile  # noqa: E402
from parflow.tools.io import ParflowBinaryReader, read_pfb  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "data" / "hydro"

VERSIONS = {
    "flopy": importlib.metadata.version("flopy"),
    "pftools": importlib.metadata.version("pftools"),
    "numpy": importlib.metadata.version("numpy"),
}


def is_masked(v, hnoflo=None):
    """The Rust reader's default mask (and the caller's HNOFLO when given)."""
    v = float(v)
    if not math.isfinite(v):
        return True
    if hnoflo is not None and abs(v - hnoflo) <= 1e-6 * max(abs(hnoflo), 1e-30):
        return True
    for s in (1e30, -1e30, -999.99):
        if abs(v - s) <= 1e-6 * abs(s):
            return True
    return abs(v) >= 1e20 * (1 - 1e-6)


def cells(data, hnoflo=None):
    """Three named cells of `data` (times, layers, rows, cols): first active of the first
    time, middle active of the middle time, last active of the last time."""
    nt = data.shape[0]
    out = []
    for name, t, pick in (
        ("first_active", 0, lambda n: 0),
        ("middle_active", nt // 2, lambda n: n // 2),
        ("last_active", nt - 1, lambda n: n - 1),
    ):
        flat = data[t].ravel()
        active = [i for i, v in enumerate(flat) if not is_masked(v, hnoflo)]
        i = active[pick(len(active))]
        k, r, c = np.unravel_index(i, data.shape[1:])
        out.append(
            {
                "name": name,
                "time_index": int(t),
                "layer": int(k),
                "row": int(r),
                "col": int(c),
                "value": float(flat[i]),
            }
        )
    return out


def active_stats(data, hnoflo=None):
    last = data[-1].ravel()
    act = np.array([float(v) for v in last if not is_masked(v, hnoflo)])
    n_masked = sum(1 for v in data.ravel() if is_masked(v, hnoflo))
    return {
        "last_time_active_sum": float(np.sum(act, dtype=np.float64)),
        "last_time_active_count": int(act.size),
        "masked_total": int(n_masked),
    }


def layered(name, kind, precision, hnoflo=None, text=None):
    path = DATA / name
    if kind == "ucn":
        f = UcnFile(str(path), precision=precision)
        call = f"flopy.utils.UcnFile({name!r}, precision={precision!r})"
    else:
        kw = {"precision": precision}
        if text:
            kw["text"] = text
        f = HeadFile(str(path), **kw)
        args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
        call = f"flopy.utils.HeadFile({name!r}, {args})"
    rec = f.recordarray
    names = rec.dtype.names
    records = []
    for r in rec:
        d = {
            "kstp": int(r["kstp"]),
            "kper": int(r["kper"]),
            "totim": float(r["totim"]),
            "text": r["text"].decode().strip(),
            "ilay": int(r["ilay"]),
        }
        if "ntrans" in names:
            d["ntrans"] = int(r["ntrans"])
        if "pertim" in names:
            d["pertim"] = float(r["pertim"])
        records.append(d)
    # The distinct time records in file order (one per kstp, kper, totim [, ntrans]).
    times = []
    for d in records:
        key = [d["kstp"], d["kper"], d["totim"]]
        if "ntrans" in d:
            key = [d["ntrans"]] + key
        if key not in times:
            times.append(key)
    data = np.asarray(f.get_alldata(), dtype=np.float64)
    if data.ndim == 3:  # one layer squeezed by flopy
        data = data[:, None, :, :]
    out = {
        "file": name,
        "reader": call,
        "versions": VERSIONS,
        "precision": precision,
        "hnoflo": hnoflo,
        "shape": [int(f.nlay), int(f.nrow), int(f.ncol)],
        "n_layer_records": len(records),
        "times_key": "[ntrans,] kstp, kper, totim",
        "times": times,
        "text": records[0]["text"],
        "first_record": records[0],
        "last_record": records[-1],
        "cells": cells(data, hnoflo),
    }
    out.update(active_stats(data, hnoflo))
    return out


def grb(name):
    g = MfGrdFile(str(DATA / name))
    d = g._datadict
    gt = g.grid_type
    idomain = np.asarray(d["IDOMAIN"]).ravel()
    botm = np.asarray(d["BOTM"], dtype=np.float64).ravel()
    active = np.flatnonzero(idomain > 0)
    named = []
    for label, i in (
        ("first_active", active[0]),
        ("middle_active", active[len(active) // 2]),
        ("last_active", active[-1]),
    ):
        named.append({"name": label, "cell": int(i), "botm": float(botm[i])})
    out = {
        "file": name,
        "reader": f"flopy.mf6.utils.MfGrdFile({name!r})",
        "versions": VERSIONS,
        "grid_type": gt,
        "ncells": int(d["NCELLS"]),
        "nlay": int(d["NLAY"]),
        "nja": int(d["NJA"]),
        "xorigin": float(d["XORIGIN"]),
        "yorigin": float(d["YORIGIN"]),
        "angrot": float(d["ANGROT"]),
        "arrays": list(g._recordkeys),
        "top_first": float(np.ravel(d["TOP"])[0]),
        "top_last": float(np.ravel(d["TOP"])[-1]),
        "ia_first": int(d["IA"][0]),
        "ia_last": int(d["IA"][-1]),
        "ja_sum": int(np.sum(d["JA"], dtype=np.int64)),
        "idomain_active": int(active.size),
        "cells": named,
    }
    if gt == "DIS":
        out["nrow"] = int(d["NROW"])
        out["ncol"] = int(d["NCOL"])
        out["delr_first"] = float(d["DELR"][0])
        out["delc_last"] = float(d["DELC"][-1])
    else:
        out["ncpl"] = int(d["NCPL"])
        out["nvert"] = int(d["NVERT"])
        out["njavert"] = int(d["NJAVERT"])
        v = np.asarray(d["VERTICES"], dtype=np.float64).reshape(-1, 2)
        out["vertex_first"] = [float(v[0, 0]), float(v[0, 1])]
        out["vertex_last"] = [float(v[-1, 0]), float(v[-1, 1])]
        mid = int(d["NCPL"]) // 2
        out["cellx_middle"] = float(d["CELLX"][mid])
        out["celly_middle"] = float(d["CELLY"][mid])
        out["javert_sum"] = int(np.sum(d["JAVERT"], dtype=np.int64))
    return out


def pfb(name):
    path = str(DATA / name)
    a = read_pfb(path)  # (nz, ny, nx), x fastest
    h = ParflowBinaryReader(path).header
    data = np.asarray(a, dtype=np.float64)[None, ...]
    out = {
        "file": name,
        "reader": f"parflow.tools.io.read_pfb({name!r}) and ParflowBinaryReader(...).header",
        "versions": VERSIONS,
        "shape": [int(x) for x in a.shape],
        "shape_order": "nz, ny, nx",
        "origin": [h["x"], h["y"], h["z"]],
        "spacing": [h["dx"], h["dy"], h["dz"]],
        "n_subgrids": int(h["n_subgrids"]),
        "cells": cells(data),
    }
    out.update(active_stats(data))
    return out


def main():
    outputs = [
        layered("freyberg_mf2005.hds", "heads", "single", hnoflo=999.0),
        layered("mp6_example.hed", "heads", "single"),
        layered("crnknic_nwt.hds", "heads", "single"),
        layered("testsfr2_double.hds", "heads", "double"),
        layered("freyberg_mf6.hds", "heads", "double"),
        layered("tri_model_mf6.hds", "heads", "double"),
        layered("ex3_mfusg.ddn", "heads", "single", text="drawdown"),
        layered("p07_mt3dms.ucn", "ucn", "single"),
        layered("gwt_mst03_mf6.ucn", "heads", "double", text="concentration"),
        grb("freyberg_mf6.dis.grb"),
        grb("tri_model_mf6.disv.grb"),
        pfb("default_single.out.press.00000.pfb"),
        pfb("clm_slope.out.satur.00001.pfb"),
    ]
    for o in outputs:
        target = HERE / (o["file"] + ".json")
        target.write_text(json.dumps(o, indent=1) + "\n")
        print("wrote", target.relative_to(HERE.parent.parent.parent))


if __name__ == "__main__":
    main()
