"""The Typer app and what every command shares: the error boundary, output paths, consoles, JSON.

The error boundary is `ToolgymGroup.main`: whatever a command raises, the user sees one line on
stderr, `error: …`, and never a traceback. A usage error exits 2; a library error
(`ToolgymError`, `OSError`, `ValueError`) or a bug exits 1. Output paths (`output_file` /
`output_dir`) are checked while the command line is parsed, but a folder is made only when first
written to, and removed again if the command fails and it holds only `disposable` files.
Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence, Sized
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, ConsoleDimensions
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text
from typer.core import TyperGroup

from simulator import InfraError, SpecError, ToolError, ToolgymError

#: Errors the library raises on purpose or that the system reports (files, values): one line, exit 1.
LIBRARY_ERRORS = (ToolgymError, OSError, ValueError)
#: How much of an error message is shown (a message may quote a huge value).
MAX_MESSAGE = 1000
#: The width of a console that is not a terminal: piped tables keep every column.
PIPE_WIDTH = 10_000


class _Console(Console):
    """A rich console that, when its output is not a terminal, never cuts or wraps to fit a width."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


out = _Console()
err = _Console(stderr=True)


def one_line(message: str) -> str:
    """A message as one line (inner line breaks joined), cut to MAX_MESSAGE characters."""
    text = "; ".join(part.strip() for part in str(message).splitlines() if part.strip())
    if len(text) > MAX_MESSAGE:
        text = f"{text[:MAX_MESSAGE]}… ({len(text) - MAX_MESSAGE} more characters)"
    return text


def describe(exc: BaseException) -> str:
    """What the user is told about an exception that ended a command."""
    if isinstance(exc, SpecError) and exc.problems:
        first = exc.problems[0]
        if len(exc.problems) == 1:
            return str(first)
        return f"{len(exc.problems)} problems, the first: {first}; `toolgym check` lists them all"
    if isinstance(exc, ToolError):
        return f"tool error: {exc}"
    if isinstance(exc, InfraError):  # not the call's fault: a limit or a failure of the environment
        return f"infrastructure error ({exc.kind}): {exc}"
    if isinstance(exc, OSError) and exc.filename is not None:
        what = f"{exc.filename} -> {exc.filename2}" if exc.filename2 is not None else str(exc.filename)
        return f"{what}: {(exc.strerror or type(exc).__name__).lower()}"
    if isinstance(exc, LIBRARY_ERRORS):
        return str(exc) or type(exc).__name__
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return (
        f"internal error{where}: {type(exc).__name__}: {exc} "
        "(a bug in toolgym; TOOLGYM_TRACEBACK=1 shows the traceback)"
    )


def error_line(message: str) -> None:
    err.print(Text.assemble(("error:", "bold red"), " ", one_line(message)), highlight=False, soft_wrap=True)


def _given(param: Any, args: list[str]) -> str | None:
    """The value an option was given on the command line (its last occurrence), if any."""
    opts = [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]
    value = None
    for i, arg in enumerate(args):
        for opt in opts:
            if arg == opt and i + 1 < len(args):
                value = args[i + 1]
            elif arg.startswith(f"{opt}="):
                value = arg[len(opt) + 1 :]
    return value


def _usage_message(exc: typer.TyperException, args: list[str]) -> str:
    """A usage error's message, with the value given when the message does not quote it."""
    message = exc.format_message().rstrip(".")
    param = getattr(exc, "param", None)
    value = _given(param, args) if getattr(param, "param_type_name", "") == "option" else None
    if value is not None and value not in message:
        message = f"{message} (got {value!r})"
    ctx = getattr(exc, "ctx", None)
    return f"{message} (see `{ctx.command_path} --help`)" if ctx is not None else message


class ToolgymGroup(TyperGroup):
    """The `toolgym` command group: one place where every error becomes one line and an exit code."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        _outputs.clear()
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.TyperException as exc:  # usage errors and bad parameter values
            if type(exc).__name__ != "NoArgsIsHelpError":  # the help is already printed
                error_line(_usage_message(exc, sys.argv[1:] if args is None else list(args)))
            code = exc.exit_code
        except typer.Abort:
            error_line("aborted")
            code = 1
        except Exception as exc:
            if os.environ.get("TOOLGYM_TRACEBACK") and not isinstance(exc, LIBRARY_ERRORS):
                _outputs.remove_created()
                raise
            error_line(describe(exc))
            code = 1
        code = code if isinstance(code, int) else 0
        if code:
            _outputs.remove_created()
        sys.exit(code)


app = typer.Typer(
    name="toolgym",
    cls=ToolgymGroup,
    help="Synthetic tool environments for agents: SQLite-backed domains, compiled tools, MCP serving, state-diff scoring.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


class _Outputs:
    """The folders this run's output options would create, and the files it marked disposable."""

    def __init__(self) -> None:
        self.folders: list[Path] = []
        self.disposable: set[Path] = set()

    def clear(self) -> None:
        self.folders.clear()
        self.disposable.clear()

    def plan(self, folder: Path, target: Path) -> None:
        """Check that `folder` can be made to write `target`; note the outermost folder it would add."""
        missing, base = [], folder.absolute()
        while not base.exists() and base != base.parent:
            missing.append(base)
            base = base.parent
        if not base.is_dir():
            raise typer.BadParameter(f"{base} is a file, so {target} cannot be created under it")
        if not os.access(base, os.W_OK | os.X_OK):
            raise typer.BadParameter(
                f"{target} cannot be written: {base} is not writable (permission denied)"
            )
        if missing:
            self.folders.append(missing[-1])

    def remove_created(self) -> None:
        """Remove the folders this run created that hold nothing but its disposable files."""
        for top in reversed(self.folders):
            try:
                if top.is_dir() and not top.is_symlink() and self._removable(top):
                    for root, dirs, files in os.walk(top, topdown=False):
                        for name in files:
                            (Path(root) / name).unlink()
                        for name in dirs:
                            (Path(root) / name).rmdir()
                    top.rmdir()
            except OSError:  # written to meanwhile, or not ours to remove: left as it is
                continue

    def _removable(self, top: Path) -> bool:
        for root, dirs, files in os.walk(top):
            if any((Path(root) / d).is_symlink() for d in dirs):
                return False
            if any((Path(root) / f) not in self.disposable for f in files):
                return False
        return True


_outputs = _Outputs()


def disposable(path: Path) -> None:
    """Mark a file this command wrote as worthless should it fail (removed with a folder it created)."""
    _outputs.disposable.add(path.absolute())


def make_parent(path: Path) -> Path:
    """Make the folder `path` is to be written in (and its parents); return `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


if TYPE_CHECKING:
    _ConcretePath = Path
else:
    _ConcretePath = type(Path())


class OutputPath(_ConcretePath):
    """A path given to write to: opening it (or a path under it) for writing first makes its folder."""

    def open(self, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if set(mode) & set("wax"):
            make_parent(self)
        return super().open(mode, *args, **kwargs)


def output_file(path: Path | None) -> Path | None:
    """Typer callback of an option naming a file to write: checked now, its folder made on writing."""
    if path is None:
        return None
    if path.is_dir():
        raise typer.BadParameter(f"{path} is a folder; give a file path to write")
    _outputs.plan(path.parent, path)
    if path.exists() and not os.access(path, os.W_OK):
        raise typer.BadParameter(f"{path} cannot be written (permission denied)")
    return OutputPath(path)


def output_dir(path: Path | None) -> Path | None:
    """Typer callback of an option naming a folder to write into: checked now, made on writing."""
    if path is None:
        return None
    if path.exists() and not path.is_dir():
        raise typer.BadParameter(f"{path} is a file; give a folder")
    _outputs.plan(path, path)
    return OutputPath(path)


def choice(*values: str) -> Callable[[str | None], str | None]:
    """A Typer callback accepting only `values` (anything else is a usage error naming the option)."""

    def check(value: str | None) -> str | None:
        if value is not None and value not in values:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(values)}")
        return value

    return check


DomainArg = Annotated[
    str, typer.Argument(help="a bundled domain's name (see `toolgym domains`) or a domain folder's path")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print JSON for machines instead of a table")]


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print one error line; return the Exit for the caller to raise."""
    error_line(message)
    return typer.Exit(code)


def count(items: Sized | int, noun: str) -> str:
    """`1 error`, `3 errors` (of a number, or of how many items there are)."""
    n = items if isinstance(items, int) else len(items)
    return f"{n} {noun}{'' if n == 1 else 's'}"


def domain_errors(where: str, errors: Sequence[Any], alone: bool = True) -> typer.Exit:
    """Print a domain's errors as `toolgym check` does: one (when `alone`) as the error line, else a
    count line then `  error: …` each; return the Exit (1) for the caller to raise."""
    if alone and len(errors) == 1:
        return fail(str(errors[0]))
    err.print(f"[bold red]{count(errors, 'error')}[/] in {where}:", highlight=False)
    for problem in errors:
        err.print(f"  error: {problem}", highlight=False, soft_wrap=True)
    return typer.Exit(1)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


def progress_bar(label: str, quiet: bool) -> Progress:
    """The commands' progress bar on stderr: label, bar, done/total, elapsed (off with --json)."""
    return Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=quiet,
    )
