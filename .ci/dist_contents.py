"""Check the wheel and sdist in a folder: both carry the theory page (the wheel as a data file
installed under share/doc/attnphase), the wheel the package and its licence, the sdist the
documentation's sources and the tests; neither carries a built site or a result store."""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path


def main(folder: Path) -> None:
    (wheel,) = folder.glob("*.whl")
    (sdist,) = folder.glob("*.tar.gz")
    in_wheel = zipfile.ZipFile(wheel).namelist()
    with tarfile.open(sdist) as tar:
        in_sdist = [name.split("/", 1)[1] for name in tar.getnames() if "/" in name]
    theory = "share/doc/attnphase/theory.md"
    needed = {
        wheel.name: (in_wheel, [theory, "attnphase/__init__.py", "LICENSE"]),
        sdist.name: (in_sdist, ["docs/theory.md", "docs/conf.py", "tests/conftest.py", "LICENSE"]),
    }
    for name, (files, wanted) in needed.items():
        missing = [w for w in wanted if not any(f.endswith(w) for f in files)]
        stray = [f for f in files if "_build/" in f or f.endswith(".sqlite")]
        if missing or stray:
            sys.exit(f"{name}: missing {missing}, should not carry {stray[:5]}")
        print(f"{name}: {len(files)} files, {', '.join(wanted)} present")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
