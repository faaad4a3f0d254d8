"""What the session-14 evidence scripts share."""

from __future__ import annotations

import math
from collections.abc import Iterable


def geomean(xs: Iterable[float]) -> float:
    values = list(xs)
    return math.exp(sum(math.log(x) for x in values) / len(values))
