"""What reading a table returns: the frame and its findings (:class:`TableReport`, :class:`Finding`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

MB = 1024 * 1024


@dataclass
class Finding:
    kind: str  # missing, constant, id_like, high_cardinality, mixed_types, single_column, truncated, ...
    message: str
    column: str | None = None
    severity: str = "warning"  # "warning" (the user should act) or "info"
    count: int | None = None

    def __str__(self) -> str:
        return self.message


@dataclass
class TableReport:
    frame: pd.DataFrame
    format: str  # "csv", "xlsx" or "parquet"
    encoding: str | None = None
    delimiter: str | None = None
    decimal: str | None = None
    thousands: str | None = None  # "" when no thousands separator was used
    findings: list = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def n_columns(self) -> int:
        return self.frame.shape[1]

    @property
    def missing(self) -> dict:
        """Column -> number of missing values (only columns that have some)."""
        return {f.column: f.count for f in self.findings if f.kind == "missing"}

    def columns_of(self, kind: str) -> list:
        return [f.column for f in self.findings if f.kind == kind]

    @property
    def constant_columns(self) -> list:
        return self.columns_of("constant")

    @property
    def id_like_columns(self) -> list:
        return self.columns_of("id_like")

    @property
    def high_cardinality_columns(self) -> list:
        return self.columns_of("high_cardinality")

    @property
    def mixed_type_columns(self) -> list:
        return self.columns_of("mixed_types")

    @property
    def single_column(self) -> bool:
        return any(f.kind == "single_column" for f in self.findings)

    @property
    def messages(self) -> list[str]:
        return [f.message for f in self.findings]


def size_text(n: float) -> str:
    if n < MB:
        return f"{n / 1024:,.0f} KB"
    return f"{n / MB:,.1f} MB" if n < 10 * MB else f"{n / MB:,.0f} MB"
