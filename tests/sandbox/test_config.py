"""sandbox/config.py: each backend's options, typed; a misspelt one fails where it is given."""
from __future__ import annotations

import pytest

from sandbox import (
    AutoConfig,
    DockerConfig,
    LocalConfig,
    SandboxConfigError,
    get_sandbox,
    sandbox_config,
)


@pytest.mark.parametrize(("backend", "typo", "meant"), [
    ("docker", "pool_sise", "pool_size"),
    ("local", "alow_unisolated", "allow_unisolated"),
    ("auto", "imgae", "image"),
])
def test_a_misspelt_option_is_refused_naming_it_and_every_option_there_is(backend, typo, meant):
    with pytest.raises(SandboxConfigError) as refused:
        get_sandbox(backend, **{typo: "x"})
    message = str(refused.value)
    assert repr(typo) in message and meant in message, message
    options = {"docker": DockerConfig, "local": LocalConfig}
    for kind in [options[backend]] if backend in options else list(options.values()):
        assert all(name in message for name in kind.__dataclass_fields__), message


def test_the_refusal_comes_before_any_engine_is_asked():
    """An engine that does not exist would be SandboxUnavailable: the option is refused first."""
    with pytest.raises(SandboxConfigError, match="'labe1s'"):
        get_sandbox("docker", docker_base_url="unix:///nonexistent/docker.sock", labe1s={})


def test_another_backends_option_is_refused_by_a_named_backend():
    with pytest.raises(SandboxConfigError, match=r"the local sandbox has no option 'image' \(its options are "
                                                 r"allow_unisolated, bwrap\)"):
        sandbox_config("local", image="graphdojo-sandbox:latest")
    with pytest.raises(SandboxConfigError, match="the docker sandbox has no option 'bwrap'"):
        sandbox_config("docker", bwrap="/usr/bin/bwrap")


def test_auto_hands_each_backend_its_own_options():
    config = sandbox_config("auto", image="mine:1", runtime="runsc", pool_size=2, allow_unisolated=True)
    assert config == AutoConfig(docker=DockerConfig(image="mine:1", runtime="runsc", pool_size=2),
                                local=LocalConfig(allow_unisolated=True))
    assert isinstance(config, AutoConfig)
    assert config.narrowed("local") == LocalConfig(allow_unisolated=True)
    assert config.narrowed("docker").image == "mine:1"  # type: ignore[union-attr]
    assert config.narrowed("auto") is config


@pytest.mark.parametrize(("options", "message"), [
    ({"runtime": "runcs"}, 'runtime must be "runc" or "runsc"'),
    ({"pool_size": -1}, "pool_size must be a whole number"),
    ({"pool_size": 1.5}, "pool_size must be a whole number"),
    ({"allow_unisolated": "false"}, "allow_unisolated must be True or False"),
])
def test_a_value_out_of_range_is_refused(options, message):
    with pytest.raises(SandboxConfigError, match=message):
        sandbox_config("auto", **options)


@pytest.mark.parametrize("name", ["vm", "Docker", ""])
def test_an_unknown_backend_is_refused(name):
    with pytest.raises(SandboxConfigError, match="unknown sandbox backend"):
        sandbox_config(name)
    with pytest.raises(SandboxConfigError, match="unknown sandbox backend"):
        AutoConfig().narrowed(name)


def test_a_configuration_holds_its_own_copies():
    labels = {"queue": "gpu"}
    preload = ["numpy"]
    config = DockerConfig(labels=labels, preload=preload)  # type: ignore[arg-type]
    labels["queue"], preload[0] = "changed", "torch"
    assert (config.labels, config.preload) == ({"queue": "gpu"}, ("numpy",))
