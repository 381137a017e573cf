// Reads an Iceberg table of a Hadoop catalog with Iceberg's own Java library (what Flink and Spark use), so the tests
// check the tables kafka-sql writes against the reference implementation. Run as a single-file program:
//   java -cp '<iceberg-data, iceberg-parquet, hadoop-client jars>' ReadIceberg.java <warehouse> <database> <table>
// Prints the partition spec, the identifier fields, each snapshot (newest first) with its kafka-sql batch id, then every row, fields
// separated by tabs.
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;

public class ReadIceberg {
  public static void main(String[] args) throws Exception {
    HadoopCatalog catalog = new HadoopCatalog(new Configuration(), args[0]);
    Table table = catalog.loadTable(TableIdentifier.of(args[1], args[2]));
    System.out.println("spec\t" + table.spec().fields());
    System.out.println("identifier\t" + new java.util.TreeSet<>(table.schema().identifierFieldNames()));
    for (Snapshot s = table.currentSnapshot(); s != null; s = s.parentId() == null ? null : table.snapshot(s.parentId())) {
      System.out.println("snapshot\t" + s.operation() + "\t" + s.summary().get("kafka-sql.batch-id"));
    }
    try (CloseableIterable<Record> rows = IcebergGenerics.read(table).build()) {
      for (Record r : rows) {
        StringBuilder line = new StringBuilder("row");
        for (int i = 0; i < r.size(); i++) line.append('\t').append(r.get(i));
        System.out.println(line);
      }
    }
  }
}
