"""dpaudit: audit differentially private synthetic-data generators.

dpaudit trains a generator many times with and without a target record (the
distinguishing game), attacks the released synthetic data with black-box
membership-inference attacks, turns the attack's errors into a Clopper-Pearson lower
bound on epsilon and compares it with the generator's privacy claim.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
