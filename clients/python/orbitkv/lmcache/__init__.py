"""OrbitKV backends for LMCache (``lmcache>=0.5.6,<0.6``), importable without LMCache installed.

* in-process (vLLM's ``LMCacheConnectorV1``): :class:`OrbitKVConnectorAdapter` / :class:`OrbitKVConnector`, loaded
  through ``remote_storage_plugins`` (``module_path: orbitkv.lmcache``, ``class_name: OrbitKVConnectorAdapter``);
* multi-process (``lmcache server --l2-adapter``, vLLM's ``LMCacheMPConnector``): :class:`OrbitKVL2Adapter` in
  ``orbitkv.lmcache.l2``.

docs/engines.md "Engine backends" has the configuration, key mapping, failure semantics and refcount notes.
"""

from .connector import OrbitKVConnector, OrbitKVConnectorAdapter, Settings
from .l2 import Bitmap, OrbitKVL2Adapter, OrbitKVL2AdapterConfig, object_key_string

__all__ = ["OrbitKVConnector", "OrbitKVConnectorAdapter", "Settings", "OrbitKVL2Adapter", "OrbitKVL2AdapterConfig",
           "Bitmap", "object_key_string"]
