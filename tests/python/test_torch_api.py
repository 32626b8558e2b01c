# SPDX-License-Identifier: BSD-3-Clause
"""Which torch.distributed registration the sdr backend picks (tests layer,
unit): torch 2.x (a c10d Backend class and register_backend with devices=)
-> registered for the cpu and cuda devices; torch 1.13 -> without devices=;
a ProcessGroup subclass in both (torch 2.x binds Python overrides for
ProcessGroup only). Checked against stand-ins of both, then against the
torch this interpreter has. Skips (77) without torch."""
import sys

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIP: torch is not importable: {e}")
    sys.exit(77)
import sdr.torch as st


class C10d2:
    class Backend:
        pass

    class ProcessGroup:
        pass


class C10d1:
    class ProcessGroup:
        pass


def register_2x(cls, name, func, extended_api=False, devices=None):
    pass


def register_113(cls, name, func, extended_api=False):
    pass


assert st._select_api(C10d2, register_2x) == ("2.x", C10d2.ProcessGroup,
                                              {"devices": ["cpu", "cuda"]})
assert st._select_api(C10d2, register_113) == ("1.13", C10d2.ProcessGroup, {})
assert st._select_api(C10d1, register_2x) == ("1.13", C10d1.ProcessGroup, {})
assert st._select_api(C10d1, register_113) == ("1.13", C10d1.ProcessGroup, {})
v = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
want = "2.x" if v >= (2, 0) else "1.13"
assert st.API == want, f"torch {torch.__version__}: API {st.API}, want {want}"
assert issubclass(st.ProcessGroupSDR, st._Base)
import torch.distributed as dist  # noqa: E402
assert "SDR" in dist.Backend._plugins, "backend not registered"
# no CUDA here (CI): the device path is off; a CUDA tensor's message says why
if not torch.cuda.is_available():
    assert st._device_hooks() is None
print(f"torch {torch.__version__}: registration {st.API} ({st._Base.__name__}, "
      f"{st._REGISTER_KW or 'no devices='}); selection for both torch lines correct")
