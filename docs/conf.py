"""Sphinx configuration of the attnphase documentation (built offline by `make docs`)."""

from __future__ import annotations

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
