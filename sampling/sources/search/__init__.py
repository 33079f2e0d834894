"""`lowtide logs search`: one query language over any run's rollout dumps (a lowtide run, verl's
`rollout_data_dir`, TRL's `completions/`), read with `lowtide ingest`'s readers into a DuckDB
table kept in step with the files.

`query` reads a query into a tree, `sql` compiles it with bound parameters, `schema` is the
table's columns, `reader` reads the dump files, `table` keeps the table up to date, `engine`
runs a search, `export` writes the matches, `route` sends them to review. DuckDB is imported by
`table` and `engine` only.
"""
