"""Reference counts of the public corpus files (tests/data/corpus), for tests/reader_corpus_public.rs.

Each file is counted by the reference tool of its own project, never by our readers:

- pyGIMLi `DataContainerERT(fn, removeInvalid=False)` (unified ERT), `DataContainer(fn, 's g')`
  (travel times), `physics.em.tdem.readusffile` (USF);
- ResIPy's parsers (`resipy/parsers.py`, loaded as a file so that importing the package does not
  try to fetch its Windows binaries);
- mt_metadata `TF(fn).read()` (EDI);
- GPRPy `gprIO_DT1.readdt1` / `readdt1Header` (DT1/HD; GPRPy is not on PyPI: pass a checkout's
  `gprpy/toolbox` with --gprpy);
- ObsPy `obspy.read(fn, format=...)` (SEG-2, SEG-Y).

ResIPy 3.6.6 wants numpy < 2, pyGIMLi 1.6.1 numpy 2, so the script runs once per environment with
--tools naming the tools that environment has; each run replaces its own entries in the JSON:

    venv-corpus/bin/python tests/oracles/corpus_counts.py --tools pygimli,mt_metadata,obspy,gprpy \
        --gprpy /path/to/GPRPy/gprpy/toolbox
    venv-corpus-resipy/bin/python tests/oracles/corpus_counts.py --tools resipy

(venv-corpus: pygimli 1.6.1, mt-metadata 1.0.12, obspy 1.5.1; venv-corpus-resipy: resipy 3.6.6,
numpy 1.26.4.)
"""

import argparse
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "data" / "corpus"
OUT = HERE / "corpus_counts.json"

# path under tests/data/corpus -> (tool, how)
FILES = {
    "gimli/crosshole2d.dat": ("pygimli", "ert"),
    "gimli/hollow_limetree.ohm": ("pygimli", "ert"),
    "gimli/lake.ohm": ("pygimli", "ert"),
    "gimli/schleizFDIP.dat": ("pygimli", "ert"),
    "gimli/slagdump.ohm": ("pygimli", "ert"),
    "gimli/struct.dat": ("pygimli", "ert"),
    "gimli/koenigsee.sgt": ("pygimli", "traveltime"),
    "gimli/TerraTEMStade.usf": ("pygimli", "usf"),
    "resipy/BERT_IP_2D.dat": ("resipy", "bertParser"),
    "resipy/abem-lund-recip.ohm": ("resipy", "ericParser"),
    "resipy/electra_missing_measurements.ele": ("resipy", "electraParser"),
    "resipy/protocol.dat": ("resipy", "protocolParser"),
    "resipy/res2dinv-ga.dat": ("resipy", "resInvParser"),
    "resipy/res2dinv_PoleDipole.DAT": ("resipy", "resInvParser"),
    "resipy/res2dinv_PolePole.DAT": ("resipy", "resInvParser"),
    "resipy/syscal-new-format.csv": ("resipy", "syscalParser"),
    "mt_metadata/tf_edi_cgg.edi": ("mt_metadata", "edi"),
    "mt_metadata/tf_edi_empower.edi": ("mt_metadata", "edi"),
    "mt_metadata/tf_edi_quantec.edi": ("mt_metadata", "edi"),
    "mt_metadata/tf_edi_rho_only.edi": ("mt_metadata", "edi"),
    "mt_metadata/tf_edi_spectra_out.edi": ("mt_metadata", "edi"),
    "gprpy/XLINE00.DT1": ("gprpy", "dt1"),
    # The header of the same line: GPRPy reads the pair, so its count is the DT1's.
    "gprpy/XLINE00.HD": ("gprpy", "dt1"),
    "obspy/20180307_031245000.0.seg2": ("obspy", "SEG2"),
    "obspy/one_trace_year_11.sgy": ("obspy", "SEGY"),
}


def count_pygimli(path, how):
    import numpy as np
    import pygimli as pg

    tool = f"pyGIMLi {pg.__version__}"
    if how == "ert":
        d = pg.DataContainerERT(str(path), removeInvalid=False)
        call = "DataContainerERT(fn, removeInvalid=False)"
        return tool, call, {"n_electrodes": d.sensorCount(), "n_data": d.size()}
    if how == "traveltime":
        d = pg.DataContainer(str(path), "s g")
        call = "DataContainer(fn, 's g')"
        return tool, call, {
            "n_data": d.size(),
            "n_shots": len(np.unique(d["s"])),
            "n_geophones": len(np.unique(d["g"])),
            "n_sensors": d.sensorCount(),
        }
    if how == "usf":
        from pygimli.physics.em.tdem import readusffile

        soundings = readusffile(str(path), stripnoise=False)
        call = "physics.em.tdem.readusffile(fn, stripnoise=False)"
        return tool, call, {
            "n_soundings": len(soundings),
            "n_gates_total": sum(len(s["TIME"]) for s in soundings),
        }
    raise ValueError(how)


def resipy_parsers():
    spec = importlib.util.find_spec("resipy")
    (pkg,) = spec.submodule_search_locations
    fspec = importlib.util.spec_from_file_location("resipy_parsers", Path(pkg) / "parsers.py")
    mod = importlib.util.module_from_spec(fspec)
    fspec.loader.exec_module(mod)
    return mod


def count_resipy(path, how):
    from importlib.metadata import version

    parser = getattr(resipy_parsers(), how)
    elec, df = parser(str(path))
    tool = f"ResIPy {version('resipy')}"
    return tool, f"parsers.{how}(fn)", {"n_electrodes": len(elec), "n_data": len(df)}


def count_mt_metadata(path, how):
    import mt_metadata
    from mt_metadata.transfer_functions.core import TF

    tf = TF(str(path))
    tf.read()
    tool = f"mt_metadata {mt_metadata.__version__}"
    return tool, "transfer_functions.core.TF(fn).read(); len(tf.period)", {
        "n_periods": len(tf.period)
    }


def count_gprpy(path, how, gprpy_dir):
    sys.path.insert(0, str(gprpy_dir))
    import gprIO_DT1

    dt1 = path.with_suffix(".DT1")
    data = gprIO_DT1.readdt1(str(dt1))
    info = gprIO_DT1.readdt1Header(str(dt1.with_suffix(".HD")))
    n_samples, n_traces = data.shape
    if (n_traces, n_samples) != (info["N_traces"], info["N_pts_per_trace"]):
        raise ValueError(f"{path}: the DT1 and its HD disagree")
    call = "toolbox.gprIO_DT1.readdt1(dt1).shape, = readdt1Header(hd) N_traces/N_pts_per_trace"
    return "GPRPy git 0031b5cc", call, {"n_traces": n_traces, "n_samples": n_samples}


def count_obspy(path, how):
    import obspy

    st = obspy.read(str(path), format=how)
    npts = sorted({tr.stats.npts for tr in st})
    if len(npts) != 1:
        raise ValueError(f"{path}: traces of different lengths {npts}")
    call = f"obspy.read(fn, format='{how}')"
    return f"ObsPy {obspy.__version__}", call, {"n_traces": len(st), "n_samples": npts[0]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", required=True, help="comma-separated: pygimli,resipy,...")
    ap.add_argument("--gprpy", help="GPRPy's gprpy/toolbox directory (for gprpy)")
    args = ap.parse_args()
    tools = set(args.tools.split(","))
    out = json.loads(OUT.read_text()) if OUT.exists() else {}
    files = out.setdefault("files", {})
    for rel, (tool, how) in FILES.items():
        if tool not in tools:
            continue
        path = CORPUS / rel
        if tool == "gprpy":
            name, call, counts = count_gprpy(path, how, args.gprpy)
        else:
            name, call, counts = globals()[f"count_{tool}"](path, how)
        files[rel] = {
            "tool": name,
            "call": call,
            "md5": hashlib.md5(path.read_bytes()).hexdigest(),
            **counts,
        }
        print(rel, name, counts)
    out["meta"] = {
        "made_by": "tests/oracles/corpus_counts.py (see its docstring for the environments)",
        "python": sys.version.split()[0],
    }
    out["files"] = dict(sorted(files.items()))
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
