"""The seed's security checklist as an AST scan of a repro (seed `001`, "Security review").

`scan(source) -> list[Finding]`: each finding names a checklist kind, the line and the code.
An empty list means nothing on the checklist was seen; it does not make code safe (the
sandbox does that), it decides whether a person must look first.

Kinds: `network`, `file`, `shell`, `dynamic-code`, `load`, `obfuscation`, `install`,
`environment`, `syntax`. Expected in distributed repros and not reported: `subprocess`
launching `torchrun` / `torch.distributed.run`, `mp.spawn`, and the standard PyTorch / CUDA /
NCCL / OpenMP environment variables.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from typing import Any, Iterator

_NETWORK_MODULES = ("requests", "urllib", "urllib3", "http.client", "httpx", "aiohttp", "socket", "ftplib",
                    "smtplib", "telnetlib", "paramiko", "websocket", "websockets")
_NETWORK_CALLS = ("urlopen", "urlretrieve", "torch.hub.load", "torch.hub.download_url_to_file",
                  "torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url", "wget.download")
_SHELL_CALLS = ("os.system", "os.popen", "os.exec*", "os.spawn*", "os.fork*", "pty.spawn", "subprocess.",
                "commands.getoutput", "asyncio.create_subprocess")
_DYNAMIC = ("eval", "exec", "compile", "__import__", "importlib.import_module", "builtins.eval", "builtins.exec")
_LOADS = ("torch.load", "torch.jit.load", "pickle.load", "pickle.loads", "cPickle.load", "dill.load",
          "joblib.load", "numpy.load", "marshal.loads", "shelve.open")
_SAVES = ("torch.save", "torch.jit.save", "pickle.dump", "dill.dump", "joblib.dump", "numpy.save")
_DECODES = ("base64.", "codecs.decode", "bytes.fromhex", "zlib.decompress", "binascii.", "marshal.loads",
            "lzma.decompress", "bz2.decompress", "gzip.decompress")
_FILE_CALLS = ("os.remove", "os.unlink", "os.rmdir", "os.removedirs", "os.rename", "os.replace", "os.chmod",
               "os.chown", "os.symlink", "os.link", "os.truncate", "shutil.")
_ENV_WRITES = ("os.putenv", "os.unsetenv", "os.environ.update", "os.environ.setdefault", "os.environ.pop",
               "os.environ.clear", "os.environ.popitem")
_INSTALL = re.compile(r"\b(?:pip3?|conda|mamba|apt(?:-get)?|yum|brew|uv)\s+(?:-\S+\s+)*install\b|\bpip\.main\b")
_DOWNLOAD_TOOLS = re.compile(r"\b(?:curl|wget)\s")
_URL = re.compile(r"\b(?:https?|ftp)://", re.I)
_DISTRIBUTED_LAUNCH = re.compile(r"torchrun|torch\.distributed\.(?:run|launch)")
_STANDARD_ENV = re.compile(
    r"^(?:MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|NODE_RANK|"
    r"CUDA_VISIBLE_DEVICES|CUDA_LAUNCH_BLOCKING|PYTHONHASHSEED|OMP_NUM_THREADS|MKL_NUM_THREADS|"
    r"(?:TORCH|PYTORCH|TORCHINDUCTOR|TORCHDYNAMO|NCCL|GLOO|CUBLAS|CUDNN|TRITON|KMP|OMP|MKL|XLA)_\w+)$"
)
_ENCODED = re.compile(r"^[A-Za-z0-9+/=_-]{120,}$")
_SNIPPET = 120
_PRINTS = ("print", "logging.info", "logging.warning", "warnings.warn")


@dataclass(frozen=True)
class Finding:
    kind: str
    line: int
    snippet: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def scan(source: str) -> list[Finding]:
    """Every checklist concern in `source`, ordered by line. Unparseable code is a finding."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        return [Finding("syntax", line, _line(source, line), f"does not parse: {exc.__class__.__name__}")]
    findings = {(f.kind, f.line, f.detail): f for f in _Scanner(source, tree).run()}
    return sorted(findings.values(), key=lambda f: (f.line, f.kind))


def _line(source: str, number: int) -> str:
    lines = source.splitlines()
    return lines[number - 1].strip()[:_SNIPPET] if 0 < number <= len(lines) else ""


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    """`name` is one of `patterns`, a member of one (`subprocess.run` of `subprocess`), or starts
    with a pattern ending in `.` or `*` (`base64.` matches every base64 function)."""
    return bool(name) and any(
        name.startswith(p.rstrip("*")) if p.endswith((".", "*")) else name == p or name.startswith(p + ".")
        for p in patterns
    )


class _Scanner:
    def __init__(self, source: str, tree: ast.Module) -> None:
        self.source, self.tree = source, tree
        self.aliases: dict[str, str] = {}
        self.saved: set[str] = set()

    def finding(self, kind: str, node: ast.AST, detail: str) -> Finding:
        return Finding(kind, getattr(node, "lineno", 1), _line(self.source, getattr(node, "lineno", 1)), detail)

    def run(self) -> Iterator[Finding]:
        self._collect_aliases_and_saves()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield from self._imports(node)
            elif isinstance(node, ast.Call):
                yield from self._call(node)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                yield from self._environ_store(node)
            elif isinstance(node, ast.Constant):
                yield from self._constant(node)
            elif isinstance(node, ast.JoinedStr):  # f"pip {verb} x": the literal parts joined
                yield from self._text(" ".join(v.value for v in node.values if isinstance(v, ast.Constant)
                                               and isinstance(v.value, str)), node)

    def _collect_aliases_and_saves(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:  # `import a.b` binds `a`; `import a.b as c` binds `c` to a.b
                    bound = alias.asname or alias.name.split(".")[0]
                    self.aliases[bound] = alias.name if alias.asname else bound
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        self.aliases.setdefault("np", "numpy")
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and _matches(self.name(node.func), _SAVES) and len(node.args) >= 2:
                self.saved.add(ast.dump(node.args[1]))

    def name(self, node: ast.AST) -> str:
        """The dotted name a call resolves to through the file's imports (`sp.run` -> `subprocess.run`)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return ""
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def _imports(self, node: ast.Import | ast.ImportFrom) -> Iterator[Finding]:
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for module in modules:
            if _matches(module, _NETWORK_MODULES):
                yield self.finding("network", node, f"imports {module}")
            if module in ("pip", "conda") or module.startswith("pip."):
                yield self.finding("install", node, f"imports {module}")

    def _call(self, node: ast.Call) -> Iterator[Finding]:
        name = self.name(node.func)
        if _matches(name, _NETWORK_CALLS) or name.rpartition(".")[2] in ("urlopen", "urlretrieve", "from_pretrained"):
            yield self.finding("network", node, f"{name}() downloads")
        elif _matches(name, _SHELL_CALLS):
            if not _DISTRIBUTED_LAUNCH.search(ast.unparse(node)):
                yield self.finding("shell", node, f"{name}() runs a command")
        elif name in _DYNAMIC:
            yield self.finding("dynamic-code", node, f"{name}() runs code built at run time")
        elif _matches(name, _LOADS):
            yield from self._load(node, name)
        elif _matches(name, _DECODES):
            yield self.finding("obfuscation", node, f"{name}() decodes data")
        elif _matches(name, _FILE_CALLS):
            yield from self._file_call(node, name)
        elif name in ("open", "io.open", "builtins.open"):
            yield from self._open(node)
        elif _matches(name, _ENV_WRITES):
            yield from self._environ_call(node, name)
        elif name not in _PRINTS and any(_URL.match(_literal(a) or "") for a in node.args):
            yield self.finding("network", node, f"{name or 'a call'}() on a URL")
        elif getattr(node.func, "attr", "") == "join" and any(
                isinstance(n, ast.Name) and n.id == "chr" for arg in node.args for n in ast.walk(arg)):
            yield self.finding("obfuscation", node, "builds a string from chr() codes")

    def _load(self, node: ast.Call, name: str) -> Iterator[Finding]:
        safe = any(k.arg == "weights_only" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in node.keywords)
        target = node.args[0] if node.args else None
        if safe or (target is not None and ast.dump(target) in self.saved):
            return
        if name.endswith("loads"):
            yield self.finding("load", node, f"{name}() unpickles bytes from an unknown source")
        else:
            yield self.finding("load", node, f"{name}() of a file the repro did not create")

    def _file_call(self, node: ast.Call, name: str) -> Iterator[Finding]:
        path = _literal(node.args[0]) if node.args else None
        if path is None or not _inside_tmp(path):
            yield self.finding("file", node, f"{name}() on {path!r}" if path else f"{name}() on a computed path")

    def _open(self, node: ast.Call) -> Iterator[Finding]:
        path = _literal(node.args[0]) if node.args else None
        mode = _literal(node.args[1]) if len(node.args) > 1 else next(
            (_literal(k.value) for k in node.keywords if k.arg == "mode"), "r")
        if path is not None and (path.startswith(("/", "~", "..")) and not _inside_tmp(path)):
            verb = "writes" if set(mode or "r") & set("wax+") else "reads"
            yield self.finding("file", node, f"open() {verb} {path!r} outside /tmp")

    def _environ_call(self, node: ast.Call, name: str) -> Iterator[Finding]:
        keys = [k.arg for k in node.keywords if k.arg] + [_literal(a) for a in node.args[:1]]
        if name.endswith(("update", "clear", "popitem")) and not node.keywords and node.args:
            keys = [_literal(k) for k in getattr(node.args[0], "keys", [None])]
        bad = [k for k in keys if not (k and _STANDARD_ENV.match(k))] or ([] if keys else [None])
        for key in bad:
            yield self.finding("environment", node, f"{name}() changes {key or 'the environment'}")

    def _environ_store(self, node: ast.Assign | ast.AugAssign | ast.Delete) -> Iterator[Finding]:
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript) and self.name(target.value) == "os.environ":
                key = _literal(target.slice)
                if not (key and _STANDARD_ENV.match(key)):
                    yield self.finding("environment", node, f"sets os.environ[{key or '...'!r}]")

    def _constant(self, node: ast.Constant) -> Iterator[Finding]:
        if isinstance(node.value, bytes) and len(node.value) >= 64 and not node.value.isascii():
            yield self.finding("obfuscation", node, f"a {len(node.value)}-byte binary literal")
        elif isinstance(node.value, str):
            yield from self._text(node.value, node)
            segment = ast.get_source_segment(self.source, node) or ""
            if segment.count("\\x") + segment.count("\\u") >= 16:
                yield self.finding("obfuscation", node, "a string of escaped characters")

    def _text(self, text: str, node: ast.AST) -> Iterator[Finding]:
        if _INSTALL.search(text):
            yield self.finding("install", node, "installs packages")
        if _DOWNLOAD_TOOLS.search(text):
            yield self.finding("network", node, "runs curl/wget")
        if _ENCODED.match(text.strip()):
            yield self.finding("obfuscation", node, f"a {len(text)}-character encoded-looking string")


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _inside_tmp(path: str) -> bool:
    if not path.startswith(("/", "~")):
        return ".." not in path.split("/")  # relative: the sandbox's private /tmp working dir
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return len(parts) >= 1 and parts[0] == "tmp" and ".." not in parts
