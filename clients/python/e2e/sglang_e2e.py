"""Run by run_lmcache_e2e.sh with sglang installed: SGLang's storage backend factory builds the OrbitKV backend
(dynamic backend), and pages set through its basic API read back bit-equal. The zero-copy page API needs SGLang's
host KV pool (a GPU model runner) and is not exercised here. Never run on the machines that wrote it."""

import sys

import torch
from sglang.srt.mem_cache.hicache_storage import HiCacheStorageConfig
from sglang.srt.mem_cache.storage.backend_factory import StorageBackendFactory

URL = sys.argv[1]


def main() -> int:
    extra = {"backend_name": "orbitkv", "module_path": "orbitkv.sglang", "class_name": "OrbitKVHiCacheStorage",
             "url": URL}
    config = HiCacheStorageConfig(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, is_mla_model=False,
                                  is_page_first_layout=True, model_name="Qwen/Qwen2.5-7B", extra_config=extra)
    backend = StorageBackendFactory.create_backend("dynamic", config, None)
    if type(backend).__name__ != "OrbitKVHiCacheStorage":
        raise SystemExit(f"the factory built {type(backend).__name__}")
    pages = [torch.randint(0, 255, (3584 * 1024,), dtype=torch.uint8) for _ in range(8)]  # 3.5 MiB pages
    keys = [f"{i:064x}" for i in range(8)]
    if not backend.batch_set(keys, pages):
        raise SystemExit("batch_set failed")
    if backend.batch_exists(keys) != 8:
        raise SystemExit("batch_exists did not count 8 pages")
    targets = [torch.zeros_like(p) for p in pages]
    got = backend.batch_get(keys, targets)
    if any(g is None for g in got) or not all(torch.equal(p, t) for p, t in zip(pages, targets)):
        raise SystemExit("pages did not read back bit-equal")
    print("8 x 3.5 MiB pages bit-equal through SGLang's storage backend factory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
