"""`kafka-sql validate`, `render` and `explain` never import pyspark (the promise of `connector/__init__.py`): each
runs over the example and reference pipelines in a fresh interpreter, which then must hold no `pyspark` module.

A pipeline with a great-expectations suite file ('quality.suite') is left out: validation hands the suite to
great-expectations, which imports pyspark whenever it is installed.

The check script also records the project's import chain that first loaded pyspark, so that a failure names the
module to fix. It runs as a file: under `python -c`, pyspark.sql.connect takes the nameless main module for a
doctest run and exits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import connector

REPO = Path(connector.__file__).resolve().parent.parent
PIPELINES = sorted(
    str(path.relative_to(REPO))
    for folder in ("sql/examples", "sql/reference")
    for path in (REPO / folder).glob("*.sql")
    if "'quality.suite'" not in path.read_text()
)

_CHECK = """
import contextlib, io, json, sys, traceback

first_import = []


class Witness:
    '''Imports nothing itself: notes the project's frames that asked for pyspark the first time.'''

    def find_spec(self, name, path=None, target=None):
        if (name == "pyspark" or name.startswith("pyspark.")) and not first_import:
            first_import.extend(
                f"{frame.filename}:{frame.lineno}: {frame.line}"
                for frame in traceback.extract_stack()
                if "/connector/" in frame.filename
            )
        return None


sys.meta_path.insert(0, Witness())
from connector.entrypoints.cli import main

verb, paths = sys.argv[1], sys.argv[2:]
output = io.StringIO()
with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
    codes = [main(["validate", *paths])] if verb == "validate" else [main([verb, path]) for path in paths]
print(json.dumps({
    "codes": codes,
    "output": output.getvalue()[-2000:],
    "pyspark": sorted(m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")),
    "first_import": first_import,
}))
"""


@pytest.mark.parametrize("verb", ["validate", "render", "explain"])
def test_verb_imports_no_pyspark(verb: str, tmp_path: Path) -> None:
    check = tmp_path / "check.py"
    check.write_text(_CHECK)

    done = subprocess.run(
        [sys.executable, str(check), verb, *PIPELINES],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result["codes"]) == {0}, result["output"]
    assert result["pyspark"] == [], "pyspark was first imported by:\n" + "\n".join(result["first_import"])
