"""pyGIMLi's Königsee refraction model, cell by cell, as the reference of issue #7's
"bedrock zone median velocity" check (tests/seismic_koenigsee_bedrock.rs).

../shared/oracles/seismic.json records the call, χ² and velocity range of this inversion but
not the model; this script repeats the recorded call and writes every cell's centroid,
velocity and ray coverage. Run (pyGIMLi 1.6.1 from PyPI in a venv):

    python3 -m venv /tmp/pgvenv && /tmp/pgvenv/bin/pip install pygimli==1.6.1
    /tmp/pgvenv/bin/python scripts/oracle/koenigsee_pygimli.py \
        ../shared/data/seismic/gimli_koenigsee.sgt tests/oracles/koenigsee_pygimli_model.json
"""
import json
import sys

import numpy as np
import pygimli as pg
from pygimli.physics import traveltime

src, out = sys.argv[1], sys.argv[2]
data = traveltime.load(src)
mgr = traveltime.TravelTimeManager(data)
mgr.fop._core.setThreadCount(1)  # the oracle's workaround for the 2-core zero-Jacobian bug
mgr.invert(secNodes=3, paraMaxCellSize=5.0, zWeight=0.2, vTop=500, vBottom=5000, verbose=False)
mesh = mgr.paraDomain
vel = np.asarray(mgr.model)
cov = np.asarray(mgr.standardizedCoverage())
cent = np.array([[c.center().x(), c.center().y()] for c in mesh.cells()])
json.dump(
    {
        "produced_by": "scripts/oracle/koenigsee_pygimli.py",
        "pygimli": pg.__version__,
        "call": "TravelTimeManager(data).invert(secNodes=3, paraMaxCellSize=5.0, zWeight=0.2, "
        "vTop=500, vBottom=5000), fop thread count 1 (as ../shared/oracles/seismic.json)",
        "chi2": float(mgr.inv.chi2()),
        "rrms_percent": float(mgr.inv.relrms()),
        "n_cells": int(mesh.cellCount()),
        "x_m": [round(float(v), 4) for v in cent[:, 0]],
        "z_m": [round(float(v), 4) for v in cent[:, 1]],
        "area_m2": [round(float(c.size()), 5) for c in mesh.cells()],
        "velocity_m_per_s": [round(float(v), 3) for v in vel],
        "standardized_coverage": [int(v) for v in cov],
    },
    open(out, "w"),
)
print("chi2", mgr.inv.chi2(), "rrms", mgr.inv.relrms(), "cells", mesh.cellCount(),
      "median v", float(np.median(vel)))
