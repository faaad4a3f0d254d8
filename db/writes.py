"""Every write to the store outside the schema's migrations: one function per kind of record.

Callers above ``db`` never write SQL: they pass records here, inside ``Store.transaction()``.
"""

from __future__ import annotations
