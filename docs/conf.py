"""Sphinx configuration of the attnphase documentation (built offline by `make docs`)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click
import typer.main
from typer.cli import get_docs_for_click

import attnphase
from attnphase import __version__
from attnphase.cli import app

project = "attnphase"
author = "the attnphase developers"
release = version = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax shipped with the site: the build fetches nothing
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "examples", "auto_examples/*.ipynb", "auto_examples/*.py", "**/*.zip"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = False

html_theme = "alabaster"
html_title = f"attnphase {release}"
html_static_path: list[str] = []

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "min_reported_time": 1,
}


def _write_cli_reference() -> None:
    """docs/reference/cli.md from the typer application (regenerated at every build)."""
    command = typer.main.get_command(app)
    ctx = click.Context(command, info_name="attnphase")
    text = get_docs_for_click(obj=command, ctx=ctx, name="attnphase", title="Command line")
    out = Path(__file__).parent / "reference" / "cli.md"
    out.parent.mkdir(exist_ok=True)
    if not out.exists() or out.read_text() != text:
        out.write_text(text)


_write_cli_reference()


def _check_public_names() -> None:
    """Fail the build on a public function or class without a docstring, or on a public name
    missing from the API page."""
    page = (Path(__file__).parent / "reference" / "api.md").read_text()
    listed = {word.strip("`,.") for line in page.splitlines() for word in line.split()}
    for name in attnphase.__all__:
        obj = getattr(attnphase, name)
        if callable(obj) and not (obj.__doc__ or "").strip():
            raise RuntimeError(f"attnphase.{name} has no docstring")
        if name not in listed:
            raise RuntimeError(f"attnphase.{name} is public but not on reference/api.md")


_check_public_names()


TUTORIAL_SECONDS = 60.0  # the gallery header's claim: each tutorial, on a quiet 2-core machine


def _check_tutorial_times(app, exception) -> None:
    """Warn (an error under -W) for a tutorial whose measured time, as sphinx-gallery wrote
    it into its page, exceeds the header's minute scaled by the load average per core (at
    least 1): the header's claim is checked at every build."""
    if exception is not None:
        return
    from sphinx.util import logging

    cores = len(os.sched_getaffinity(0))
    limit = TUTORIAL_SECONDS * max(1.0, os.getloadavg()[0] / cores)
    pattern = re.compile(r"Total running time of the script:\*\* \((\d+) minutes ([\d.]+) seconds")
    for page in sorted((Path(app.srcdir) / "auto_examples").glob("plot_*.rst")):
        found = pattern.search(page.read_text())
        seconds = 60 * int(found.group(1)) + float(found.group(2)) if found else 0.0
        if seconds > limit:
            logging.getLogger(__name__).warning(
                f"{page.stem} took {seconds:.0f} s, over the gallery header's minute "
                f"(scaled by the load to {limit:.0f} s)"
            )


def setup(app):
    app.connect("build-finished", _check_tutorial_times)
