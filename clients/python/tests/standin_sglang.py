"""Stand-ins for the parts of SGLang HiCache the OrbitKV backend touches, written from the public interface described
in /work/shared/ENGINES.md section 1.3 (no SGLang code copied): HiCacheStorageConfig, the dynamic backend factory's
rule (import module_path, take class_name, construct ``cls(storage_config, kwargs)``), and a host KV pool in page-first
layout handing out ``(ptr, size)`` per page (K and V for MHA, one latent for MLA) from token indices."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np


@dataclass
class HiCacheStorageConfig:
    tp_rank: int = 0
    tp_size: int = 1
    pp_rank: int = 0
    pp_size: int = 1
    is_mla_model: bool = False
    is_page_first_layout: bool = True
    model_name: str = "Qwen/Qwen2.5-0.5B"
    extra_config: dict = field(default_factory=dict)


def create_backend(storage_config: HiCacheStorageConfig, mem_pool_host=None):
    extra = storage_config.extra_config
    module = importlib.import_module(extra["module_path"])
    backend = getattr(module, extra["class_name"])(storage_config, {})
    if mem_pool_host is not None:
        backend.register_mem_pool_host(mem_pool_host)
    return backend


class HostKVCache:
    """``pages`` pages of ``page_size`` tokens; each page holds ``half_bytes`` of K and (MHA) as many of V, in two
    separate numpy buffers as SGLang's page-first host pool does."""

    def __init__(self, pages: int, page_size: int, half_bytes: int, is_mla: bool = False):
        self.page_size = page_size
        self.half_bytes = half_bytes
        self.is_mla = is_mla
        self.k = np.zeros((pages, half_bytes), dtype=np.uint8)
        self.v = None if is_mla else np.zeros((pages, half_bytes), dtype=np.uint8)

    def token_indices(self, pages) -> np.ndarray:
        """The host indices of whole pages (what SGLang passes to batch_get_v1/batch_set_v1)."""
        return np.concatenate([np.arange(p * self.page_size, (p + 1) * self.page_size) for p in pages])

    def get_page_buffer_meta(self, indices):
        ptrs, sizes = [], []
        for first in np.asarray(indices)[::self.page_size]:
            page = int(first) // self.page_size
            ptrs.append(self.k.ctypes.data + page * self.half_bytes)
            sizes.append(self.half_bytes)
            if not self.is_mla:
                ptrs.append(self.v.ctypes.data + page * self.half_bytes)
                sizes.append(self.half_bytes)
        return ptrs, sizes

    def page_bytes(self, page: int) -> bytes:
        return bytes(self.k[page]) + (b"" if self.is_mla else bytes(self.v[page]))

    def fill(self, page: int, data) -> None:
        data = np.frombuffer(bytes(data), dtype=np.uint8)
        self.k[page] = data[:self.half_bytes]
        if not self.is_mla:
            self.v[page] = data[self.half_bytes:]

    def clear(self, page: int) -> None:
        self.k[page] = 0
        if not self.is_mla:
            self.v[page] = 0
