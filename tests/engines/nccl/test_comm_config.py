"""The direct engine's communicator is made as nccl-tests 2.19 makes its own (``initComms``)."""

from __future__ import annotations

from typing import Any

import pytest

from gpufabric.engines.nccl.comm_config import CommSettings, init_communicator, nccl_tests_settings


@pytest.mark.parametrize(
    ("version", "collectives", "fields"),
    [
        (22703, ["all_reduce"], {}),  # before 2.28: nccl-tests' config sets nothing
        (22800, ["all_reduce"], {"nvlink_centric_sched": 1}),
        (22809, ["alltoall", "scatter"], {"nvlink_centric_sched": 1}),
        (22809, ["sendrecv"], {"nvlink_centric_sched": 1}),  # maxP2pPeers only from 2.30
        (23000, ["sendrecv"], {"nvlink_centric_sched": 1, "max_p2p_peers": 2}),
        (23100, ["all_reduce", "alltoall"], {"nvlink_centric_sched": 1}),
    ],
)
def test_settings_follow_nccl_tests_per_release(
    version: int, collectives: list[str], fields: dict[str, int]
) -> None:
    settings = nccl_tests_settings(version, collectives)
    assert settings.fields == fields
    assert settings.note is None


def test_sendrecv_among_others_on_2_30_says_what_it_could_not_match() -> None:
    settings = nccl_tests_settings(23000, ["all_reduce", "sendrecv"])
    assert "max_p2p_peers" not in settings.fields  # the others would be refused more than 2 peers
    assert settings.note is not None
    assert "-c sendrecv alone" in settings.note and "maxP2pPeers" in settings.note


def test_describe_names_each_setting() -> None:
    assert "nvlink_centric_sched=1" in CommSettings({"nvlink_centric_sched": 1}).describe()
    assert "default config" in CommSettings().describe()


class _Config:
    """nccl4py's ``Config`` as far as this module uses it: attributes and a pointer."""

    ptr = 0x1000

    def __init__(self) -> None:
        self.set: dict[str, int] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "set":
            self.set[name] = value
        object.__setattr__(self, name, value)


class _Bindings:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.configs: list[_Config] = []

    def Config(self) -> _Config:  # nccl4py's name
        config = _Config()
        self.configs.append(config)
        return config

    def comm_init_rank(self, nranks: int, uid: Any, rank: int) -> str:
        self.calls.append(("comm_init_rank", nranks, uid, rank))
        return "comm"

    def comm_init_rank_config(self, nranks: int, uid: Any, rank: int, config: int) -> str:
        self.calls.append(("comm_init_rank_config", nranks, uid, rank, config))
        return "comm-config"


def test_init_with_settings_passes_a_config_holding_them() -> None:
    nccl = _Bindings()
    assert init_communicator(nccl, 4, "uid", 2, CommSettings({"nvlink_centric_sched": 1})) == "comm-config"
    assert nccl.calls == [("comm_init_rank_config", 4, "uid", 2, _Config.ptr)]
    assert nccl.configs[0].set == {"nvlink_centric_sched": 1}


def test_init_without_settings_is_plain_init_rank() -> None:
    nccl = _Bindings()
    assert init_communicator(nccl, 2, "uid", 0, CommSettings()) == "comm"
    assert nccl.calls == [("comm_init_rank", 2, "uid", 0)]
