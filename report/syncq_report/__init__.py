"""Turn a syncq-lab results file (docs/results-format.md) into an HTML report with plots."""
