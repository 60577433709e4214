"""The shape of the `watcher` package, read from its source with `ast`: imports form no
cycle, few modules sit directly in `watcher/`, no module is long, and no module keeps
state at module level that its functions change: a mutated container, an instance whose
attributes are counted up (`STATS.x += 1`), a `global` rebound, or a `functools` cache
of a function that is not on the allow-list of pure ones (a run's caches and counters
belong to its session, `watcher.judge.session`).

Each check prints its offenders, so a failure says what to split or move. The checks are
first shown to find what they look for in a small package written to tmp_path.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "watcher"
TOP_LEVEL_LIMIT = 15
LINE_LIMIT = 600

# Functions a `functools.cache`/`lru_cache` may memoize: pure, their answer a function of
# their arguments alone (no run's data in them, nothing that changes while the process
# lives), so one answer per process is right and nothing needs clearing between runs.
PURE_CACHED = {
    "watcher.parse.languages.grammar": "loads a tree-sitter grammar by name",
    "watcher.parse.syntax.comment_kinds": "a grammar's comment node kinds",
    "watcher.parse.words._whole_word": "compiles the regex of a word",
    "watcher.locate.definitions._kinds_query": "compiles a grammar's query of its kinds",
    "watcher.locate.definitions._kind_query": "compiles a grammar's query of one kind",
    "watcher.locate.probes._gap": "compiles a language's whitespace-and-comments regex",
    "watcher.history.follow._bordered": "whether a word can overlap itself",
    "watcher.inputs.rules._versions": "the installed grammar packages' versions",
    "watcher.inputs.rules._query": "compiles a query text for a language",
    "watcher.mirror.versions.key": "a tag name's place in release order",
}
# Module-level state functions may change, and why it belongs to the process.
PROCESS_STATE = {
    # Every secret the process has seen (a token, a URL's password) stays masked in all
    # it prints from then on, a daemon's later runs and errors raised after a run
    # included: forgetting one at the end of a run would be a leak. Bounded by config.
    "watcher.redact._secrets": "secrets masked in all the process prints",
    # The state locks this thread holds, counted so that a run may take its lock again
    # (re-entrant): a lock is held by the process, whatever run it serves.
    "watcher.state.store._HELD": "state locks held by this thread",
}
CACHES = {"cache", "lru_cache"}

MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque"}
MUTATING_METHODS = {
    "append",
    "add",
    "update",
    "setdefault",
    "clear",
    "pop",
    "popitem",
    "extend",
    "insert",
    "remove",
    "discard",
    "move_to_end",
    "appendleft",
}


@dataclass(frozen=True)
class Module:
    name: str  # watcher.history.walk
    path: Path
    tree: ast.Module
    is_package: bool  # an __init__.py

    @property
    def package(self) -> str:
        """The package a relative import in this module starts from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def modules(root: Path = PACKAGE) -> dict[str, Module]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found[name] = Module(name, path, tree, is_package)
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in `node`, at any depth, except under `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child.test):
            for other in child.orelse:
                yield from _imports_in(other)
            continue
        yield from _imports_in(child)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def imported(module: Module, known: dict[str, Module]) -> set[str]:
    """The watcher modules `module` imports: `from watcher.pkg import mod` imports
    `watcher.pkg.mod` when that is a module, else `watcher.pkg`."""
    names: set[str] = set()
    for node in _imports(module.tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = module.package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            full = f"{base}.{alias.name}"
            names.add(full if full in known else base)
    found = set()
    for name in names:
        while name and name not in known:  # `import watcher.a.b.c` where c is a name
            name = name.rpartition(".")[0]
        if name and name != module.name:
            found.add(name)
    return found


def import_graph(known: dict[str, Module]) -> dict[str, set[str]]:
    return {name: imported(module, known) for name, module in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each group of modules that import each other (a strongly connected component of
    more than one module, by Tarjan), named by a shortest cycle through it and its members."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [
        " -> ".join(_a_cycle(graph, component)) + f" (together: {', '.join(component)})"
        for component in sorted(components)
    ]


def _a_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest cycle through the component's first module, as a path back to it."""
    start = component[0]
    members = set(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ == start:
                    return [*paths[node], start]
                if succ not in paths:
                    paths[succ] = [*paths[node], succ]
                    following.append(succ)
        frontier = following
    return component


def top_level(root: Path = PACKAGE) -> list[str]:
    return sorted(path.name for path in root.glob("*.py"))


def long_modules(known: dict[str, Module], limit: int = LINE_LIMIT) -> list[str]:
    lengths = {m.name: len(m.path.read_text(encoding="utf-8").splitlines()) for m in known.values()}
    return [f"{name}: {lines} lines" for name, lines in sorted(lengths.items()) if lines > limit]


def _mutable(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name in MUTABLE_CALLS
    return False


def _module_names(tree: ast.Module, *, containers: bool) -> dict[str, int]:
    """Names bound at module level (to a mutable container only, with `containers`):
    name -> line."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if containers and not _mutable(value):
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                found[target.id] = node.lineno
    return found


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _locals(function: ast.AST) -> set[str]:
    """The names a function binds itself (its parameters too): they shadow the module's."""
    bound = {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = function.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        bound |= {a.arg for a in every}
    return bound


def _mutations(
    function: ast.AST, containers: set[str], names: set[str]
) -> Iterator[tuple[str, int, str]]:
    """(name, line, how) for each place in `function` that changes module-level state:
    a container (`containers`) changed in place, an attribute of any module-level name
    (`names`) assigned or counted up or its value changed in place, a name rebound with
    `global`. A name the function binds locally shadows the module's."""
    local = _locals(function)
    for node in ast.walk(function):
        if isinstance(node, ast.Global):
            for name in node.names:
                yield name, node.lineno, "global"
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                name = (
                    _root_name(target)
                    if isinstance(target, ast.Subscript | ast.Attribute)
                    else None
                )
                if name is None or name in local:
                    continue
                if isinstance(target, ast.Attribute) and name in names:
                    yield name, node.lineno, f"attribute .{target.attr} set"
                elif isinstance(target, ast.Subscript) and (
                    name in containers
                    or (name in names and isinstance(target.value, ast.Attribute))
                ):
                    yield name, node.lineno, "item assignment"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATING_METHODS
        ):
            receiver = node.func.value
            name = _root_name(receiver)
            if name is None or name in local:
                continue
            if name in containers or (name in names and isinstance(receiver, ast.Attribute)):
                yield name, node.lineno, f".{node.func.attr}()"


def _cached(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a `functools.cache` or `lru_cache` (bare, called or imported) wraps it."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in CACHES:
            return True
    return False


def mutable_caches(
    known: dict[str, Module],
    pure: dict[str, str] = PURE_CACHED,
    allowed: dict[str, str] = PROCESS_STATE,
) -> list[str]:
    """Each piece of module-level state a function changes, and each cached function not
    known to be pure: `module.name (line N): how at line M`."""
    found = []
    for name, module in sorted(known.items()):
        containers = _module_names(module.tree, containers=True)
        names = _module_names(module.tree, containers=False)
        functions = [
            node
            for node in ast.walk(module.tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        ]
        seen = set()
        for function in functions:
            for target, line, how in _mutations(function, set(containers), set(names)):
                if target not in seen and f"{name}.{target}" not in allowed:
                    seen.add(target)
                    bound = names.get(target)
                    where = f" (line {bound})" if bound else ""
                    found.append(f"{name}.{target}{where}: {how} at line {line}")
        for function in functions:
            if isinstance(function, ast.Lambda) or not _cached(function):
                continue
            if f"{name}.{function.name}" not in pure:
                found.append(
                    f"{name}.{function.name} (line {function.lineno}): a functools cache "
                    "of a function not listed as pure"
                )
    return found


@pytest.fixture(scope="module")
def package() -> dict[str, Module]:
    """The watcher package, parsed once for all the checks."""
    return modules()


def test_imports_form_no_cycle(package: dict[str, Module]) -> None:
    found = cycles(import_graph(package))
    for cycle in found:
        print("import cycle:", cycle)
    assert found == []


def test_few_modules_sit_directly_in_the_package() -> None:
    found = top_level()
    print(f"{len(found)} modules directly in watcher/ (at most {TOP_LEVEL_LIMIT}):", *found)
    assert len(found) <= TOP_LEVEL_LIMIT


def test_no_module_is_longer_than_the_limit(package: dict[str, Module]) -> None:
    found = long_modules(package)
    for line in found:
        print("too long:", line)
    assert found == []


def test_no_module_keeps_a_mutable_cache(package: dict[str, Module]) -> None:
    found = mutable_caches(package)
    for line in found:
        print("module-level state changed by a function:", line)
    assert found == []


# --- the checks find what they look for -------------------------------------------------


def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "pkg"


def test_the_checks_find_cycles_long_modules_and_mutated_containers(tmp_path: Path) -> None:
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\nfrom .sub.c import helper\n",
            "b.py": """\
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from pkg import a  # for annotations only: no cycle
                """,
            "sub/__init__.py": "",
            "sub/c.py": """\
                def late():
                    import pkg.sub.d.thing  # a name inside a module counts as that module

                helper = 1
                """,
            "sub/d.py": "from ..sub import c\nthing = 2\n",
            "long.py": "x = 1\n" * (LINE_LIMIT + 1),
            "caches.py": """\
                from collections import defaultdict

                TABLE = {"a": 1}  # read only: fine
                _SEEN = set()
                _BY = defaultdict(list)
                _COUNTS: dict[str, int] = {}
                _HELD = []

                def remember(key):
                    _SEEN.add(key)
                    _BY[key].append(1)
                    _COUNTS[key] = TABLE.get(key, 0)

                def reset():
                    global _HELD
                    _HELD = []

                def shadowed():
                    TABLE = {}
                    TABLE["b"] = 2

                def parameter(TABLE):
                    TABLE["c"] = 3
                """,
            "sub/counters.py": """\
                import functools
                from functools import lru_cache

                class Stats:
                    def __init__(self):
                        self.hits = 0
                        self.seen = []

                STATS = Stats()
                LIMIT = 3  # read only: fine
                log = object()

                def count(blob):
                    STATS.hits += 1
                    STATS.seen.append(blob)

                def own(stats):
                    stats.hits += 1  # a counter passed in: fine
                    self = Stats()
                    self.seen.append(blob)

                def read():
                    return STATS.hits + LIMIT

                @functools.cache
                def grammar(name):
                    return name

                @lru_cache(maxsize=8)
                def per_run(item):
                    return item

                @functools.lru_cache
                def also(item):
                    return item

                def later():
                    global LIMIT
                    LIMIT = 4
                """,
        },
    )
    known = modules(package)
    graph = import_graph(known)
    assert graph["pkg.a"] == {"pkg.b", "pkg.sub.c"}
    assert graph["pkg.b"] == set()
    assert graph["pkg.sub.c"] == {"pkg.sub.d"}
    assert graph["pkg.sub.d"] == {"pkg.sub.c"}
    assert cycles(graph) == ["pkg.sub.c -> pkg.sub.d -> pkg.sub.c (together: pkg.sub.c, pkg.sub.d)"]
    assert long_modules(known) == [f"pkg.long: {LINE_LIMIT + 1} lines"]
    assert top_level(package) == ["__init__.py", "a.py", "b.py", "caches.py", "long.py"]
    pure = {"pkg.sub.counters.grammar": "returns its argument"}
    assert sorted(line.split(" (")[0].split(":")[0] for line in mutable_caches(known, pure)) == [
        "pkg.caches._BY",
        "pkg.caches._COUNTS",
        "pkg.caches._HELD",
        "pkg.caches._SEEN",
        "pkg.sub.counters.LIMIT",
        "pkg.sub.counters.STATS",
        "pkg.sub.counters.also",
        "pkg.sub.counters.per_run",
    ]
    allowed = {"pkg.caches._SEEN": "kept on purpose"}
    assert "pkg.caches._SEEN" not in "".join(mutable_caches(known, pure, allowed))
