"""A domain's fingerprint names its content, not the format's model: adding an optional field to the
domain format (with a default that keeps today's meaning) must not change any existing domain's
fingerprint, or every manifest validated against it would be refused.

The bundled domains' fingerprints are pinned; change one only with a deliberate change to that domain.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import create_model

from scoring import load_domain
from simulator.format.spec import DomainSpec

PINNED = {
    "bank": "1.1.0-8368ad606c639772",
    "logistics": "1.1.0-d1095f4cafd1327a",
    "office": "1.0.0-61b1b76e3ee97d47",
    "tau2-retail": "0.2.0-f0f6bb588b2734af",
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_bundled_fingerprints_are_pinned(name: str) -> None:
    assert load_domain(name).fingerprint() == PINNED[name]


def test_a_new_optional_field_leaves_fingerprints_alone() -> None:
    domain = load_domain("bank")
    before = domain.fingerprint()
    extended: Any = create_model("ExtendedSpec", __base__=DomainSpec, future_option=(bool, False))
    domain.spec = extended.model_validate(domain.spec.model_dump(by_alias=True))
    domain._fingerprint = None
    assert domain.fingerprint() == before
    domain.spec = extended.model_validate({**domain.spec.model_dump(by_alias=True), "future_option": True})
    domain._fingerprint = None
    assert domain.fingerprint() != before
