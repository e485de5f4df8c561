"""The names of the datasets ``--dataset`` accepts (no heavy imports: the command
line's parser reads them to build its help)."""

from __future__ import annotations

BUILTIN_FILES = {
    "cervical_cancer": "cervical_cancer.csv.gz",
    "epileptic_seizure": "epileptic_seizure.csv.gz",
    "isolet5": "isolet5.csv.gz",
    "credit_sample": "credit_sample.csv.gz",
}
"""Named real datasets and their file names (bundled or in the data folder)."""
WORST_CASE_NAMES = ("worst-case", "worst-case-continuous")  # docs/soundness.md
ONE_RUN_NAMES = ("worst-case-unique",)
"""Canary designs of ``--game one-run`` only, not tables (docs/onerun.md, "Canaries
unique in every column"): the two-world game and ``dpaudit fit`` refuse them."""
DATASET_NAMES = (*WORST_CASE_NAMES, *ONE_RUN_NAMES, *BUILTIN_FILES)
DEFAULT_DATASET = "worst-case-continuous"
"""The dataset of ``dpaudit audit`` without ``--dataset`` (the continuous worst case:
docs/soundness.md, "The default audit")."""
