"""Plan → runnable domain folders: schema, tools, seed rows, tasks, folders, the generation report.

    Plan + {op id: Operation} ──schema──► tables (+ per-column hints) ──tools──► builder tools
                              ──seed──► rows ──write──► domain folder ──tasks──► kept tasks

- `schema.infer_schema(domain, operations)`: the tables of one planned domain, with every
  operation's arguments bound to columns (`DomainSchema`), and each column's JSON-Schema
  fragment as a hint for the seed generator.
- `tools.compile_tools(schema, builder)`: one builder tool per operation, or the reason it
  could not be compiled.
- `folder.build_domain(...)` / `folder.write_folder(...)`: the `DomainBuilder`, policy.md and
  README.md of a domain, written only through `simulator.builders`.
- `run.generate_domains(...)`: every planned domain, in worker processes; `report` the summary.
"""
