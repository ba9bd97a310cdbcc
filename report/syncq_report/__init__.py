# SPDX-License-Identifier: BSD-2-Clause
"""Turn a syncq-lab results file (docs/results-format.md) into an HTML report with plots."""
