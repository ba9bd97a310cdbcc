# SPDX-License-Identifier: BSD-2-Clause
"""Text formatting shared by the page, the plots and the rule explanations."""

import math
import re
from decimal import Decimal

# Numbers whose decimal exponent lies in [-3, 5) are written positionally
# (0.00123 ... 99900); outside that range "1.23e5" stays shorter and readable.
_POSITIONAL_EXPONENTS = range(-3, 5)


def num(value, trim=False):
    """Format a measured number to 3 significant digits, e.g. 0.620, 12300, 1.23e5.

    trim drops trailing zeros after the point (0.4, 1, 2e5): for axis ticks,
    whose values are round by construction.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    # The e-format does the rounding (including carries such as 99999 -> 1.00e+05).
    mantissa, exponent = f"{value:.2e}".split("e")
    exponent = int(exponent)
    if exponent in _POSITIONAL_EXPONENTS:
        return _trimmed(format(Decimal(f"{mantissa}e{exponent}"), "f"), trim)
    return f"{_trimmed(mantissa, trim)}e{exponent}"


def _trimmed(digits, trim):
    if not trim or "." not in digits:
        return digits
    return digits.rstrip("0").rstrip(".")


def param_value(value):
    """Format a parameter value as declared: integral numbers without a decimal point."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def params(values, skip=()):
    """Format a params object as "k=v, k=v", keys sorted so every place reads alike."""
    return ", ".join(f"{key}={param_value(values[key])}" for key in sorted(values) if key not in skip)


def slug(text):
    """Reduce text to characters safe in file names and HTML ids."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def unique_slugs(names):
    """Map each name to a slug no other name shares (distinct names may slug alike)."""
    taken = set()
    result = {}
    for name in names:
        candidate = base = slug(name)
        counter = 2
        while candidate in taken:
            candidate = f"{base}-{counter}"
            counter += 1
        taken.add(candidate)
        result[name] = candidate
    return result
