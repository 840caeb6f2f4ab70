"""Plan → runnable domain folders: schema, tools, seed rows, tasks, folders, the generation report.

Each planned domain goes through the stages in order: `schema` infers its tables and binds every
operation's arguments to columns, `tools` compiles one builder tool per operation (or says why
not), `seed` makes the rows, `folder` writes the domain through `simulator.builders`, and `tasks`
makes the tasks that are kept. `run` does this for every domain in worker processes; `report`
summarizes it.
Design notes: docs/design/toolgen.md.
"""
