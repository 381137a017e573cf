"""Write `connector/sql/flink_functions.txt`: the function names Flink's SQL validator resolves, asked of Flink.

    make flink-functions

`SHOW FUNCTIONS` lists only the core module's functions (no IF, LISTAGG, FROM_UNIXTIME, ...), and calling a name
with made-up arguments cannot tell an unknown name from a wrong signature (both may say "No match found for function
signature"). So a small Java program, launched from source against the planner jar inside
flink-table-planner-loader, creates a TableEnvironment and asks the operator table of its SQL validator (Flink's
function catalog chained with FlinkSqlOperatorTable) to look up every name either of them declares, as the
validator does for a call: category USER_DEFINED_FUNCTION, syntax FUNCTION, case-insensitive. Names of internal
definitions that SQL cannot call (`lowerCase`, `$SUM0`) are not found and left out.
"""

from __future__ import annotations

from flink_java import REPO, ask_flink, write_list

TARGET = REPO / "connector" / "sql" / "flink_functions.txt"
PROGRAM = """
import org.apache.calcite.sql.*;
import org.apache.calcite.sql.parser.SqlParserPos;
import org.apache.calcite.sql.validate.SqlNameMatchers;
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
            if (!operators.isEmpty() && name.matches("[A-Za-z_][A-Za-z0-9_]*")) found.add(name.toUpperCase());
        }
        System.out.println(String.join("\\n", found));
    }
}
"""


def main() -> None:
    version, words = ask_flink(PROGRAM, "FunctionNames", "Flink's validator")
    write_list(TARGET, f"Functions Flink {version}'s SQL validator resolves by name (make flink-functions)", words)


if __name__ == "__main__":
    main()
