"""Adapters for real synthetic-data libraries (docs/adapters.md).

Each adapter is a plain plug-in (docs/plugins.md) that runs in a worker process,
possibly under another interpreter (``--python``): its module imports only the
standard library, numpy, pandas and the library it wraps. This table maps a generator
name to the adapter's ``module:Class``.
"""

from __future__ import annotations

FOREIGN_ADAPTERS: dict[str, str] = {
    "smartnoise-pategan": "dpaudit.adapters.smartnoise:SmartnoisePATEGAN",
    "smartnoise-mst": "dpaudit.adapters.smartnoise:SmartnoiseMST",
    "smartnoise-aim": "dpaudit.adapters.smartnoise:SmartnoiseAIM",
    "smartnoise-mwem": "dpaudit.adapters.smartnoise:SmartnoiseMWEM",
    "smartnoise-dpctgan": "dpaudit.adapters.smartnoise:SmartnoiseDPCTGAN",
    "smartnoise-patectgan": "dpaudit.adapters.smartnoise:SmartnoisePATECTGAN",
    "smartnoise-dpgan": "dpaudit.adapters.smartnoise:SmartnoiseDPGAN",
    "synthcity-pategan": "dpaudit.adapters.synthcity:SynthcityPATEGAN",
}
