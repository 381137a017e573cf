"""Write `connector/sql/flink_reserved.txt`: the words Flink's SQL parser reserves, asked of that parser itself.

    make flink-reserved

Flink's documentation lists its keywords reserved and non-reserved alike, so the list comes from the parser of the
PyFlink that `make conformance-expected` runs: `FlinkSqlParserImpl`'s metadata (Calcite's `isReservedWord`), read by
a small Java program launched from source (JDK 11 or later) against the planner jar inside flink-table-planner-loader.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET = REPO / "connector" / "sql" / "flink_reserved.txt"
PROGRAM = """
import org.apache.calcite.sql.parser.SqlAbstractParserImpl;
import org.apache.flink.sql.parser.impl.FlinkSqlParserImpl;
import java.util.TreeSet;

public class ReservedWords {
    public static void main(String[] args) {
        SqlAbstractParserImpl.Metadata metadata =
            FlinkSqlParserImpl.FACTORY.getParser(new java.io.StringReader("")).getMetadata();
        TreeSet<String> reserved = new TreeSet<>();
        for (String token : metadata.getTokens()) {
            if (metadata.isReservedWord(token)) reserved.add(token);
        }
        System.out.println(String.join("\\n", reserved));
    }
}
"""


def pyflink_lib(flink_python: str) -> Path:
    code = "import os, pyflink; print(os.path.dirname(pyflink.__file__))"
    done = subprocess.run([flink_python, "-c", code], capture_output=True, text=True, check=True)
    return Path(done.stdout.strip()) / "lib"


def main() -> None:
    flink_python = os.environ.get("FLINK_PYTHON", str(REPO / ".flink-venv" / "bin" / "python"))
    lib = pyflink_lib(flink_python)
    version = next(lib.glob("flink-dist-*.jar")).stem.removeprefix("flink-dist-")
    with tempfile.TemporaryDirectory() as work:
        with zipfile.ZipFile(next(lib.glob("flink-table-planner-loader-*.jar"))) as loader:
            planner = loader.extract("flink-table-planner.jar", work)
        source = Path(work, "ReservedWords.java")
        source.write_text(PROGRAM, encoding="utf-8")
        api = [str(jar) for jar in lib.glob("flink-table-api-java-uber-*.jar")]
        classpath = os.pathsep.join([planner, *api, str(lib / f"flink-dist-{version}.jar")])
        done = subprocess.run(["java", "-cp", classpath, str(source)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"Flink's parser could not be asked:\n{done.stderr[-3000:]}")
    words = [w for w in done.stdout.split() if w]
    header = f"# Reserved words of Flink {version}'s SQL parser (make flink-reserved)\n"
    TARGET.write_text(header + "\n".join(words) + "\n", encoding="utf-8")
    print(f"{len(words)} reserved words of Flink {version} -> {TARGET.relative_to(REPO)}")


if __name__ == "__main__":
    main()
