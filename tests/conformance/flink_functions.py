"""Write `connector/sql/dialect/flink_functions.txt`: the function names Flink's SQL validator resolves, asked of Flink.

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
many arguments other operands (a grammar of its own: TRIM(s) is TRIM(BOTH ' ' FROM s)). Besides, the reserved words
Flink's grammar reads as a call of one of its functions (CEILING is CEIL), found by validating a call of each with up
to three literal arguments.
"""

from __future__ import annotations

from flink_java import REPO, ask_flink, write_list

TARGET = REPO / "connector" / "sql" / "flink_functions.txt"
PROGRAM = """
import org.apache.calcite.sql.*;
import org.apache.calcite.sql.parser.SqlAbstractParserImpl;
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
        // Reserved words Flink's grammar reads as a call of one of its functions (CEILING(x) is CEIL(x), TRANSLATE(s,
        // a, b) one of TRANSLATE's forms): a query calling them passes Flink's validator with some argument count.
        Set<String> names = new HashSet<>();
        for (String entry : found) names.add(entry.split(":")[0]);
        SqlAbstractParserImpl.Metadata metadata =
            FlinkSqlParserImpl.FACTORY.getParser(new java.io.StringReader("")).getMetadata();
        for (String word : metadata.getTokens()) {
            if (metadata.isReservedWord(word) && !names.contains(word) && word.matches("[A-Z_][A-Z0-9_]*")
                    && callable(env, word)) {
                found.add(word);
            }
        }
        System.out.println(String.join("\\n", found));
    }

    static boolean callable(TableEnvironment env, String word) {
        for (int count = 0; count <= 3; count++) {
            for (String literal : new String[] {"1", "'a'"}) {
                String call = word + "(" + String.join(", ", Collections.nCopies(count, literal)) + ")";
                try {
                    if (!(parse(call) instanceof SqlCall parsed && parsed.getOperator() instanceof SqlFunction)) {
                        continue;  // NOT(1) is an operator, SELECT ALL(1) a quantifier
                    }
                    env.sqlQuery("SELECT " + call);
                    return true;
                } catch (Exception | AssertionError refused) {  // SELECT VALUES(1): "not a query"
                    String message = String.valueOf(refused.getMessage());
                    if (message.contains("Cannot apply") || message.contains("Invalid number of arguments")) {
                        return true;
                    }
                }
            }
        }
        return false;
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
        try {
            SqlNode node = parse(name + "(" + String.join(", ", Collections.nCopies(count, "x")) + ")");
            return node instanceof SqlCall && ((SqlCall) node).operandCount() == count;
        } catch (Exception refused) {
            return false;
        }
    }

    static SqlNode parse(String expression) throws Exception {
        return SqlParser.create(expression, SqlParser.config().withParserFactory(FlinkSqlParserImpl.FACTORY))
            .parseExpression();
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
