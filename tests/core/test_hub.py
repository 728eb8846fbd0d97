"""ember.hub against torch.hub on a repository already in the hub cache and a local
directory: the same entrypoints, docstrings and models; checkpoints by URL from the
cache or a file:// URL, with torch's hash check; and ember's one-line refusal to go to
the network (NOTE [ ember.hub never downloads ])."""

import hashlib

import numpy as np
import pytest
import torch

import ember

HUBCONF = '''
dependencies = ["numpy"]
import {lib} as lib


def tiny(width=3):
    """A linear layer of WIDTH outputs, seeded."""
    lib.manual_seed(0)
    return lib.nn.Linear(2, width)


def _helper():
    return None
'''


@pytest.fixture
def hub(tmp_path, monkeypatch):
    for lib in ("torch", "ember"):
        repo = tmp_path / lib / "owner_tinyrepo_main"
        repo.mkdir(parents=True)
        (repo / "hubconf.py").write_text(HUBCONF.format(lib=lib))
    torch_before = torch.hub.get_dir()
    torch.hub.set_dir(str(tmp_path / "torch"))
    monkeypatch.setattr(ember.hub, "_hub_dir", None)  # set_dir's choice ends with the test
    ember.hub.set_dir(tmp_path / "ember")
    yield tmp_path
    torch.hub.set_dir(torch_before)


def test_list_help_and_load_as_torch(hub):
    assert ember.hub.list("owner/tinyrepo") == torch.hub.list("owner/tinyrepo:main", trust_repo=True) == ["tiny"]
    assert ember.hub.help("owner/tinyrepo", "tiny") == torch.hub.help("owner/tinyrepo:main", "tiny",
                                                                      trust_repo=True)
    e = ember.hub.load("owner/tinyrepo", "tiny", width=4)
    t = torch.hub.load("owner/tinyrepo:main", "tiny", width=4, trust_repo=True)
    np.testing.assert_array_equal(e.weight.detach().numpy(), t.weight.detach().numpy())
    local = ember.hub.load(str(hub / "ember" / "owner_tinyrepo_main"), "tiny", source="local")
    assert tuple(local.weight.shape) == (3, 2)


def test_what_is_not_cached_is_a_clear_error(hub):
    with pytest.raises(RuntimeError, match="ember.hub does not download: the repository other/repo is not in the "
                                           "hub cache; place a copy of it .* at .*other_repo_main"):
        ember.hub.load("other/repo", "tiny")
    with pytest.raises(RuntimeError, match="Cannot find callable _missing in hubconf"):
        ember.hub.load("owner/tinyrepo", "_missing")
    with pytest.raises(ValueError, match='Unknown source: "web"'):
        ember.hub.load("owner/tinyrepo", "tiny", source="web")
    with pytest.raises(RuntimeError, match=r"does not download \(https://example.com/w.pt\): place the file at"):
        ember.hub.load_state_dict_from_url("https://example.com/w.pt")


def test_checkpoints_by_url_from_a_file_url_and_the_cache(hub, tmp_path):
    weights = tmp_path / "weights.pt"
    ember.save({"w": ember.arange(3.0)}, weights)
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    named = tmp_path / f"tiny-{digest[:8]}.pt"
    named.write_bytes(weights.read_bytes())
    state = ember.hub.load_state_dict_from_url(named.as_uri(), check_hash=True)
    assert state["w"].tolist() == [0.0, 1.0, 2.0]
    cached = hub / "ember" / "checkpoints" / named.name
    assert cached.exists()  # now in the cache: read from there, no URL needed
    assert ember.hub.load_state_dict_from_url("https://example.com/" + named.name)["w"].tolist() == [0.0, 1.0, 2.0]
    bad = tmp_path / "tiny-00000000.pt"
    bad.write_bytes(weights.read_bytes())
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "00000000"'):
        ember.hub.load_state_dict_from_url(bad.as_uri(), check_hash=True)


def test_the_default_directory_follows_ember_home(monkeypatch, tmp_path):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setenv("EMBER_HOME", str(tmp_path))
    assert ember.hub.get_dir() == str(tmp_path / "hub")
