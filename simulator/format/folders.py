"""Where domains are: a bundled domain's name or a folder path -> the domain folder.

Domains are looked up in the folders named by `$TOOLGYM_DOMAINS` (os.pathsep-separated: domain
folders, or folders of them), then among the bundled domains.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from ..errors import Problem, SpecError

BUNDLED = Path(__file__).resolve().parents[2] / "domains"


def local_roots() -> list[Path]:
    """The entries of $TOOLGYM_DOMAINS (os.pathsep-separated): domain folders, or folders of them."""
    return [Path(p) for p in os.environ.get("TOOLGYM_DOMAINS", "").split(os.pathsep) if p]


def domain_search_path() -> list[Path]:
    """Where domains are looked up: the entries of $TOOLGYM_DOMAINS, then the bundled domains' folder."""
    return [*local_roots(), BUNDLED]


def domain_folders(root: Path) -> list[Path]:
    """The domain folders a search-path entry gives: itself if it is one, else its children that are."""
    if (root / "domain.yaml").is_file():
        return [root]
    if not root.is_dir():
        return []
    return [child for child in sorted(root.iterdir()) if (child / "domain.yaml").is_file()]


def resolve(ref: str | Path) -> Path:
    """A domain reference (a bundled name or a folder path) -> the domain folder.

    SpecError when there is none, suggesting the nearest bundled or local domain's name."""
    path = Path(ref)
    if (path / "domain.yaml").is_file():
        return path
    if isinstance(ref, str) and os.sep not in ref and "/" not in ref:
        for root in domain_search_path():
            if root.name == ref and (root / "domain.yaml").is_file():
                return root
            if (root / ref / "domain.yaml").is_file():
                return root / ref
    why = f"no domain folder (with domain.yaml) here, nor a domain of that name; {_hint(str(ref))}"
    raise SpecError([Problem(str(ref), "", why)])


def _hint(ref: str) -> str:
    """The nearest domain to `ref`: a bundled or local domain's name, or for a path, a domain folder
    beside it; else the names there are."""
    path = Path(ref)
    known = {p.name: p.name for p in list_domain_dirs()}
    if os.sep in ref or "/" in ref:
        known |= {p.name: str(path.parent / p.name) for p in domain_folders(path.parent)}
    near = difflib.get_close_matches(path.name, sorted(known), n=1)
    if near:
        return f"did you mean {known[near[0]]!r}?"
    return f"the domains are: {', '.join(sorted(known)) or 'none'} (see `toolgym domains`)"


def list_domain_dirs() -> list[Path]:
    seen: dict[str, Path] = {}
    for root in domain_search_path():
        for folder in domain_folders(root):
            seen.setdefault(folder.name, folder)
    return list(seen.values())
