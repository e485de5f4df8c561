"""Foreign generators: plug-ins and library adapters fitted in worker processes.

Every generator that is not one of dpaudit's own batched ones runs in a long-lived
child process behind a narrow protocol (docs/design.md, "Foreign generators"):

* :mod:`~dpaudit.generators.foreign.worker`: the child's script (standard library,
  NumPy and pandas only, so it runs under another interpreter, ``--python``);
* :mod:`~dpaudit.generators.foreign.wire`: messages and tables on the pipes (JSON
  and raw array bytes, never pickle);
* :mod:`~dpaudit.generators.foreign.contract`: the plug-in contract's class checks;
* :mod:`~dpaudit.generators.foreign.columnar`: a measurement transcript's cells and
  answers as arrays on the pipes;
* :mod:`~dpaudit.generators.foreign.pool`: the parent's side (spawning, one worker
  per thread reused across fits, time and memory limits, stopping);
* :mod:`~dpaudit.generators.foreign.generator`: :class:`ForeignGenerator`, the
  generator protocol over a worker.

This package's ``__init__`` imports nothing: the worker imports ``wire``,
``contract`` and ``columnar`` through it under interpreters without dpaudit's dependencies.
"""
