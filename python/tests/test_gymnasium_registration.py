"""rltrade's environments in Gymnasium's registry: gymnasium.make_vec("rltrade/Intraday-v0").

Debian has no Gymnasium package (and this machine no PyPI), so these tests put a small
stand-in `gymnasium` module on sys.path that does what Gymnasium 1.0's registry does with
a spec that has a `vector_entry_point` (gymnasium/envs/registration.py: register stores
an EnvSpec; make_vec merges the spec's kwargs with the caller's, loads a "module:attr"
entry point, calls it with num_envs and the kwargs, and sets the spec on
env.unwrapped.spec). They check our side of that contract, not Gymnasium itself.
"""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rltrade

SOURCE = pathlib.Path(os.environ.get("RLT_SOURCE_DIR", pathlib.Path(__file__).parents[2]))

FAKE_GYMNASIUM = textwrap.dedent('''
    """Stand-in for Gymnasium 1.0's registry (register / make_vec with vector_entry_point)."""
    import copy
    import dataclasses
    import importlib

    @dataclasses.dataclass
    class EnvSpec:
        id: str
        entry_point: object = None
        kwargs: dict = dataclasses.field(default_factory=dict)
        vector_entry_point: object = None

    registry = {}

    def register(id, entry_point=None, *, kwargs=None, vector_entry_point=None, **other):
        registry[id] = EnvSpec(id, entry_point, dict(kwargs or {}), vector_entry_point)

    def make_vec(id, num_envs=1, vectorization_mode=None, vector_kwargs=None, wrappers=None,
                 **kwargs):
        spec = copy.deepcopy(registry[id])
        spec_kwargs = spec.kwargs
        spec.kwargs = {}
        spec_kwargs.update(kwargs)
        assert vectorization_mode in (None, "vector_entry_point")
        entry = spec.vector_entry_point
        if not callable(entry):
            module, attr = entry.split(":")
            entry = getattr(importlib.import_module(module), attr)
        env = entry(num_envs=num_envs, **spec_kwargs)
        spec.kwargs = dict(spec_kwargs, num_envs=num_envs)
        env.unwrapped.spec = spec
        return env
''')


@pytest.fixture
def fake_gymnasium(tmp_path, monkeypatch):
    (tmp_path / "gymnasium.py").write_text(FAKE_GYMNASIUM)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gymnasium", raising=False)
    import gymnasium  # noqa: PLC0415 (the stand-in just written)

    yield gymnasium
    sys.modules.pop("gymnasium", None)


def test_every_env_is_registered_under_its_gymnasium_id(fake_gymnasium):
    ids = rltrade.register_gymnasium()
    assert ids == [rltrade.gymnasium_id(e) for e in rltrade.env_ids()]
    assert "rltrade/Intraday-v0" in ids and "rltrade/MemoryCue-v0" in ids
    for env_id in rltrade.env_ids():
        spec = fake_gymnasium.registry[rltrade.gymnasium_id(env_id)]
        assert spec.entry_point is None
        assert spec.vector_entry_point == "rltrade.vector:make_vec"
        assert spec.kwargs == {"env_id": env_id}


def test_gymnasium_make_vec_builds_rltrades_vector_env(fake_gymnasium):
    rltrade.register_gymnasium()
    env = fake_gymnasium.make_vec("rltrade/Intraday-v0", num_envs=3, seed=4, num_threads=1,
                                  cost_rate=0.001)
    assert isinstance(env, rltrade.VectorEnv)
    assert env.num_envs == 3 and env.spec_id == "intraday"
    assert env.spec.id == "rltrade/Intraday-v0"
    assert env.spec.kwargs == {"env_id": "intraday", "seed": 4, "num_threads": 1,
                               "cost_rate": 0.001, "num_envs": 3}
    # The same environments as make_vec's: identical observations and rewards.
    direct = rltrade.make_vec("intraday", 3, seed=4, num_threads=1, cost_rate=0.001)
    obs, _ = env.reset()
    obs2, _ = direct.reset()
    np.testing.assert_array_equal(obs, obs2)
    actions = np.full((3,) + env.single_action_space.shape, 0.5, np.float32)
    np.testing.assert_array_equal(env.step(actions)[1], direct.step(actions)[1])
    cartpole = fake_gymnasium.make_vec("rltrade/Cartpole-v0", num_envs=2)
    assert cartpole.num_envs == 2 and cartpole.spec_id == "cartpole"
    with pytest.raises(ValueError, match="initial_capit"):
        fake_gymnasium.make_vec("rltrade/Intraday-v0", num_envs=2, initial_capitl=5.0)


def test_registering_again_keeps_the_registered_specs(fake_gymnasium):
    rltrade.register_gymnasium()
    first = dict(fake_gymnasium.registry)
    assert rltrade.register_gymnasium() == list(first)
    assert all(fake_gymnasium.registry[k] is v for k, v in first.items())


def _imports(pythonpath):
    code = ("import sys, rltrade\n"
            "gym = sys.modules.get('gymnasium')\n"
            "print(gym is not None, sorted(getattr(gym, 'registry', {})))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env).stdout.strip()


def test_import_rltrade_registers_only_when_gymnasium_is_installed(tmp_path):
    package_path = [str(pathlib.Path(rltrade.__file__).parents[1])]
    package_path += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if _imports(package_path).startswith("True"):
        pytest.skip("a real Gymnasium is installed here")
    assert _imports(package_path) == "False []"  # Gymnasium is neither needed nor imported
    (tmp_path / "gymnasium.py").write_text(FAKE_GYMNASIUM)
    out = _imports([str(tmp_path)] + package_path)
    assert out.startswith("True") and "'rltrade/Intraday-v0'" in out


def test_make_vec_documents_every_env_key_of_the_config_reference():
    """help(rltrade.make_vec) lists every [env] key docs/config.md (generated from the
    code) gives for each environment."""
    text = (SOURCE / "docs" / "config.md").read_text()
    doc = rltrade.make_vec.__doc__
    sections = re.findall(r'#### \[env\] id = "(\w+)"\n(.*?)(?=\n#|\Z)', text, re.S)
    assert {name for name, _ in sections} == set(rltrade.env_ids())
    for name, body in sections:
        keys = re.findall(r"^\| `(\w+)` \|", body, re.M)
        assert keys, name
        listed = re.search(rf"{name}: (.*?)(?:\.\n|\. [a-z_]+:)", doc, re.S)
        assert listed, f"make_vec's docstring has no '{name}:' list"
        words = set(re.findall(r"\w+", listed.group(1)))
        missing = [k for k in keys if k not in words]
        assert not missing, (name, missing)


def test_public_functions_have_docstrings_and_type_hints():
    import inspect  # noqa: PLC0415

    for name in rltrade.__all__:
        obj = getattr(rltrade, name)
        if inspect.ismodule(obj):
            continue
        assert inspect.getdoc(obj), name
        if inspect.isfunction(obj):
            hints = obj.__annotations__
            assert "return" in hints, name
            params = [p for p in inspect.signature(obj).parameters.values()
                      if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
            assert all(p.name in hints for p in params), (name, params)
