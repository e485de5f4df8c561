"""The bundled dataset files (``*.csv.gz`` with their ``*.domain.json``) and
:mod:`~dpaudit.datasets.files`, which reads a user's CSV file safely."""
