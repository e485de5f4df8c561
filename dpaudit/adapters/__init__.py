"""Adapters of real synthetic-data libraries, run as plug-ins in foreign workers.

``FOREIGN_ADAPTERS`` maps a generator name (``--generator NAME``) to the
``module:Class`` of a plain plug-in class (docs/plugins.md) that the foreign worker
imports; the registry (:mod:`dpaudit.generators.registry`) lists every name and never
imports the libraries in dpaudit's own process. Keep it a plain dict literal.

Each adapter module imports only the standard library, numpy, pandas and (inside its
methods) the library it wraps, so the worker can run it under the library's own
interpreter (``--python``; docs/adapters.md).
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
    "smartnoise-pacsynth": "dpaudit.adapters.smartnoise:SmartnoisePACSynth",
    "synthcity-pategan": "dpaudit.adapters.synthcity:SynthcityPATEGAN",
    "synthcity-dpgan": "dpaudit.adapters.synthcity:SynthcityDPGAN",
    "synthcity-privbayes": "dpaudit.adapters.synthcity:SynthcityPrivBayes",
    "synthcity-aim": "dpaudit.adapters.synthcity:SynthcityAIM",
    "dpmm-mst": "dpaudit.adapters.dpmm:DpmmMST",
    "dpmm-aim": "dpaudit.adapters.dpmm:DpmmAIM",
    "dpmm-privbayes": "dpaudit.adapters.dpmm:DpmmPrivBayes",
    "opendp-mst": "dpaudit.adapters.opendp:OpenDPMST",
    "opendp-aim": "dpaudit.adapters.opendp:OpenDPAIM",
}
