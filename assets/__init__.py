"""The worldforge Dagster code location: thin assets over the ``worldforge`` library."""
