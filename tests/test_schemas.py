"""The JSON Schema files in schemas/ are generated from the models; they must not drift."""

from __future__ import annotations

import json

import jsonschema
import pytest

from toolgym import schemas


@pytest.mark.parametrize("name", sorted(schemas.models()))
def test_schema_file_matches_model(name):
    path = schemas.SCHEMA_DIR / name
    assert path.is_file(), f"{name} missing: run `python -m toolgym.schemas`"
    assert path.read_text() == schemas.render(schemas.models()[name]), (
        f"{name} drifted from its model: run `python -m toolgym.schemas`"
    )


def test_schemas_are_valid_json_schema():
    for name in schemas.models():
        jsonschema.Draft202012Validator.check_schema(json.loads((schemas.SCHEMA_DIR / name).read_text()))


def test_bundled_domain_files_validate_against_domain_schema():
    import yaml

    from simulator import list_domain_dirs

    schema = json.loads((schemas.SCHEMA_DIR / "domain.schema.json").read_text())
    task_schema = json.loads((schemas.SCHEMA_DIR / "task.schema.json").read_text())
    for folder in list_domain_dirs():
        jsonschema.validate(yaml.safe_load((folder / "domain.yaml").read_text()), schema)
        for line in (folder / "tasks.jsonl").read_text().splitlines():
            if line.strip():
                jsonschema.validate(json.loads(line), task_schema)
