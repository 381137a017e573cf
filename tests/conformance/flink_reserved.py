"""Write `connector/sql/dialect/flink_reserved.txt`: the words Flink's SQL parser reserves, asked of that parser itself.

    make flink-reserved

Flink's documentation lists its keywords reserved and non-reserved alike, so the list comes from the parser of the
PyFlink that `make conformance-expected` runs: `FlinkSqlParserImpl`'s metadata (Calcite's `isReservedWord`), read by
a small Java program run against that Flink (`flink_java.ask_flink`).
"""

from __future__ import annotations

from flink_java import REPO, ask_flink, write_list

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


def main() -> None:
    version, words = ask_flink(PROGRAM, "ReservedWords", "Flink's parser")
    write_list(TARGET, f"Reserved words of Flink {version}'s SQL parser (make flink-reserved)", words)


if __name__ == "__main__":
    main()
