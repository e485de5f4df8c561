"""Where the generated and the conditioning coordinates sit in a domain's encoding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from dpaudit.data import Domain
from dpaudit.generators.g_pate.config import IMAGE_SIDE, GPateConfig
from dpaudit.validation import require


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the generated (``free``) and conditioning coordinates sit in the
    encoding of a domain."""

    domain: Domain
    free: NDArray[np.int64]
    classes: int
    label_slice: slice | None
    label_kind: str | None

    @classmethod
    def build(cls, domain: Domain, config: GPateConfig) -> Layout:
        d = domain.encoded_dim
        label = config.label_column
        if config.architecture == "mlp" and label is None:
            return cls(domain, np.arange(d), 0, None, None)
        classes, label_slice, kind = 0, None, None
        if label is not None:
            require(
                label in domain.names,
                "label_column",
                f"a column of the domain ({', '.join(domain.names)})",
                label,
            )
            col = domain[label]
            label_slice = domain.slices()[domain.names.index(label)]
            kind = col.kind
            if col.kind == "categorical":
                assert col.categories is not None
                classes = len(col.categories)
            elif col.kind in ("integer", "binary"):
                lower = 0.0 if col.lower is None else col.lower
                upper = 1.0 if col.upper is None else col.upper
                classes = round(upper - lower) + 1
            else:
                require(
                    False,
                    "label_column",
                    "a binary, categorical or integer column",
                    f"{label!r}, a {col.kind} column",
                )
            require(
                classes >= 2,
                "label_column",
                "a column with at least 2 classes in the domain",
                f"{label!r} with {classes}",
            )
        free = np.array(
            [
                i
                for i in range(d)
                if label_slice is None or not label_slice.start <= i < label_slice.stop
            ],
            dtype=np.int64,
        )
        if config.architecture == "mlp":
            require(
                free.size > 0,
                "label_column",
                "a column besides which the 'mlp' "
                "architecture has another column to generate (not the only column)",
                label,
            )
            return cls(domain, free, classes, label_slice, kind)
        require(
            free.size == IMAGE_SIDE * IMAGE_SIDE,
            "domain",
            f"{IMAGE_SIDE * IMAGE_SIDE} pixel columns (28 x 28) besides "
            "`label_column` for the 'dcgan' architecture (encoded coordinates)",
            int(free.size),
        )
        return cls(domain, free, classes, label_slice, kind)

    @property
    def width(self) -> int:
        return int(self.free.size)

    def signature(self) -> tuple[int, ...]:
        return (*(c.width for c in self.domain.columns), self.classes)

    def split(
        self, encoded: NDArray[np.float32]
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Encoded rows -> (generated part ``[n, d]``, one-hot class ``[n, C]``)."""
        free = encoded[:, self.free]
        onehot = np.zeros((encoded.shape[0], self.classes), dtype=np.float32)
        if self.label_slice is not None:
            block = encoded[:, self.label_slice]
            if self.label_kind == "categorical":
                onehot = block.astype(np.float32)
            else:
                cls_idx = np.rint(block[:, 0] * (self.classes - 1)).astype(np.int64)
                onehot[np.arange(encoded.shape[0]), cls_idx] = 1.0
        return free, onehot

    def assemble(
        self, free: NDArray[np.floating[Any]], classes: NDArray[np.int64] | None
    ) -> NDArray[np.float64]:
        """Generated part and class indices -> encoded rows."""
        if self.label_slice is None and self.width == self.domain.encoded_dim:
            # Every coordinate generated, in order (the tabular default): one cast.
            return np.asarray(free, dtype=np.float64)
        out = np.zeros((free.shape[0], self.domain.encoded_dim), dtype=np.float64)
        out[:, self.free] = free
        if self.label_slice is not None and classes is not None:
            if self.label_kind == "categorical":
                out[np.arange(free.shape[0]), self.label_slice.start + classes] = 1.0
            else:
                out[:, self.label_slice.start] = classes / max(self.classes - 1, 1)
        return out


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    require(
        name != "cuda" or torch.cuda.is_available(),
        "device",
        "'auto' or 'cpu' where CUDA is not available",
        name,
    )
    return torch.device(name)
