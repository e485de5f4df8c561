"""What ``dpaudit check`` verifies before anything trains.

A check that fails after an hour of training because of a typo in its fourth audit,
or because its JUnit path cannot be written, wastes the hour. :func:`preflight_audit`
builds each audit's setup the way the run will (generator name and options, plug-in
loading, dataset name or path, domain, target, attack names), and
:func:`check_outputs` verifies that every file and directory the check will write
can be written. Each raises :class:`~dpaudit.errors.InvalidParameterError` with one
line naming the input (the command exits 2).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from dpaudit.audit import RESULT_FILE, AuditConfig
from dpaudit.audit.games import build_setup
from dpaudit.audit.storage import ResultStore
from dpaudit.errors import AuditError, InvalidParameterError

__all__ = [
    "RESULT_FILES",
    "check_outputs",
    "existing_state",
    "preflight_audit",
    "writable_file",
]

#: What an audit directory holds once an audit started (or finished) there.
RESULT_FILES = (ResultStore.FILENAME, RESULT_FILE)

State = Literal["empty", "same", "different", "finished"]


def preflight_audit(config: Any) -> None:
    """Builds the setup of one audit without training anything.

    This loads the dataset (named, worst case or CSV with its domain), resolves the
    target (a row index, a record, or the dataset's default; ``"auto"`` is checked
    as far as it can be without training: the data must have a row), checks the
    attack names and generator options and constructs the generator once (a plug-in
    is imported and instantiated). A config that is not an
    :class:`~dpaudit.audit.config.model.AuditConfig` (a custom runner's) is not checked.

    Raises:
        InvalidParameterError: Whatever the run would have refused, as one line.
    """
    if not isinstance(config, AuditConfig):
        return
    config.check_settings()  # settings the game does not use, unmet requirements
    probe = config
    if config.target == "auto" and config.target_record is None:
        probe = dataclasses.replace(config, target=0)
    try:
        build_setup(probe)
    except InvalidParameterError:
        raise
    except AuditError as err:  # a plug-in that cannot be loaded, a bad store
        raise InvalidParameterError(str(err)) from err
    except Exception as err:  # a plug-in's own error, an option of the wrong type
        text = str(err).strip().splitlines()[0].rstrip(".") if str(err).strip() else ""
        raise InvalidParameterError(
            f"`generator` {config.generator!r} could not be set up with its options "
            f"{dict(config.generator_options)!r}: "
            f"{type(err).__name__}{': ' + text if text else ''}."
        ) from err


def _nearest_existing(path: Path) -> Path:
    current = path
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def writable_file(path: Path | str, name: str, *, append: bool = False) -> None:
    """Checks that ``path`` can be written (or appended to) before anything runs.

    Args:
        path: The file.
        name: Its option (``--junit``), named in the message.
        append: The file is appended to (it may exist and must stay writable).

    Raises:
        InvalidParameterError: ``path`` is a directory, an existing file that cannot
            be written, or under a directory that cannot be created or written.
    """
    path = Path(path)
    if str(path) in ("", "."):
        raise InvalidParameterError(f"`{name}` must be a file path. Got {str(path)!r}.")
    if path.is_dir():
        raise InvalidParameterError(
            f"`{name}` must be a file path, not a directory. Got {str(path)!r}."
        )
    if path.exists():
        if not os.access(path, os.W_OK):
            raise InvalidParameterError(
                f"`{name}` must be a writable file. Got {str(path)!r} (permission "
                "denied)."
            )
        if append:
            return
    ancestor = _nearest_existing(path.parent)
    if not ancestor.is_dir():
        raise InvalidParameterError(
            f"`{name}` must be under a directory. Got {str(path)!r} "
            f"({str(ancestor)!r} is a file)."
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InvalidParameterError(
            f"`{name}` must be in a writable directory. Got {str(path)!r} "
            f"({str(ancestor)!r} is not writable)."
        )


def existing_state(directory: Path, config: Any) -> State:
    """What an audit directory holds: nothing, this audit unfinished (``same``),
    a different audit, or a finished one."""
    store = directory / ResultStore.FILENAME
    if (directory / RESULT_FILE).exists() and not store.exists():
        return "finished"
    if not store.exists():
        return "empty"
    if not isinstance(config, AuditConfig):
        return "same"
    try:
        with ResultStore(directory) as handle:
            identity = handle.get_meta("identity")
    except Exception:  # a corrupt store is a different audit: --force replaces it
        return "different"
    return "same" if config.matches_identity(identity) else "different"


def check_outputs(
    out_dir: Path,
    audits: Iterable[tuple[str, Any]],
    *,
    force: bool,
    resume: bool,
    files: Iterable[tuple[str, Path, bool]] = (),
) -> dict[str, bool]:
    """Checks every output of a check before the first audit runs.

    Args:
        out_dir: ``--out``.
        audits: ``(name, config)`` per audit (its directory is ``out_dir/name``).
        force: ``--force``: audit directories from an earlier check are replaced.
        resume: ``--resume``: unfinished audits of the same configuration continue;
            the others start afresh in their empty directories.
        files: ``(option, path, append)`` of the other files written (``--junit``,
            ``--summary``).

    Returns:
        Per audit name, whether its run resumes.

    Raises:
        InvalidParameterError: An output cannot be written, or an audit directory
            already holds an audit and neither ``--force`` nor ``--resume`` allows
            reusing it.
    """
    if force and resume:
        raise InvalidParameterError(
            "`--force` and `--resume` exclude each other: --force starts every audit "
            "afresh, --resume continues unfinished ones. Got both."
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise InvalidParameterError(
            f"`--out` must be a directory. Got {str(out_dir)!r} (a file)."
        )
    writable_file(out_dir / "report.html", "--out")
    for option, path, append in files:
        writable_file(path, option, append=append)
    resumes: dict[str, bool] = {}
    taken: list[str] = []
    for name, config in audits:
        directory = out_dir / name
        state = existing_state(directory, config) if directory.is_dir() else "empty"
        if directory.exists() and not directory.is_dir():
            raise InvalidParameterError(
                f"`--out` holds a file where audit {name!r} goes: {str(directory)!r}."
            )
        if state == "empty" or force:
            resumes[name] = False
            continue
        if resume and state == "same":
            resumes[name] = True
            continue
        if resume:
            reason = {"different": "a different audit", "finished": "a finished audit"}
            raise InvalidParameterError(
                f"--resume: {str(directory)!r} holds {reason[state]}, not this "
                f"policy's unfinished audit {name!r}; pass --force to replace it."
            )
        taken.append(name)
    if taken:
        raise InvalidParameterError(
            f"`--out` {str(out_dir)!r} already holds audit(s) {', '.join(taken)} from "
            "an earlier check: choose another --out, or pass --resume to continue "
            "unfinished ones, or --force to start them afresh (which deletes them)."
        )
    return resumes
