"""Write `connector/sql/flink_functions.txt`: the function names Flink's SQL validator resolves, asked of Flink.

    make flink-functions

`SHOW FUNCTIONS` lists only the core module's functions (no IF, LISTAGG, FROM_UNIXTIME, ...), and calling a name
with made-up arguments cannot tell an unknown name from a wrong signature (both may say "No match found for function
signature"). So a small Java program, launched from source against the planner jar inside
flink-table-planner-loader, creates a TableEnvironment and asks the operator table of its SQL validator (Flink's
function catalog chained with FlinkSqlOperatorTable) to look up every name either of them declares, as the
validator does for a call: category USER_DEFINED_FUNCTION, syntax FUNCTION, case-insensitive. Names of internal
definitions that SQL cannot call (`lowerCase`, `$SUM0`) are not found and left out. Each name comes with the fewest
and most arguments its overloads take (the operand count range the validator checks a call against, "Invalid number
of arguments to function"), unless one of them counts no operands, or Flink's parser gives a call written with that
many arguments other operands (a grammar of its own: TRIM(s) is TRIM(BOTH ' ' FROM s)).
"""

from __future__ import annotations

from flink_java import REPO, ask_flink, write_list

TARGET = REPO / "connector" / "sql" / "flink_functions.txt"
PROGRAM = """
import org.apache.calcite.sql.*;
import org.apache.calcite.sql.parser.SqlParser;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.validate.SqlNameMatchers;
import org.apache.flink.sql.parser.impl.FlinkSqlParserImpl;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.internal.TableEnvironmentImpl;
import org.apache.flink.table.module.CoreModule;
import org.apache.flink.table.planner.delegation.PlannerBase;
import org.apache.flink.table.planner.functions.sql.FlinkSqlOperatorTable;
import java.util.*;

public class FunctionNames {
    public static void main(String[] args) {
        TableEnvironment env = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        PlannerBase planner = (PlannerBase) ((TableEnvironmentImpl) env).getPlanner();
        SqlOperatorTable table = planner.createFlinkPlanner().getOrCreateSqlValidator().getOperatorTable();
        TreeSet<String> candidates = new TreeSet<>(CoreModule.INSTANCE.listFunctions());
        for (SqlOperator operator : FlinkSqlOperatorTable.instance(false).getOperatorList()) {
            candidates.add(operator.getName());
        }
        TreeSet<String> found = new TreeSet<>();
        for (String name : candidates) {
            List<SqlOperator> operators = new ArrayList<>();
            table.lookupOperatorOverloads(new SqlIdentifier(name, SqlParserPos.ZERO),
                SqlFunctionCategory.USER_DEFINED_FUNCTION, SqlSyntax.FUNCTION, operators,
                SqlNameMatchers.withCaseSensitive(false));
            if (!operators.isEmpty() && name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                found.add(name.toUpperCase() + arity(name, operators));
            }
        }
        System.out.println(String.join("\\n", found));
    }

    // ":min:max" (max -1: no limit) over every overload, when each is called with plain function syntax, knows its
    // operand count, and Flink's parser makes a call of as many operands as it is written with; "" otherwise
    // (TRIM(s) is parsed as TRIM(BOTH ' ' FROM s), JSON_QUERY(s, p) gets its ON EMPTY / ON ERROR operands).
    static String arity(String name, List<SqlOperator> operators) {
        int min = Integer.MAX_VALUE, max = 0;
        for (SqlOperator operator : operators) {
            if (operator.getSyntax() != SqlSyntax.FUNCTION) return "";
            SqlOperandCountRange range;
            try {
                range = operator.getOperandCountRange();
            } catch (RuntimeException unknown) {
                return "";
            }
            min = Math.min(min, range.getMin());
            max = max < 0 || range.getMax() < 0 ? -1 : Math.max(max, range.getMax());
        }
        boolean plain = parsedAsWritten(name, min) && parsedAsWritten(name, max < 0 ? min + 1 : max);
        return plain ? ":" + min + ":" + max : "";
    }

    static boolean parsedAsWritten(String name, int count) {
        String call = name + "(" + String.join(", ", Collections.nCopies(count, "x")) + ")";
        try {
            SqlNode node = SqlParser.create(call, SqlParser.config().withParserFactory(FlinkSqlParserImpl.FACTORY))
                .parseExpression();
            return node instanceof SqlCall && ((SqlCall) node).operandCount() == count;
        } catch (Exception refused) {
            return false;
        }
    }
}
"""


def main() -> None:
    version, words = ask_flink(PROGRAM, "FunctionNames", "Flink's validator")
    # NAME[:min:max] -> "NAME min max", no limit as "*"
    lines = [" ".join("*" if part == "-1" else part for part in word.split(":")) for word in words]
    header = f"Functions Flink {version}'s SQL validator resolves by name, and argument counts (make flink-functions)"
    write_list(TARGET, header, lines)


if __name__ == "__main__":
    main()
