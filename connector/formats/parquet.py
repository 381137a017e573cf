"""The `parquet` format: Apache Parquet files, read and written by Spark itself (filesystem only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connector.formats.payload import Codec
from connector.options.declarations import ConfigOption
from connector.options.factory import Format
from connector.options.types import BOOLEAN


class ParquetOptions:
    """Options of the `parquet` format (filesystem only); other 'parquet.*' keys go to the Parquet writer."""

    UTC_TIMEZONE = ConfigOption(
        "utc-timezone",
        BOOLEAN,
        "Convert timestamps using UTC rather than the local time zone (as Hive 3 does).",
        default=False,
    )



class ParquetCodec(Codec):
    """Files only, by Spark's Parquet reader and writer; other 'parquet.*' keys are their options."""

    label = "Parquet"

    def spark_files(self, values: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
        return "parquet", {k: str(v) for k, v in values.items() if k != ParquetOptions.UTC_TIMEZONE.key}


PARQUET = Format(
    "parquet",
    "Apache Parquet files. Other 'parquet.*' keys (e.g. 'parquet.compression') are passed to the writer.",
    options=(ParquetOptions.UTC_TIMEZONE,),
    codec=ParquetCodec(),
    carrier="files",
    open_options=True,
)
FORMATS = (PARQUET,)
