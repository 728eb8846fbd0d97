"""Write a Sphinx inventory (objects.inv, format 2) from the hand-kept list torch.txt.

PyTorch counterpart: none (this is docs tooling). PyTorch's own objects.inv is not in
any package and CI has no network, so the few PyTorch names the walkthrough links to
are listed in torch.txt, one ``name role uri`` line each, and docs/conf.py turns the
list into an inventory on every build. The list doubles as the map of ember names to
PyTorch's documentation.
"""

import pathlib
import zlib

HERE = pathlib.Path(__file__).parent


def read_entries(path=HERE / "torch.txt"):
    """``[(name, role, uri)]`` from the list: blank lines and ``#`` comments skipped."""
    entries = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, role, uri = line.split()
            entries.append((name, role, uri))
    return entries


def write_inventory(out_path, project="PyTorch", version="2.13"):
    """Write the inventory: a plain header, then one zlib stream of entries."""
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
              "# The remainder of this file is compressed using zlib.\n").encode()
    body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in read_entries()).encode()
    pathlib.Path(out_path).write_bytes(header + zlib.compress(body, 9))
    return out_path


if __name__ == "__main__":
    print(write_inventory(HERE / "torch.inv"))
