"""A PEP 517 build backend in the standard library only, enough for this one test package:
a wheel of the hermesctx_demo_plugin package with its entry points (read from pyproject.toml)."""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "hermesctx_demo_plugin"


def _project() -> dict:
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as handle:
        if tomllib is not None:
            return tomllib.load(handle)["project"]
    raise RuntimeError("building this test package needs Python 3.11 (tomllib)")


def _entry_points(project: dict) -> str:
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
        lines.append("")
    return "\n".join(lines)


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    name, version = project["name"], project["version"]
    dist = f"{name.replace('-', '_')}-{version}"
    files = {}
    for entry in sorted(os.listdir(os.path.join(HERE, PACKAGE))):
        if entry.endswith(".py"):
            with open(os.path.join(HERE, PACKAGE, entry), "rb") as handle:
                files[f"{PACKAGE}/{entry}"] = handle.read()
    files[f"{dist}.dist-info/METADATA"] = (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                           f"Summary: {project.get('description', '')}\n").encode()
    files[f"{dist}.dist-info/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{dist}.dist-info/entry_points.txt"] = _entry_points(project).encode()
    record = [f"{path},sha256={_digest(data)},{len(data)}" for path, data in files.items()]
    files[f"{dist}.dist-info/RECORD"] = ("\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n").encode()
    filename = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return filename


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
