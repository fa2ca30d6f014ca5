"""PyTorch releases on tap: cached virtual environments, one per torch release.

`app.torch_releases` lays them out under one directory (`<data dir>/envs/<version>/`) and
lists, resolves and removes them (it lives outside the engine so settings, which the HTTP side
reads, can use it); `provision` creates one (uv when present, else pip) with a pinned
`torch==<version>`. Pure: no settings; the caller passes the directory and options.
"""

from app.engine.envs.provision import ProvisionError, provision
from app.torch_releases import EnvStore, ProvisionedEnv, parse_version, version_key

__all__ = ["EnvStore", "ProvisionedEnv", "ProvisionError", "parse_version", "provision", "version_key"]
